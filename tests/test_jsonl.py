"""The one JSON Lines reader: every bad line is named by its file and its number (blank lines counted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from deepcritical.errors import ConfigError
from deepcritical.jsonl import json_objects, jsonl_file


def test_objects_come_with_their_line_numbers_blank_lines_counted(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "a"}\n\n  \n{"_id": "b"}\n', encoding="utf-8")
    assert list(jsonl_file(corpus)) == [(1, {"_id": "a"}), (4, {"_id": "b"})]


@pytest.mark.parametrize(
    ("line", "problem"),
    [("{bad json", r"not JSON \(Expecting property name"), ('["a list"]', "not a JSON object")],
)
def test_a_bad_line_is_named_by_its_file_and_number(tmp_path: Path, line: str, problem: str) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "a"}\n' * 5 + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"^{corpus}, line 7: {problem}"):
        list(jsonl_file(corpus))


def test_lines_read_from_a_part_of_a_file_are_numbered_from_the_part_s_first_line() -> None:
    lines = [b'{"_id": "a"}', b'{"_id": "\xff"}']
    with pytest.raises(ConfigError, match=r"^corpus.jsonl, line 41: not UTF-8 text$"):
        list(json_objects(lines, "corpus.jsonl", first_line=40))


def test_a_missing_file_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing.jsonl: cannot read it \("):
        list(jsonl_file(tmp_path / "missing.jsonl"))
