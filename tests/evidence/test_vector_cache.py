"""Vectors cached by content hash: a second evaluation (another --out folder, another process) embeds
none of the texts the first embedded, and vectors of another encoder are never returned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from deepcritical.evidence import EmbeddingService, vector_cache

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
    first = EmbeddingService()
    identity = vector_cache.encoder_identity(first)
    cache = vector_cache.VectorCache(tmp_path / "vectors.sqlite3", identity)
    assert vector_cache.embed_through(cache, first, TEXTS[:2]) == 2
    expected = first.embed(TEXTS)

    second = EmbeddingService()  # a new evaluation: nothing in memory
    encoded = counting(second, monkeypatch)
    assert vector_cache.embed_through(vector_cache.VectorCache(cache.path, identity), second, TEXTS) == 1
    np.testing.assert_allclose(second.embed(TEXTS), expected, atol=1e-6)
    assert encoded == [TEXTS[2]]  # only the text no one embedded before


def test_vectors_of_another_encoder_are_not_returned(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite3"
    vector_cache.VectorCache(path, "model-a|onnx").put(["statins"], np.ones((1, 4), dtype=np.float32))
    assert vector_cache.VectorCache(path, "model-b|onnx").get(["statins"]) == {}
    [vector] = vector_cache.VectorCache(path, "model-a|onnx").get(["statins"]).values()
    np.testing.assert_array_equal(vector, np.ones(4, dtype=np.float32))


@pytest.mark.model
def test_an_unusable_cache_costs_only_its_speed(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    service = EmbeddingService()
    cache = vector_cache.VectorCache(blocker / "vectors.sqlite3", vector_cache.encoder_identity(service))
    assert vector_cache.embed_through(cache, service, TEXTS) == 3
    assert service.embed(TEXTS).shape == (3, 384)
