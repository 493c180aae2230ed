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
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from deepcritical.appraisal.stance import WEIGHTS_FILE as STANCE_WEIGHTS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "deepcritical"
# What a file of learned weights may be called; the stance model's JSON is named by its module.
WEIGHT_SUFFIXES = (".safetensors", ".gz", ".onnx", ".npz", ".pt", ".bin", ".pkl")


def provenance_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("training_provenance", ROOT / "training" / "provenance.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


provenance = provenance_module()
ARTEFACTS = provenance.ARTEFACTS


def sidecar_of(item: Any) -> dict[str, Any]:
    return dict(json.loads(item.sidecar.read_text(encoding="utf-8")))


def test_every_shipped_weights_file_has_a_training_entry() -> None:
    shipped = {path for suffix in WEIGHT_SUFFIXES for path in PACKAGE.rglob(f"*{suffix}")}
    shipped |= set(PACKAGE.rglob(STANCE_WEIGHTS))
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
