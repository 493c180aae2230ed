"""Vectors cached by content hash: a second service (another evaluation's --out folder, a later run in
another process) embeds none of the texts the first embedded, a service whose texts are all cached never
loads the model, and vectors of another encoder are never returned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from structlog.testing import capture_logs

from deepcritical.evidence import EmbeddingService, embedding_models, vector_cache
from deepcritical.evidence.embedding_models import LoadedModel, ModelSource

TEXTS = ["metformin and cognitive decline", "statins in sepsis", "aspirin after a stroke"]


def counting(service: EmbeddingService, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    encoded: list[str] = []
    original = service.encoder.encode

    def spy(texts: list[str], *args: Any) -> Any:
        encoded.extend(texts)
        return original(texts, *args)

    monkeypatch.setattr(service.encoder, "encode", spy)
    return encoded


@pytest.mark.model
def test_a_second_service_reads_every_vector_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "vectors.sqlite3"
    first = EmbeddingService(vector_cache=path)
    first.embed(TEXTS[:2])
    expected = EmbeddingService().embed(TEXTS)

    second = EmbeddingService(vector_cache=path)  # a new process: nothing in memory
    encoded = counting(second, monkeypatch)
    np.testing.assert_allclose(second.embed(TEXTS), expected, atol=1e-6)
    assert encoded == [TEXTS[2]]  # only the text no one embedded before
    assert EmbeddingService(vector_cache=path).knows(TEXTS)


@pytest.mark.model
def test_a_service_whose_texts_are_all_cached_never_loads_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "vectors.sqlite3"
    expected = EmbeddingService(vector_cache=path).embed(TEXTS)
    loads: list[str] = []

    def refuse(source: ModelSource, backend: str, cache_dir: Path) -> LoadedModel:
        loads.append(source.name)
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(embedding_models, "_MODELS", {})
    monkeypatch.setattr(embedding_models, "_load_uncached", refuse)
    later = EmbeddingService(vector_cache=path)
    assert later.knows(TEXTS[1:])
    assert not later.knows(["a text never embedded"])
    np.testing.assert_allclose(later.embed(list(reversed(TEXTS))), expected[::-1], atol=1e-6)
    assert loads == []


def test_vectors_of_another_encoder_are_not_returned(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite3"
    vector_cache.VectorCache(path, "model-a|onnx").put(["statins"], np.ones((1, 4), dtype=np.float32))
    assert vector_cache.VectorCache(path, "model-b|onnx").get(["statins"]) == {}
    [vector] = vector_cache.VectorCache(path, "model-a|onnx").get(["statins"]).values()
    np.testing.assert_array_equal(vector, np.ones(4, dtype=np.float32))


def test_the_identity_names_the_backend_without_loading_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding_models, "_MODELS", {})
    assert EmbeddingService(backend="onnx").identity != EmbeddingService(backend="onnx-int8").identity
    assert embedding_models._MODELS == {}


def test_vectors_an_earlier_version_computed_otherwise_are_not_returned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same backend name computing other numbers (``onnx`` was the int8 graph before NUMBERS_VERSION 2)."""
    now = EmbeddingService(backend="onnx").identity
    monkeypatch.setattr(embedding_models, "NUMBERS_VERSION", "1")
    assert EmbeddingService(backend="onnx").identity != now


@pytest.mark.model
def test_an_unusable_cache_costs_only_its_speed(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    service = EmbeddingService(vector_cache=blocker / "vectors.sqlite3")
    with capture_logs() as logs:
        assert service.embed(TEXTS).shape == (3, 384)
        assert service.embed(["another text", "and one more"]).shape == (2, 384)
    # Said once, not at every embed.
    assert [entry["event"] for entry in logs if entry["log_level"] == "warning"] == ["vector cache not written"]


async def test_a_question_asked_before_does_not_preload_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deepcritical.config import load_settings
    from deepcritical.evidence import EvidenceStore
    from deepcritical.evidence.resources import Resources
    from deepcritical.run import setup

    monkeypatch.setenv("DEEPCRITICAL_MODEL_CACHE", str(tmp_path / "model-cache"))
    settings = load_settings(demo_mode=True, home=tmp_path / "home")
    preloads: list[bool] = []

    async def opened(
        cls: type, settings: object, embeddings: EmbeddingService, run_id: str, *, preload: bool, connect: object
    ) -> Any:
        preloads.append(preload)
        return embeddings

    monkeypatch.setattr(EvidenceStore, "open", classmethod(opened))
    open_store = setup.store_opener(Resources(settings))  # one process: one embedding service for every run
    embeddings = await open_store(settings, "run-1", "Do statins help?")
    vector_cache.VectorCache(vector_cache.default_path(), embeddings.identity).put(
        ["Do statins help?"], np.ones((1, 384), dtype=np.float32)
    )
    await open_store(settings, "run-2", "Do statins help?")
    await open_store(settings, "run-3", "Do statins help in sepsis?")
    assert preloads == [True, False, True]
