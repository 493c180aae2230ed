"""The ``eval`` commands' input files: a row or item that lacks a value, and annotations that cannot score,
are refused in one line naming the file and what is wrong, before anything is predicted."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from deepcritical.errors import ConfigError
from deepcritical.evaluation import evidence_inference as eval_inference
from deepcritical.evaluation import pubmedqa_scifact as evaluation

HEADER = ["PromptID", "PMCID", "Outcome", "Intervention", "Comparator"]
ANNOTATION_HEADER = ["UserID", "PromptID", "PMCID", "Label", "Annotations", "Evidence Start", "Evidence End"]
ARTICLE = (
    "TITLE:\nDrug A in condition B\n\nABSTRACT.RESULTS:\nMortality was lower with drug A than with placebo "
    "(HR 0.70, 95% CI 0.60 to 0.82). Nausea did not differ between the groups (p=0.62).\n"
)


def write_csv(path: Path, rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    return path


def articles(folder: Path) -> Path:
    (folder / "fulltext").mkdir(parents=True)
    (folder / "fulltext" / "PMC1.txt").write_text(ARTICLE, encoding="utf-8")
    return folder


def run_eval(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "deepcritical", "eval", "evidence-inference", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.parametrize(
    ("row", "missing"),
    [
        ("1,1", "no Outcome, Intervention, Comparator"),  # a short row: the columns it lacks read as None
        ("1,1,Mortality,,placebo", "no Intervention"),  # an empty cell
        (",1,Mortality,drug A,placebo", "no PromptID"),
    ],
)
def test_a_prompt_row_that_lacks_a_value_is_refused_naming_its_line(tmp_path: Path, row: str, missing: str) -> None:
    prompts = tmp_path / "short.csv"
    prompts.write_text(f"{','.join(HEADER)}\n1,1,Nausea,drug A,placebo\n\n{row}\n", encoding="utf-8")
    out = tmp_path / "out"
    result = run_eval(str(prompts), "--articles", str(articles(tmp_path / "data")), "--out", str(out))
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1
    assert f"{prompts}, line 4: {missing}" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("pmcid", ["9" * 5000, "PMC12x", "../PMC1"])
def test_a_pmcid_that_is_not_one_is_refused_naming_its_line(tmp_path: Path, pmcid: str) -> None:
    """A 5,000-digit PMCID names a file no system can look for (a traceback, ENAMETOOLONG)."""
    prompts = tmp_path / "prompts.csv"
    prompts.write_text(f"{','.join(HEADER)}\n1,1,Nausea,drug A,placebo\n2,{pmcid},Nausea,drug A,placebo\n")
    out = tmp_path / "out"
    result = run_eval(str(prompts), "--articles", str(articles(tmp_path / "data")), "--out", str(out))
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert f"{prompts}, line 3: PMCID '{pmcid[:20]}" in result.stderr
    assert "is not a PMCID" in result.stderr
    assert len(result.stderr) < 400
    assert not out.exists()


def test_a_row_with_no_value_at_all_is_skipped(tmp_path: Path) -> None:
    """Spreadsheets write rows of commas: they hold no prompt and are not an error."""
    rows = [HEADER, ["1", "1", "Mortality", "drug A", "placebo"], ["", "", "", "", ""]]
    prompts = eval_inference.read_prompts(write_csv(tmp_path / "prompts.csv", rows))
    assert [(prompt.id, prompt.outcome) for prompt in prompts] == [("1", "Mortality")]


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (["maybe", "maybe"], "no row's Label is one of 'significantly increased'"),
        (["", ""], "no row's Label is one of"),
    ],
)
def test_annotations_with_no_usable_label_are_refused_before_predicting(
    tmp_path: Path, labels: list[str], message: str
) -> None:
    prompts = write_csv(tmp_path / "prompts.csv", [HEADER, ["1", "1", "Mortality", "drug A", "placebo"]])
    rows = [["0", "1", "1", label, "Mortality was lower", "0", "10"] for label in labels]
    annotations = write_csv(tmp_path / "annotations.csv", [ANNOTATION_HEADER, *rows])
    out = tmp_path / "out"
    data = str(articles(tmp_path / "data"))
    result = run_eval(str(prompts), "--articles", data, "--out", str(out), "--annotations", str(annotations))
    assert result.returncode == 2, result.stdout
    assert result.stderr.count("\n") == 1
    assert message in result.stderr
    assert not out.exists()


def test_annotations_for_other_prompts_only_are_refused_before_predicting(tmp_path: Path) -> None:
    prompts = write_csv(tmp_path / "prompts.csv", [HEADER, ["1", "1", "Mortality", "drug A", "placebo"]])
    annotations = write_csv(
        tmp_path / "annotations.csv",
        [ANNOTATION_HEADER, ["0", "7", "1", "significantly decreased", "x", "0", "10"]],
    )
    out = tmp_path / "out"
    data = str(articles(tmp_path / "data"))
    result = run_eval(str(prompts), "--articles", data, "--out", str(out), "--annotations", str(annotations))
    assert result.returncode == 2
    assert "none of its labelled PromptIDs is among the 1 prompt(s) to predict" in result.stderr
    assert not out.exists()


def test_offsets_that_are_not_numbers_are_skipped_and_counted_and_labels_read_in_any_case(tmp_path: Path) -> None:
    prompts = write_csv(
        tmp_path / "prompts.csv",
        [HEADER, ["1", "1", "Mortality", "drug A", "placebo"], ["2", "1", "Nausea", "drug A", "placebo"]],
    )
    start = ARTICLE.index("Mortality was lower")
    annotations = write_csv(
        tmp_path / "annotations.csv",
        [
            ANNOTATION_HEADER,
            ["0", "1", "1", "Significantly Decreased", "Mortality was lower", str(start), str(start + 40)],
            ["1", "2", "1", "no significant difference", "Nausea did not differ", "abc", "def"],
            ["2", "2", "1", "maybe", "Nausea", "", ""],
        ],
    )
    out = tmp_path / "out"
    data = str(articles(tmp_path / "data"))
    result = run_eval(str(prompts), "--articles", data, "--out", str(out), "--annotations", str(annotations))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["scored"], summary["accuracy"]) == (2, 1.0)
    assert (summary["labels_skipped"], summary["evidence_offsets_skipped"]) == (1, 2)
    assert summary["evidence_found"] == 1.0  # over the one prompt whose offsets could be read


def test_a_score_with_nothing_scored_is_null_with_a_note(tmp_path: Path) -> None:
    """Through the library (no refusal before it): zero scored prompts give no score, not 0.0."""
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        json.dumps({"id": "1", "prediction": "significantly decreased", "evidence": [], "article": "fulltext"}) + "\n",
        encoding="utf-8",
    )
    annotations = write_csv(tmp_path / "annotations.csv", [ANNOTATION_HEADER, ["0", "1", "1", "maybe", "x", "a", "b"]])
    summary = eval_inference.score(predictions, annotations)
    assert (summary["scored"], summary["accuracy"], summary["macro_f1"]) == (0, None, None)
    assert summary["note"] == "no predicted prompt has a usable label: no score"
    assert (summary["labels_skipped"], summary["evidence_offsets_skipped"]) == (1, 1)


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"QUESTION": None, "CONTEXTS": ["Text."]}, "item 1: QUESTION is empty or not text"),
        ({"QUESTION": "  ", "CONTEXTS": ["Text."]}, "item 1: QUESTION is empty or not text"),
        ({"QUESTION": "Does X work?", "CONTEXTS": None}, "item 1: CONTEXTS holds no text"),
        ({"QUESTION": "Does X work?", "CONTEXTS": "[unclosed"}, "item 1: CONTEXTS, LABELS or MESHES is not a list"),
    ],
)
def test_a_pubmedqa_item_that_lacks_a_value_is_refused_naming_it(
    tmp_path: Path, item: dict[str, object], message: str
) -> None:
    path = tmp_path / "pqal.json"
    path.write_text(json.dumps({"1": item}), encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        evaluation.read_pubmedqa_inputs(path)


def test_a_spreadsheets_csv_with_pmcids_as_pubmed_central_writes_them_is_read(tmp_path: Path) -> None:
    """A new user's prompts saved by a spreadsheet as "CSV UTF-8" (a byte-order mark, CRLF line ends) with
    PMCIDs written "PMC1": the header is read (it was refused, "missing PromptID") and the article is found."""
    data = articles(tmp_path / "data")
    (data / "splits.csv").write_bytes(b"\xef\xbb\xbfPMCID,split\r\nPMC1,validation\r\n")
    prompts = tmp_path / "prompts.csv"
    prompts.write_bytes(("\ufeff" + ",".join(HEADER) + "\r\nm1,PMC1,Mortality,drug A,placebo\r\n").encode("utf-8"))
    [prompt] = eval_inference.read_prompts(prompts)
    assert (prompt.id, prompt.pmcid) == ("m1", "1")
    assert eval_inference.has_article(data, prompt.pmcid)
    assert eval_inference.split_of(data) == {"1": "validation"}
    out = tmp_path / "out"
    result = run_eval(str(prompts), "--articles", str(data), "--split", "validation", "--out", str(out))
    assert result.returncode == 0, result.stderr
    [line] = [json.loads(line) for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
    assert (line["id"], line["article"], line["prediction"]) == ("m1", "fulltext", "significantly decreased")


def test_macro_f1_averages_only_the_labels_given(tmp_path: Path) -> None:
    """A new user's four hand-made prompts, none of them a decrease, read right: accuracy 1.0 was shown beside
    macro-F1 0.667, the decrease's F1 counted 0 though neither the doctors nor the reader gave it. It is now
    null and left out of the average; a label the reader gives wrongly still counts 0."""
    predictions = tmp_path / "predictions.jsonl"
    said = {"1": "significantly increased", "2": "no significant difference", "3": "no significant difference"}
    predictions.write_text(
        "".join(
            json.dumps({"id": i, "prediction": p, "evidence": [], "article": "fulltext"}) + "\n"
            for i, p in said.items()
        ),
        encoding="utf-8",
    )
    rows = [["0", i, "1", label, "x", "0", "10"] for i, label in said.items()]
    summary = eval_inference.score(predictions, write_csv(tmp_path / "a.csv", [ANNOTATION_HEADER, *rows]))
    assert (summary["accuracy"], summary["macro_f1"]) == (1.0, 1.0)
    assert summary["per_label_f1"]["significantly decreased"] is None
    assert summary["majority_macro_f1"] == round((0 + 0.8) / 2, 4)  # "no significant difference" for all three
    wrong = [[*row[:3], "significantly decreased" if row[1] == "1" else row[3], *row[4:]] for row in rows]
    summary = eval_inference.score(predictions, write_csv(tmp_path / "b.csv", [ANNOTATION_HEADER, *wrong]))
    assert summary["per_label_f1"] == {
        "significantly increased": 0.0,
        "significantly decreased": 0.0,
        "no significant difference": 1.0,
    }
    assert summary["macro_f1"] == round(1 / 3, 4)


def test_pubmedqa_macro_f1_averages_only_the_labels_given(tmp_path: Path) -> None:
    """The same for ``eval pubmedqa``: no "maybe" answered or predicted, every answer right, macro-F1 1.0."""
    gold = tmp_path / "pqal.json"
    answers = {"1": "yes", "2": "no"}
    gold.write_text(json.dumps({i: {"QUESTION": "Q?", "final_decision": a} for i, a in answers.items()}), "utf-8")
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": i, "prediction": a, "seconds": 1.0, "collected": [i], "cited": [i]}) + "\n"
            for i, a in answers.items()
        ),
        encoding="utf-8",
    )
    summary = evaluation.score("pubmedqa", predictions, gold, {})
    assert (summary["accuracy"], summary["macro_f1"], summary["f1"]["maybe"]) == (1.0, 1.0, None)
