"""Every weights file the package ships comes with its provenance (``training/provenance.py``): a sidecar naming
the command, commit, seed, data sha256 and figures with their protocol, for exactly these weights; a model card
generated from that sidecar alone; the figures inside the weights file and the README's quotes of them agree with
the sidecar. So the README, the metadata and the weights cannot disagree again."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import struct
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from deepcritical.appraisal import stance
from deepcritical.appraisal.stance import WEIGHTS_FILE as STANCE_WEIGHTS
from deepcritical.reading.number_tagger import WEIGHTS as NUMBER_TAGGER_WEIGHTS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "deepcritical"
# What a file of learned weights may be called; the stance model's JSON is named by its module.
WEIGHT_SUFFIXES = (".safetensors", ".gz", ".onnx", ".npz", ".pt", ".bin", ".pkl")


def training_module(name: str, file: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "training" / file)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


provenance = training_module("training_provenance", "provenance.py")
ARTEFACTS = provenance.ARTEFACTS


def sidecar_of(item: Any) -> dict[str, Any]:
    return dict(json.loads(item.sidecar.read_text(encoding="utf-8")))


def test_every_shipped_weights_file_has_a_training_entry() -> None:
    shipped = {path for suffix in WEIGHT_SUFFIXES for path in PACKAGE.rglob(f"*{suffix}")}
    shipped |= set(PACKAGE.rglob(STANCE_WEIGHTS)) | set(PACKAGE.rglob(NUMBER_TAGGER_WEIGHTS.name))
    assert shipped == {item.weights for item in ARTEFACTS}
    assert all((ROOT / item.script).is_file() for item in ARTEFACTS)


@pytest.mark.parametrize("item", ARTEFACTS, ids=lambda item: item.name)
def test_the_sidecar_describes_these_weights(item: Any) -> None:
    sidecar = sidecar_of(item)
    assert set(provenance.REQUIRED) <= set(sidecar)
    assert sidecar["artefact"] == item.weights.relative_to(ROOT).as_posix()
    assert sidecar["weights_sha256"] == hashlib.sha256(item.weights.read_bytes()).hexdigest()
    assert sidecar["script"].split()[0] == item.script
    assert re.fullmatch(r"[0-9a-f]{40}", sidecar["commit"])
    assert isinstance(sidecar["seed"], int)
    assert sidecar["data_sha256"]
    assert all(re.fullmatch(r"[0-9a-f]{64}", digest) for digest in sidecar["data_sha256"].values())
    assert sidecar["reproduced"].startswith(("yes", "no"))
    assert sidecar["figures"]
    for figure in sidecar["figures"]:
        assert set(provenance.FIGURE_KEYS) <= set(figure)
        assert isinstance(figure["value"], int | float)
        assert figure["protocol"].strip()


@pytest.mark.parametrize("item", ARTEFACTS, ids=lambda item: item.name)
def test_the_model_card_is_the_sidecars(item: Any) -> None:
    assert item.card.read_text(encoding="utf-8") == provenance.card(sidecar_of(item))


@pytest.mark.parametrize("item", ARTEFACTS, ids=lambda item: item.name)
def test_the_figures_written_in_the_weights_are_the_sidecars(item: Any) -> None:
    """A safetensors header's ``validation_*`` figures (the fine-tuning scripts write them) are in the sidecar,
    named by their key, with the same value."""
    if item.weights.suffix != ".safetensors":
        pytest.skip("only safetensors files carry figures of their own")
    raw = item.weights.read_bytes()
    header = json.loads(raw[8 : 8 + struct.unpack("<Q", raw[:8])[0]])
    written = {key: float(value) for key, value in header["__metadata__"].items() if key.startswith("validation_")}
    assert written
    figures = sidecar_of(item)["figures"]
    stated = {key: figure["value"] for figure in figures for key in written if key in figure["measure"]}
    assert stated == written


# A sentence quoting a reader's figure: it names the readers or their data, and a measure.
ABOUT_A_READER = re.compile(r"Evidence Inference|result reader|linear reader|transformer")
A_MEASURE = re.compile(r"macro-F1|evidence first|accuracy|held-out figure")


def readme_figures() -> list[tuple[int, str]]:
    """Each figure the README gives for the result readers: a decimal in a sentence about them that names a
    measure, with its line number."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        for sentence in re.split(r"(?<=[.;])\s+(?=[A-Z(`])|\n\|", paragraph):
            if ABOUT_A_READER.search(sentence) and A_MEASURE.search(sentence):
                line = text[: text.index(sentence)].count("\n") + 1
                found += [(line, number) for number in re.findall(r"(?<![\d.])0\.\d{2,4}(?!\d)", sentence)]
    return found


def test_the_readme_quotes_the_reader_figures_the_sidecars_state() -> None:
    stated = [figure["value"] for item in ARTEFACTS for figure in sidecar_of(item)["figures"]]
    quoted = readme_figures()
    assert quoted  # the README states the readers' figures at all
    wrong = [
        (line, number)
        for line, number in quoted
        if not any(round(value, len(number) - 2) == float(number) for value in stated)
    ]
    assert not wrong, f"README figures that no sidecar states (line, figure): {wrong}"


# --- the stance model is fed the features it was fitted on ---

STANCE = provenance.artefact("verdict_model")


def test_the_stance_features_are_those_the_shipped_model_was_fitted_on() -> None:
    """The sidecar records the stance features of a few made-up items as they were when the weights were fitted
    (``training/verdict_model.py``'s ``PROBES``); today's ``stance.features`` must give the same. A change to a cue,
    the splitter, the sections or the result reader that moves them is a train/serve skew: refit and commit the
    weights with the change (``training/verdict_model.py --write``)."""
    probe = sidecar_of(STANCE)["feature_probe"]
    assert probe
    for case in probe:
        now = stance.features(case["question"], case["text"])
        changed = [
            f"{name}: fitted on {was:.6g}, now {value:.6g}"
            for name, was, value in zip(stance.FEATURE_NAMES, case["features"], now.tolist(), strict=True)
            if not np.isclose(value, was, rtol=1e-6, atol=1e-9)
        ]
        assert not changed, f"the stance features changed since {STANCE_WEIGHTS} was fitted; refit it: {changed}"


def test_the_stance_features_are_defined_as_when_the_shipped_model_was_fitted() -> None:
    """The sidecar records the sha256 of the stance features' definition (names and patterns) at the fit: an edit
    to a pattern that the probe items happen not to exercise is caught here."""
    assert sidecar_of(STANCE)["feature_definition_sha256"] == stance.feature_definition_sha256(), (
        f"the stance features' patterns changed since {STANCE_WEIGHTS} was fitted: refit it "
        "(training/verdict_model.py --write) and commit the weights with the change"
    )


def test_the_stance_probe_fires_every_feature() -> None:
    """Each feature is non-zero for some probe item, so that a change to any of them moves the probe (the bias
    term is 1 by definition)."""
    rows = np.asarray([case["features"] for case in sidecar_of(STANCE)["feature_probe"]])
    assert rows.shape[1] == len(stance.FEATURE_NAMES)
    silent = [name for name, column in zip(stance.FEATURE_NAMES, rows.T, strict=True) if not column.any()]
    assert not silent, f"features no probe item fires (add text to PROBES that does): {silent}"


def verdict_trainer() -> ModuleType:
    sys.path.insert(0, str(ROOT / "training"))  # the entry imports its neighbour ``provenance``
    try:
        return training_module("training_verdict_model", "verdict_model.py")
    finally:
        sys.path.remove(str(ROOT / "training"))


@cache
def pubmedqa_rows(path: Path) -> tuple[np.ndarray, np.ndarray]:
    return verdict_trainer().load(path)  # type: ignore[no-any-return]


@pytest.mark.slow  # the features of 500 abstracts: about 5 s alone, 15 s under load; the probe tests stay fast
def test_the_shipped_stance_model_is_refitted_from_today_s_features(shared_data: Callable[[str], Path]) -> None:
    """What ``training/verdict_model.py --verify`` checks, in the suite: fitted again on PubMedQA's dev items with
    today's features, the model is the shipped one, to the entry's tolerance."""
    trainer = verdict_trainer()
    rows, labels = pubmedqa_rows(shared_data("pubmedqa") / "pqal_dev.json")
    fitted = trainer.fit(rows, labels, trainer.class_weight_of(trainer.CLASS_WEIGHT)).to_json()
    shipped = json.loads(STANCE.weights.read_text(encoding="utf-8"))
    gap = trainer.largest_difference(fitted, {key: shipped[key] for key in fitted})
    assert gap is not None
    assert gap <= trainer.TOLERANCE, f"{STANCE_WEIGHTS} is not the model today's features fit (by {gap:.3g}): refit"


@pytest.mark.slow
def test_the_stance_model_keeps_its_cross_validated_figures(shared_data: Callable[[str], Path]) -> None:
    """The stance model alone, 5-fold cross-validated by item on PubMedQA's dev items: accuracy and macro-F1 at
    the sidecar's figures less 0.02, and it answers yes no more often than the sidecar says (plus 10 items)."""
    trainer = verdict_trainer()
    rows, labels = pubmedqa_rows(shared_data("pubmedqa") / "pqal_dev.json")
    predicted = trainer.cross_validate(rows, labels, trainer.class_weight_of(trainer.CLASS_WEIGHT))
    stated = {figure["measure"]: figure["value"] for figure in sidecar_of(STANCE)["figures"]}
    assert float(np.mean(predicted == labels)) >= stated["accuracy"] - 0.02
    macro = np.mean([f1(labels, predicted, answer) for answer in range(len(stance.STANCES))])
    assert macro >= stated["macro-F1"] - 0.02
    assert int(np.sum(predicted == 0)) <= stated["predicted yes"] + 10


def f1(gold: np.ndarray, predicted: np.ndarray, answer: int) -> float:
    hits = float(np.sum((gold == answer) & (predicted == answer)))
    return 2 * hits / (np.sum(gold == answer) + np.sum(predicted == answer)) if hits else 0.0
