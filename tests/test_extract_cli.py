"""``deepcritical extract FILE --out OUT`` as a user runs it: JSON Lines in, JSON Lines or CSV out; a folder
of documents with one unreadable file; one line and exit 2 for each kind of bad input."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from helpers.commands import run_cli

pytestmark = pytest.mark.slow  # every test here runs the command in a child process

TEXTS = [
    {"id": "trial-1", "text": "Mortality was lower (HR 0.77, 95% CI 0.72-0.82; p < 0.001)."},
    {"id": 2, "text": "Response 79 % vs 59 %, p = 0.04; no other result."},
    {"id": "none", "text": "There were no significant differences between the groups."},
    {"id": "=cmd|' /C calc'!A0", "text": "The difference was −7.0 mm (95% CI −20.7 to +6.7)."},
]


def _env() -> dict[str, str]:
    # The code under test is this checkout's when the caller put its src on PYTHONPATH.
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


def _write_lines(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n\n" for record in records), encoding="utf-8")
    return path


def test_json_lines_in_json_lines_out(tmp_path: Path) -> None:
    source = _write_lines(tmp_path / "texts.jsonl", TEXTS)
    out = tmp_path / "effects.jsonl"
    result = run_cli("extract", str(source), "--out", str(out), home=tmp_path / "home", env=_env())
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [row["id"] for row in rows] == ["trial-1", "2", "none", "=cmd|' /C calc'!A0"]
    (hazard,) = rows[0]["effects"]
    assert (hazard["measure"], hazard["value"], hazard["ci_low"], hazard["ci_high"]) == ("HR", 0.77, 0.72, 0.82)
    assert (hazard["p"], hazard["significant"], hazard["ci_level"]) == ("<0.001", True, 95.0)
    assert TEXTS[0]["text"][hazard["start"] : hazard["end"]] == hazard["quote"]  # type: ignore[index]
    assert rows[1]["effects"][0]["groups"] == ["79 %", "59 %"]
    assert rows[2]["effects"] == []
    assert "4 text(s) read, 3 result(s) written" in result.stderr


def test_out_dash_writes_to_standard_output_not_a_file_named_dash(tmp_path: Path) -> None:
    source = _write_lines(tmp_path / "texts.jsonl", TEXTS[:1])
    result = run_cli("extract", str(source), "--out", "-", home=tmp_path / "home", env=_env())
    assert result.returncode == 0, result.stderr
    (row,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert row["effects"][0]["measure"] == "HR"
    assert not (tmp_path / "-").exists()
    assert "1 result(s) written to standard output" in result.stderr


def test_csv_has_one_row_per_result_and_no_formula_cells(tmp_path: Path) -> None:
    source = _write_lines(tmp_path / "texts.jsonl", TEXTS)
    out = tmp_path / "effects.csv"
    result = run_cli("extract", str(source), "--out", str(out), "--format", "csv", home=tmp_path / "home", env=_env())
    assert result.returncode == 0, result.stderr
    with out.open(encoding="utf-8", newline="") as table:
        rows = list(csv.DictReader(table))
    assert [row["measure"] for row in rows] == ["HR", "group_values", "MD"]
    assert rows[0]["value"] == "0.77"
    assert rows[1]["groups"] == "79 % | 59 %"
    assert (rows[1]["p_bound"], rows[1]["p"]) == ("", "0.04")  # the number alone, which a spreadsheet reads
    assert (rows[0]["p_bound"], rows[0]["p"]) == ("<", "0.001")
    assert rows[2]["id"] == "'=cmd|' /C calc'!A0"
    assert rows[2]["value"] == "-7.0"  # numbers stay numbers
    dangerous = [cell for row in rows for cell in row.values() if cell[:1] in ("=", "+", "@")]
    assert dangerous == []


def test_a_folder_of_documents_with_one_unreadable_file(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "trial.txt").write_text("Results\n\nDeath: OR 0.54 (95% CI 0.14 to 2.05), p = 0.37.\n")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    out = tmp_path / "effects.jsonl"
    result = run_cli("extract", str(folder), "--out", str(out), home=tmp_path / "home", env=_env())
    assert result.returncode == 1, result.stderr
    assert f"{folder / 'broken.pdf'}: " in result.stderr
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert row["id"] == "trial.txt"  # the file's path under the folder: a result maps back to its file
    assert [(e["measure"], e["value"], e["p"]) for e in row["effects"]] == [("OR", 0.54, "=0.37")]
    # One document given alone is read as a document, not refused as JSON Lines.
    alone = run_cli("extract", str(folder / "trial.txt"), "--out", "-", home=tmp_path / "home", env=_env())
    assert alone.returncode == 0, alone.stderr
    assert json.loads(alone.stdout)["id"] == "trial.txt"


@pytest.mark.parametrize(
    ("lines", "args", "expected"),
    [
        (None, (), "no such file or folder"),
        ('{"id": "a", "text": "p = 0.03"}\n{bad json\n', (), "texts.jsonl, line 2: not JSON"),
        (
            '{"id": "a", "text": "p = 0.03"}\n\n["a list"]\n',
            (),
            "texts.jsonl, line 3: not a JSON object",
        ),
        ('{"text": "p = 0.03"}\n', (), 'texts.jsonl, line 1: the object has no "id"'),
        ('{"id": "a", "text": 3}\n', (), 'texts.jsonl, line 1: each line must be a JSON object with a string "text"'),
        ('{"id": "a", "text": "p = 0.03"}\n', ("--format", "xlsx"), "unknown format 'xlsx': use jsonl or csv"),
        ("", (), "texts.jsonl holds no text to read"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(
    tmp_path: Path, lines: str | None, args: tuple[str, ...], expected: str
) -> None:
    source = tmp_path / "texts.jsonl"
    if lines is not None:
        source.write_text(lines, encoding="utf-8")
    out = tmp_path / "effects.jsonl"
    result = run_cli("extract", str(source), "--out", str(out), *args, home=tmp_path / "home", env=_env())
    assert result.returncode == 2, result.stderr
    assert expected in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()
