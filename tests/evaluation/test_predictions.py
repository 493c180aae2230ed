"""``predictions.jsonl`` resumes after a crash: a line cut off mid-write is dropped, never appended to."""

from __future__ import annotations

import json
from pathlib import Path

from deepcritical.evaluation.predictions import read_predictions, resume


def lines(*ids: str) -> str:
    return "".join(json.dumps({"id": item, "prediction": "yes"}) + "\n" for item in ids)


def test_a_last_line_cut_off_mid_write_is_dropped_and_its_item_runs_again(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text(lines("a", "b") + lines("c")[:12], encoding="utf-8")
    assert resume(path) == {"a", "b"}
    assert path.read_text(encoding="utf-8") == lines("a", "b")
    with path.open("a", encoding="utf-8") as sink:  # what the next prediction does
        sink.write(lines("c"))
    assert [record["id"] for record in read_predictions(path)] == ["a", "b", "c"]


def test_a_partial_line_a_later_prediction_was_glued_onto_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_text(lines("a") + lines("b")[:9] + lines("c"), encoding="utf-8")
    assert resume(path) == {"a"}
    assert path.read_text(encoding="utf-8") == lines("a")


def test_a_whole_file_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    text = '{"id": 1,  "prediction": "no"}\n\n' + lines("b")
    path.write_text(text, encoding="utf-8")
    assert resume(path) == {"1", "b"}
    assert path.read_text(encoding="utf-8") == text
    assert resume(tmp_path / "absent.jsonl") == set()
