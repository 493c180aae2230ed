"""``deepcritical batch``: questions from lines, CSV or JSONL; a folder per question; summary.csv; a rerun
skips what succeeded and resumes what was cut off; the exit code is 0 only when every question succeeded."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from deepcritical.cli.batch import Row, folder_name, read_questions, row_from_record, verdict_of, write_summary
from deepcritical.errors import ConfigError
from deepcritical.run.checkpoint import CHECKPOINT_FILE, HOLD_VARIABLE
from deepcritical.text import MAX_QUESTION_CHARS
from helpers.commands import environment, error_lines, run_cli, wait_for

pytestmark = pytest.mark.slow  # every test here runs the command in a child process

QUESTIONS = ["Can metformin be repurposed for Alzheimer's disease?", "Do statins reduce sepsis mortality?"]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_questions_one_per_line_skip_blanks_and_comments(tmp_path: Path) -> None:
    file = write(tmp_path / "q.txt", "\n# a comment\nFirst question?\n   \nSecond\tquestion?\n")
    assert read_questions(file) == ["First question?", "Second question?"]


def test_questions_from_a_csv_question_column(tmp_path: Path) -> None:
    file = write(tmp_path / "q.csv", 'id,Question\n1,"First, with a comma?"\n,,\n2,Second?\n')
    assert read_questions(file) == ["First, with a comma?", "Second?"]


def test_questions_from_jsonl(tmp_path: Path) -> None:
    file = write(tmp_path / "q.jsonl", '{"question": "First?", "tag": 1}\n\n{"question": "Second?"}\n')
    assert read_questions(file) == ["First?", "Second?"]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("q.csv", "id,topic\n1,x\n", "no 'question' column (columns: id, topic)"),
        ("q.jsonl", '{"question": "Is aspirin ok?"}\n{"question": 3}\n', "line 2: not a JSON object with a string"),
        ("q.jsonl", '{"question": "Is aspirin ok?"}\nnot json\n', "line 2: not JSON"),
        ("q.csv", "question\nfine?\n\t\n", None),
        ("q.csv", 'question,other\nfine?,a\n"",b\n', "line 3: the question is empty"),
        ("q.csv", "question\nfine?\nthe of and?\n", "line 3: the question has no searchable words"),
        ("q.txt", "\n# only a comment\n", "no questions in it"),
        ("q.txt", "Is aspirin ok?\n" + "x" * (MAX_QUESTION_CHARS + 1) + "\n", "line 2: the question is"),
    ],
)
def test_unusable_input_is_named_with_its_line(tmp_path: Path, name: str, text: str, expected: str | None) -> None:
    file = write(tmp_path / name, text)
    if expected is None:
        assert read_questions(file) == ["fine?"]
        return
    with pytest.raises(ConfigError, match=r"^FILE ") as caught:
        read_questions(file)
    assert expected in str(caught.value)


def test_folder_names_keep_the_order_and_the_first_words() -> None:
    assert (
        folder_name(7, "Can metformin be repurposed for Alzheimer's disease?", 3)
        == "007-can-metformin-be-repurposed-for-alzheimer"
    )
    assert folder_name(12, "¿?", 4) == "0012-question"


def test_the_summary_reads_the_verdict_when_the_record_has_one(tmp_path: Path) -> None:
    verdict = {"label": "no", "confidence": 0.8123, "answer": "no difference", "certainty": "low"}
    assert verdict_of({"verdict": verdict}) == {
        "verdict": "no",
        "confidence": "0.81",
        "answer": "no difference",
        "certainty": "low",
    }
    assert verdict_of({"verdict": {"label": "insufficient", "confidence": 0.0}}) == {
        "verdict": "insufficient",
        "confidence": "0.00",
    }
    assert verdict_of({}) == {}
    folder = tmp_path / "001-x"
    folder.mkdir()
    record = {"question": "x?", "evidence": [{}, {}], "error": None, "degraded": True}
    write(folder / "run.json", json.dumps(record))
    row = row_from_record("x?", folder)
    assert row is not None
    assert (row.exit_status, row.items, row.verdict) == (3, "2", "")
    assert row_from_record("another question?", folder) is None


def summary(out: Path) -> list[dict[str, str]]:
    with (out / "summary.csv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.model
def test_a_batch_answers_every_question_and_a_rerun_skips_them(tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "out"
    file = write(tmp_path / "questions.jsonl", "".join(json.dumps({"question": q}) + "\n" for q in QUESTIONS))
    first = run_cli("batch", str(file), "--demo", "--out", str(out), "--jobs", "2", "--quiet", home=home)
    assert first.returncode == 0, first.stderr[-2000:]
    rows = summary(out)
    assert [row["question"] for row in rows] == QUESTIONS
    assert [row["exit_status"] for row in rows] == ["0", "0"]
    for row in rows:
        record = json.loads((Path(row["folder"]) / "run.json").read_text(encoding="utf-8"))
        assert record["question"] == row["question"]
        assert int(row["items"]) == len(record["evidence"]) > 0
        assert (row["verdict"], row["answer"]) == (record["verdict"]["label"], record["verdict"]["answer"])
        assert row["certainty"] == (record["verdict"]["certainty"] or "")
    assert "2 of 2 questions succeeded" in first.stdout

    again = run_cli("batch", str(file), "--demo", "--out", str(out), "--quiet", home=home)
    assert again.returncode == 0
    assert "(2 from an earlier batch)" in again.stdout
    assert summary(out) == rows


def test_a_batch_takes_the_research_options_no_llm_and_sources(tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "out"
    file = write(tmp_path / "questions.txt", QUESTIONS[0] + "\n")
    done = run_cli(
        "batch",
        str(file),
        "--demo",
        "--no-llm",
        "--sources",
        "pubmed",
        "--no-recall",
        "--out",
        str(out),
        "-q",
        home=home,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (row,) = summary(out)
    record = json.loads((Path(row["folder"]) / "run.json").read_text(encoding="utf-8"))
    assert record["llm_usage"]["requests"] == 0  # no model at all
    # Searched on PubMed alone (full-text passages of its articles are found by the library, its cache).
    assert {source for item in record["evidence"] for source in item["found_by"]} - {"library"} == {"pubmed"}


@pytest.mark.model
def test_a_killed_batch_resumes_its_cut_off_question_and_a_failure_sets_the_exit_code(tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "out"
    file = write(tmp_path / "questions.txt", "\n".join([*QUESTIONS, "A third question about aspirin?"]) + "\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "deepcritical", "batch", str(file), "--demo", "--out", str(out), "--quiet"],
        env=environment(home, {HOLD_VARIABLE: "plan:1"}),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = out / folder_name(1, QUESTIONS[0], 3)
    try:
        wait_for(first / "held", process)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.communicate()
    assert (first / CHECKPOINT_FILE).exists()
    assert not (first / "run.json").exists()
    # The third question's folder cannot be made (a file is in its way): that question fails, the rest go on.
    write(out / folder_name(3, "A third question about aspirin?", 3), "in the way")

    rerun = run_cli("batch", str(file), "--demo", "--out", str(out), "--quiet", home=home)
    assert rerun.returncode == 1
    lines = error_lines(rerun.stderr)
    assert lines[-1].startswith("batch: 2 of 3 questions succeeded; 1 failed: 003-a-third-question-about-aspirin")
    rows = summary(out)
    assert [row["exit_status"] for row in rows] == ["0", "0", "1"]
    assert "cannot write there" in rows[2]["error"]
    record = json.loads((first / "run.json").read_text(encoding="utf-8"))
    assert record["resumed"] is True
    assert record["resumptions"][0]["stage"] == "plan"
    second = json.loads((out / folder_name(2, QUESTIONS[1], 3) / "run.json").read_text(encoding="utf-8"))
    assert second["resumed"] is False


def test_bad_batch_input_exits_2_in_one_line(tmp_path: Path) -> None:
    result = run_cli("batch", str(tmp_path / "missing.txt"), "--demo", home=tmp_path / "home")
    assert result.returncode == 2
    assert error_lines(result.stderr) == [f"error: FILE {tmp_path / 'missing.txt'}: no such file"]
    bad_jobs = run_cli("batch", str(tmp_path / "missing.txt"), "--jobs", "0", home=tmp_path / "home")
    assert bad_jobs.returncode == 2
    assert "--jobs" in bad_jobs.stderr


def test_summary_cells_that_would_run_as_formulas_are_inert(tmp_path: Path) -> None:
    """A question like ``=HYPERLINK(...)`` or an error starting ``-`` ran as a formula in a spreadsheet."""
    rows = [
        Row(question='=HYPERLINK("http://evil.example","x")', folder=tmp_path, exit_status=1, error="-2+3"),
        Row(question="+cmd|' /C calc'!A0", folder=tmp_path, exit_status=0, verdict="@SUM(A1)", confidence="-0.5"),
        Row(question="\tTabbed?", folder=tmp_path, exit_status=0),
    ]
    write_summary(tmp_path, rows)
    written = {row["question"]: row for row in summary(tmp_path)}
    assert set(written) == {'\'=HYPERLINK("http://evil.example","x")', "'+cmd|' /C calc'!A0", "'\tTabbed?"}
    assert written['\'=HYPERLINK("http://evil.example","x")']["error"] == "'-2+3"
    assert written["'+cmd|' /C calc'!A0"]["verdict"] == "'@SUM(A1)"
    assert written["'+cmd|' /C calc'!A0"]["confidence"] == "-0.5"  # a number is left a number
