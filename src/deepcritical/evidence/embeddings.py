"""Sentence embeddings for evidence: one model per process, batched, normalised, and window-aware.

Texts longer than the model's window (all-MiniLM-L6-v2 reads 256 word pieces) are cut deliberately:
the embedding text of a piece of evidence is its title followed by the start of its content, cut on a
word boundary so that it fits the window exactly (counted with the model's own tokenizer). Without
this the model would drop the tail mid-word, and which words survived would depend on the tokenizer.

Two backends compute the same vectors (``DEEPCRITICAL_EMBEDDING_BACKEND``):

- ``onnx`` (the default for BERT models such as all-MiniLM-L6-v2, ``onnx_encoder.py``): ONNX Runtime
  runs a float32 graph built from the model's own weights (``onnx_bert.py``): the float model's vectors
  (1e-5), alike on every CPU; the tokenizer is the ``tokenizers`` library. No torch: it starts in a
  fraction of a second. ``onnx-int8`` quantizes the weight matrices to 7 bits per channel: 1.7 to 2 times as
  fast, but its similarities are up to 0.07 from the float model's (``bench/embedding_cpu_paths.py``,
  phases/23), too far for de-duplication at 0.9 to merge the same pairs. The built graph is cached once
  per user (``default_cache_dir``), keyed by the weights and the ONNX Runtime version.
- ``torch``: sentence-transformers (an optional install, ``pip install 'deepcritical[torch]'``), for
  any model it can load; ``auto`` falls back to it for models the ONNX builder does not handle.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import structlog

from deepcritical.config import Settings
from deepcritical.errors import EmbeddingError
from deepcritical.evidence.embedding_models import (
    BACKENDS,
    CACHE_ENV_VAR,
    DEFAULT_MODEL_NAME,
    Encoder,
    LoadedModel,
    Vectors,
    backend_from_environment,
    check_directory,
    default_cache_dir,
    identity,
    load_model,
    resolve_model,
)
from deepcritical.evidence.vector_cache import VectorCache
from deepcritical.options import EmbeddingBackend

__all__ = [
    "CACHE_ENV_VAR",
    "DEFAULT_MODEL_NAME",
    "EmbeddingService",
    "Vectors",
    "backend_from_environment",
    "default_cache_dir",
    "passage_text",
    "resolve_model",
]

log = structlog.get_logger(__name__)

# How many computed vectors a service keeps by text (384 float32 each: about 15 MB).
RECENT_VECTORS = 10_000

_LAST_WORD = re.compile(r"\s+\S*$")


def passage_text(title: str, content: str) -> str:
    """The text a piece of evidence is embedded and keyword-indexed as: title first, then content."""
    return f"{title.strip()}\n{content.strip()}".strip()


class EmbeddingService:
    """Embeds texts with a sentence embedding model, loaded lazily and shared by the whole process.

    ``model`` is None for the bundled all-MiniLM-L6-v2, a local model directory, or a hub name (read
    from the local cache; see ``HF_HUB_OFFLINE``). ``backend`` is ``auto`` (ONNX Runtime, float32, when the
    model is a BERT model with mean pooling, else sentence-transformers), ``onnx``, ``onnx-int8`` or
    ``torch``; None reads ``DEEPCRITICAL_EMBEDDING_BACKEND``. ``cache_dir`` keeps built ONNX graphs
    (default ``default_cache_dir()``: once per user). Every call embeds its whole list in one backend
    call that runs in batches of ``batch_size`` (None: the backend's own: 8 for ONNX float32, 32 for torch; int8
    ONNX embeds one text per call); vectors are L2-normalised float32, so a dot product is the cosine.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        batch_size: int | None = None,
        backend: EmbeddingBackend | None = None,
        cache_dir: Path | None = None,
        vector_cache: Path | None = None,
    ) -> None:
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if backend is not None and backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        self._source = resolve_model(model)
        self._backend = backend or backend_from_environment()
        self._cache_dir = cache_dir
        self.batch_size = batch_size
        # Vectors already known by text (a document collection's stored vectors): not embedded again.
        self._known: dict[str, npt.NDArray[np.float32]] = {}
        # Vectors this service computed, by text, the most recent ``RECENT_VECTORS``: a run embeds nothing
        # twice (a dropped duplicate found again in a later round, a full-text passage kept in the library
        # and then added to the run).
        self._recent: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._recent_lock = threading.Lock()  # a run embeds from several threads at once
        self._loader: threading.Thread | None = None
        # Vectors kept across processes by text (``vector_cache.py``): read before the model is loaded, so
        # a run whose texts were all embedded before never loads it.
        self._stored = VectorCache(vector_cache, self.identity) if vector_cache is not None else None
        self._cache_warned = False

    def remember(self, texts: Sequence[str], vectors: Vectors) -> None:
        """Keep vectors computed earlier (e.g. stored with a collection) so that embedding the same texts
        again costs nothing. Only for vectors of this model."""
        self._known.update(zip(texts, vectors, strict=True))

    @classmethod
    def for_settings(cls, settings: Settings) -> EmbeddingService:
        """The configured model and backend; built graphs and computed vectors are cached once per user
        (``default_cache_dir``)."""
        from deepcritical.evidence.vector_cache import default_path

        return cls(settings.embedding_model, backend=settings.embedding_backend, vector_cache=default_path())

    @property
    def identity(self) -> str:
        """What decides this service's numbers (``embedding_models.identity``), without loading the model."""
        return identity(self._source, self._backend)

    def knows(self, texts: Sequence[str]) -> bool:
        """Whether every text's vector is known without the model (kept in memory or in the vector cache)."""
        texts = list(texts)
        missing = [text for text in texts if self._vector_of(text) is None]
        return not missing or len(self._read_stored(missing)) == len(missing)

    @property
    def model_name(self) -> str:
        return self._source.name

    def check_available(self) -> None:
        """Fail fast, without loading anything, when a configured model directory does not exist."""
        check_directory(self._source)

    @property
    def origin(self) -> str:
        return self._source.origin

    def _loaded(self) -> LoadedModel:
        return load_model(self._source, self._backend, self._cache_dir or default_cache_dir())

    def start_loading(self) -> None:
        """Load the model in a thread of its own, so that it is ready when the first text comes (a
        process's first run searches for a while before it embeds anything). The first ``embed`` waits
        for this load rather than starting another; a load that fails here fails again, with its
        message, at that first ``embed``."""

        def load() -> None:
            try:
                self._loaded()
            except Exception as error:  # reported by the first embed, which tries again
                log.debug("embedding model not preloaded", error=str(error))

        # Not a daemon: a process ending while ONNX Runtime is still building its session would be
        # aborted ("terminate called without an active exception"); the interpreter waits for it instead.
        self._loader = threading.Thread(target=load, name="embedding-model-load")
        self._loader.start()

    def finish_loading(self) -> None:
        """Wait for a load ``start_loading`` began (at once when none did): a run that ends before its
        first embed lets the load end with it, not after what the command prints last."""
        if self._loader is not None:
            self._loader.join()

    @property
    def dimension(self) -> int:
        return self._loaded().encoder.dimension

    @property
    def max_tokens(self) -> int:
        """The model's window in word pieces, including the special tokens."""
        return self._loaded().encoder.max_tokens

    @property
    def backend(self) -> str:
        """The backend in use once loaded: ``onnx`` (float32), ``onnx-int8`` or ``torch``."""
        return self._loaded().encoder.name

    @property
    def encoder(self) -> Any:
        """The shared backend object (for tests and benchmarks: its ``encode(texts, batch_size)``)."""
        return self._loaded().encoder

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text`` without the special tokens, as the model's tokenizer counts them."""
        loaded = self._loaded()
        with loaded.lock:
            return len(loaded.encoder.offsets([text])[0])

    def fit_to_window(self, texts: Sequence[str]) -> list[str]:
        """Each text, cut on a word boundary to the longest prefix the model reads in full.

        A prefix ending at whitespace tokenizes to a prefix of the whole text's word pieces, so the cut
        text fits exactly. A single "word" longer than the window (no whitespace to cut at) is cut at a
        word-piece boundary instead.
        """
        texts = _checked(texts)
        loaded = self._loaded()
        with loaded.lock:
            return _fit(loaded.encoder, texts)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Normalised embeddings, shape ``(len(texts), dimension)``. Empty or blank text is an error."""
        texts = _checked(texts)
        found = {text: vector for text in texts if (vector := self._vector_of(text)) is not None}
        missing = list(dict.fromkeys(text for text in texts if text not in found))
        if missing:
            found.update(self._read_stored(missing))
            missing = [text for text in missing if text not in found]
        if texts and not missing:
            return np.stack([found[text] for text in texts]).astype(np.float32)
        loaded = self._loaded()
        if not texts:
            return np.zeros((0, loaded.encoder.dimension), dtype=np.float32)
        computed = dict(zip(missing, self._encode(loaded, missing), strict=True))
        found.update(computed)
        self._keep(computed)
        if self._stored is not None:
            try:
                self._stored.put(list(computed), np.stack(list(computed.values())))
            except (sqlite3.Error, OSError) as error:  # a read-only cache: the texts are embedded again next time
                self._cache_failed("written", error)
        return np.stack([found[text] for text in texts]).astype(np.float32)

    def _keep(self, vectors: dict[str, Vectors]) -> None:
        with self._recent_lock:
            self._recent.update(vectors)
            while len(self._recent) > RECENT_VECTORS:
                self._recent.popitem(last=False)

    def _cache_failed(self, what: str, error: Exception) -> None:
        """Say once per service that the vector cache is unusable (it costs speed only), not at every embed."""
        if not self._cache_warned and self._stored is not None:
            self._cache_warned = True
            log.warning(f"vector cache not {what}", path=str(self._stored.path), error=str(error))

    def _read_stored(self, texts: list[str]) -> dict[str, Vectors]:
        """The vector cache's vectors of ``texts`` (kept in memory from then on); none when it is unreadable."""
        if self._stored is None:
            return {}
        try:
            found = self._stored.get(texts)
        except (sqlite3.Error, OSError) as error:
            self._cache_failed("read", error)
            return {}
        self._keep(found)
        return found

    def _vector_of(self, text: str) -> npt.NDArray[np.float32] | None:
        known = self._known.get(text)
        if known is not None:
            return known
        with self._recent_lock:
            recent = self._recent.get(text)
            if recent is not None:
                self._recent.move_to_end(text)
            return recent

    def _encode(self, loaded: LoadedModel, texts: list[str]) -> Vectors:
        with loaded.lock:
            return loaded.encoder.encode(_fit(loaded.encoder, texts), self.batch_size or loaded.encoder.batch_size)

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        """``embed`` off the event loop."""
        return await asyncio.to_thread(self.embed, texts)


def _fit(encoder: Encoder, texts: list[str]) -> list[str]:
    budget = encoder.max_tokens - encoder.special_tokens
    fitted = []
    cut_count = 0
    for text, offsets in zip(texts, encoder.offsets(texts), strict=True):
        if len(offsets) <= budget:
            fitted.append(text)
            continue
        cut_count += 1
        end = offsets[budget - 1][1]
        prefix = text[:end]
        if not text[end].isspace() and (word_start := _LAST_WORD.search(prefix)) is not None:
            prefix = prefix[: word_start.start()]
        fitted.append(prefix.rstrip())
    if cut_count:
        log.debug("texts cut to the model window", count=cut_count, window=encoder.max_tokens)
    return fitted


def _checked(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("pass a sequence of texts, not a single string")
    texts = list(texts)
    for position, text in enumerate(texts):
        if not isinstance(text, str) or not text.strip():
            raise EmbeddingError(
                f"cannot embed empty or whitespace-only text (item {position + 1} of {len(texts)}): "
                "every text needs at least one visible character"
            )
    return texts
