"""``deepcritical eval medevidence``: each question over its own studies, the review's answer read only to score."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from deepcritical.errors import ConfigError
from deepcritical.evaluation import medevidence as eval_medevidence
from deepcritical.outputs import Verdict
from helpers.commands import environment

NULL_TRIAL = (
    "Background: statins may reduce deaths in sepsis. Methods: 250 adults with sepsis were randomised to "
    "simvastatin or placebo. Results: 28-day mortality did not differ between simvastatin and placebo (22% vs 21%; "
    "relative risk 1.04, 95% CI 0.70 to 1.55; p = 0.81). Conclusions: simvastatin did not reduce mortality."
)
FEWER_DEATHS = (
    "Methods: 3,000 patients with heart failure were randomised to dapagliflozin or placebo. Results: death from "
    "any cause occurred in 9.0% with dapagliflozin and 12.1% with placebo (hazard ratio 0.74, 95% CI 0.62 to 0.88; "
    "p < 0.001). Conclusions: dapagliflozin reduced mortality in heart failure."
)

pytestmark = pytest.mark.slow  # every test here runs the command in a child process


def question(key: str, intervention: str, outcome: str, comparator: str, **gold: Any) -> dict[str, Any]:
    return {
        "id": key,
        "question": f"Does {intervention} increase {outcome} compared with {comparator}?",
        "question_reduce": f"Does {intervention} reduce {outcome} compared with {comparator}?",
        "intervention": intervention,
        "comparator": comparator,
        "outcome": outcome,
        "original_review_pmid": f"r-{key}",
        **gold,
    }


def write_questions(tmp_path: Path, *, gold: bool) -> tuple[Path, Path]:
    studies = tmp_path / "studies"
    rows = [
        (question("q1", "simvastatin", "28-day mortality", "placebo"), NULL_TRIAL, "no difference", "moderate"),
        (question("q2", "dapagliflozin", "death from any cause", "placebo"), FEWER_DEATHS, "lower", "high"),
        (question("q3", "simvastatin", "mortality", "placebo"), NULL_TRIAL, "no difference", "low"),
    ]
    lines = []
    for row, text, answer, certainty in rows:
        folder = studies / row["id"]
        folder.mkdir(parents=True)
        study = {"_id": f"{row['id']}-1", "title": "A randomised trial", "text": text, "metadata": {"year": "2020"}}
        (folder / "studies.jsonl").write_text(json.dumps(study) + "\n", encoding="utf-8")
        lines.append(row | ({"gold_answer": answer, "evidence_certainty": certainty} if gold else {}))
    path = tmp_path / ("gold.jsonl" if gold else "questions.jsonl")
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path, studies


def test_the_inputs_never_carry_the_reviews_answer(tmp_path: Path) -> None:
    with_gold, studies = write_questions(tmp_path / "a", gold=True)
    without, other = write_questions(tmp_path / "b", gold=False)
    read = eval_medevidence.read_medevidence_inputs(with_gold, studies)
    assert [(q.id, q.question, q.reduce) for q in read] == [
        (q.id, q.question, q.reduce) for q in eval_medevidence.read_medevidence_inputs(without, other)
    ]
    assert "no difference" not in repr(read)
    assert read[0].collection == "medev-q1"


def test_a_question_without_its_studies_is_refused_naming_it(tmp_path: Path) -> None:
    path, studies = write_questions(tmp_path, gold=True)
    (studies / "q2" / "studies.jsonl").unlink()
    with pytest.raises(ConfigError, match=r"line 2: question q2 has no studies file"):
        eval_medevidence.read_medevidence_inputs(path, studies)


def test_a_verdict_without_an_answer_is_read_from_its_label_on_the_increase_question() -> None:
    assert eval_medevidence.answer_of(Verdict(label="yes", confidence=0.7)) == "higher"
    assert eval_medevidence.answer_of(Verdict(label="maybe", confidence=0.5)) == "uncertain effect"
    assert eval_medevidence.answer_of(Verdict(label="yes", confidence=0.7, answer="lower")) == "lower"


def test_the_score_counts_answers_certainty_within_one_level_and_both_ways_agreement() -> None:
    gold = {
        "a": {"answer": "lower", "certainty": "high", "review": "r1"},
        "b": {"answer": "no difference", "certainty": "very low", "review": "r1"},
        "c": {"answer": "higher", "certainty": None, "review": "r2"},
    }
    lines = [
        {
            "id": "a",
            "answer": "lower",
            "label": "no",
            "certainty": "moderate",
            "answer_reduce": "lower",
            "label_reduce": "yes",
        },
        {
            "id": "b",
            "answer": "higher",
            "label": "yes",
            "certainty": "moderate",
            "answer_reduce": "lower",
            "label_reduce": "yes",
        },
        {"id": "c", "answer": "higher", "label": "yes", "certainty": None},
    ]
    summary = eval_medevidence.score_lines(lines, gold)
    assert summary["accuracy"] == round(2 / 3, 4)
    low, high = summary["accuracy_95ci"]  # Wilson: 2 of 3 right is anything from about 0.21 to 0.94
    assert (low, high) == pytest.approx((0.2077, 0.9385), abs=1e-4)
    assert summary["reviews"] == 2
    assert summary["confusion"]["rows_gold_columns_predicted"][2] == [1, 0, 0, 0, 0]  # no difference read higher
    # Rated questions only (c has no rating): a is one level off, b two.
    assert (summary["certainty_rated"], summary["certainty_exact"], summary["certainty_within_one"]) == (2, 0.0, 0.5)
    assert summary["verdict_accuracy"] == round(2 / 3, 4)
    assert summary["both_ways"] == {"questions": 2, "same_answer": 0.5, "yes_to_both": 1}


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "deepcritical", *args],
        capture_output=True,
        text=True,
        env=environment(home),
        cwd=home.parent,
        timeout=600,
        check=False,
    )


def test_eval_medevidence_runs_each_question_over_its_own_studies_and_resumes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    path, studies = write_questions(tmp_path, gold=True)
    out = tmp_path / "out"
    args = ("eval", "medevidence", str(path), "--studies", str(studies), "--no-llm", "--out", str(out))
    first = run_cli(home, *args, "--limit", "2")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["items"] == 2
    second = run_cli(home, *args)
    assert second.returncode == 0, second.stderr
    summary = json.loads(second.stdout)
    assert (summary["items"], summary["sessions"]) == (3, 2)
    lines = [json.loads(line) for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == ["q1", "q2", "q3"]
    assert {"id", "answer", "label", "certainty", "evidence", "seconds"} <= set(lines[0])
    # Each question rests on its own study only: q2's death-from-any-cause trial is not in q1's collection.
    assert all(document.startswith(line["id"] + "-") for line in lines for document in line["evidence"])
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["scored"] == 3


def test_eval_medevidence_refuses_a_studies_folder_that_is_not_one(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    path, _ = write_questions(tmp_path, gold=True)
    result = run_cli(home, "eval", "medevidence", str(path), "--studies", str(tmp_path / "none"), "--no-llm")
    assert result.returncode != 0
    assert "--studies" in result.stderr
    assert "not a folder" in result.stderr
