"""Answers measured: the ``library`` collection and source, the verdict computed in code, ``--no-llm``,
the demo's reproducibility, and ``deepcritical eval`` (on generated files, and on slices of the real
benchmarks when ``../shared/data`` is there)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.stance import code_verdict, is_yes_no, results_text
from deepcritical.appraisal.strength import Strength, strength_of
from deepcritical.appraisal.verdict import reconciled
from deepcritical.config import Settings, load_settings
from deepcritical.errors import ConfigError
from deepcritical.evaluation import pubmedqa_scifact as evaluation
from deepcritical.evidence import EmbeddingService, chroma, documents
from deepcritical.models import Grade
from deepcritical.outputs import Verdict
from deepcritical.report.extractive import extractive_report
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.setup import assemble, http_client
from deepcritical.sources.library import LibraryTool
from helpers.commands import environment

pytestmark = pytest.mark.model

DOCUMENTS = [
    {
        "_id": "d1",
        "title": "Vitamin D supplementation and fracture risk in older adults",
        "text": "BACKGROUND: Fractures are common in older adults. METHODS: A randomized controlled trial of 2,000 "
        "adults. RESULTS: Vitamin D supplementation did not reduce fracture risk (hazard ratio 0.98, p = 0.71); "
        "there was no significant difference between groups.",
        "metadata": {"year": "2019", "publication_types": ["Randomized Controlled Trial"]},
    },
    {
        "_id": "d2",
        "title": "Exercise training improves walking distance in peripheral artery disease",
        "text": "BACKGROUND: Walking is limited in peripheral artery disease. METHODS: 120 patients were randomized. "
        "RESULTS: Supervised exercise significantly increased walking distance (p < 0.001) and improved "
        "quality of life (p = 0.01).",
    },
    {
        "_id": "d3",
        "title": "Coffee consumption and liver enzymes",
        "text": "A cross-sectional survey of coffee drinkers measured liver enzymes in 500 adults; enzyme levels "
        "were lower among those who drank more coffee.",
    },
]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def settings_at(home: Path, **overrides: Any) -> Settings:
    return load_settings(home=home, **overrides)


def add(settings: Settings, path: Path, name: str = "documents") -> int:
    connection = chroma.connect(settings)
    try:
        return documents.add_documents(connection, EmbeddingService(), name, documents.read_jsonl(path))
    finally:
        connection.close()


async def test_library_add_then_search_finds_the_document_by_keyword_and_meaning(tmp_path: Path) -> None:
    settings = settings_at(tmp_path / "home")
    assert add(settings, write_jsonl(tmp_path / "docs.jsonl", DOCUMENTS)) == 3
    tool = LibraryTool(settings)
    found = await tool.search("does exercise help walking in artery disease", 2)
    assert found[0].passage is not None
    assert found[0].passage.document_id == "d2"
    assert found[0].id == "url:library://documents/d2"
    assert found[0].citation.source == "library"
    assert 0.0 <= found[0].relevance <= 1.0
    assert (await tool.search("vitamin D fracture", 1))[0].citation.date == "2019"


async def test_adding_a_document_again_replaces_it_rather_than_duplicating_it(tmp_path: Path) -> None:
    settings = settings_at(tmp_path / "home")
    path = write_jsonl(tmp_path / "docs.jsonl", DOCUMENTS)
    add(settings, path)
    add(settings, path)
    index = await LibraryTool(settings).index()
    assert len(index) == 3


async def test_a_missing_collection_is_a_source_error_naming_the_fix(tmp_path: Path) -> None:
    settings = settings_at(tmp_path / "home", library_collection="nothing-here")
    with pytest.raises(Exception, match=r"library add FILE\.jsonl --collection nothing-here"):
        await LibraryTool(settings).search("anything", 3)


def test_a_bad_line_in_a_jsonl_file_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(DOCUMENTS[0]) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.jsonl, line 2: not JSON"):
        list(documents.read_jsonl(path))
    path.write_text(json.dumps({"_id": "x", "title": "t"}) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 1: document x: no text"):
        list(documents.read_jsonl(path))


def view(item_id: str, title: str, text: str, **grade: Any) -> EvidenceView:
    graded = Grade(**grade)
    return EvidenceView(
        id=item_id,
        title=title,
        source="library",
        date="2020",
        text=text,
        design=graded.design,
        level=graded.level,
        population=graded.population,
    )


NULL_TRIAL = view(
    "pmid:1",
    "Vitamin D and fractures",
    DOCUMENTS[0]["text"],
    design="randomized_controlled_trial",
    level=2,
    population="humans",
)
POSITIVE_TRIAL = view(
    "pmid:2", "Exercise and walking", DOCUMENTS[1]["text"], design="randomized_controlled_trial", level=2
)


def test_the_verdict_reads_a_null_result_as_no_and_a_significant_benefit_as_yes() -> None:
    assert code_verdict("Does vitamin D supplementation reduce fracture risk?", [NULL_TRIAL]).label == "no"
    positive = code_verdict("Does supervised exercise increase walking distance?", [POSITIVE_TRIAL])
    assert positive.label == "yes"
    assert positive.evidence_ids == ["pmid:2"]
    assert positive.strongest_level == 2
    assert positive.by == "code"
    assert 0.0 < positive.confidence <= 1.0


def test_a_claim_gets_a_claim_label_and_a_question_a_yes_no_label() -> None:
    claim = code_verdict("Vitamin D supplementation reduces fracture risk in older adults.", [NULL_TRIAL])
    assert claim.label in ("supported", "refuted", "mixed")
    assert is_yes_no("Is coffee good for the liver?")
    assert not is_yes_no("Coffee lowers liver enzymes.")
    assert is_yes_no("Therapeutic anticoagulation in the trauma patient: is it safe?")
    assert is_yes_no("Secondhand smoke in infants: potential for health disparities?")
    assert not is_yes_no("What lowers liver enzymes?")
    assert not is_yes_no("Liver enzymes: which drugs lower them?")


def test_a_claim_of_no_effect_is_supported_by_a_null_result() -> None:
    question = "Does vitamin D supplementation reduce fracture risk?"
    assert code_verdict(question, [NULL_TRIAL]).label == "no"
    assert code_verdict("Vitamin D supplementation does not reduce fracture risk.", [NULL_TRIAL]).label == "supported"
    assert code_verdict("Vitamin D supplementation doesn't reduce fracture risk.", [NULL_TRIAL]).label == "supported"
    assert code_verdict("Vitamin D supplementation reduces fracture risk.", [NULL_TRIAL]).label == "refuted"


def test_nothing_on_topic_or_nothing_at_all_is_insufficient() -> None:
    assert code_verdict("Does metformin slow Alzheimer's disease?", []).label == "insufficient"
    off_topic = code_verdict("Does metformin slow Alzheimer's disease progression?", [NULL_TRIAL, POSITIVE_TRIAL])
    assert off_topic.label == "insufficient"
    assert off_topic.evidence_ids == []


def test_a_claim_is_insufficient_when_no_item_names_most_of_what_it_asserts() -> None:
    # The trial is about vitamin D and fractures; a claim about vitamin D and three things it never names
    # is on its topic but not settled by it.
    claim = "Vitamin D supplementation reduces depressive symptoms, insomnia and migraine frequency."
    verdict = code_verdict(claim, [NULL_TRIAL])
    assert verdict.label == "insufficient"
    assert "claim asserts" in (verdict.rationale or "")
    # The same evidence still answers a question in the question's own words.
    assert code_verdict("Does vitamin D lower depressive symptoms or fractures?", [NULL_TRIAL]).label != "insufficient"


def test_retracted_items_and_registrations_never_carry_the_verdict() -> None:
    retracted = view("pmid:3", "Exercise and walking", DOCUMENTS[1]["text"])
    retracted = EvidenceView(**{**retracted.__dict__, "retracted": True})
    registration = view("nct:1", "Exercise and walking", DOCUMENTS[1]["text"], design="registered_trial")
    verdict = code_verdict("Does supervised exercise increase walking distance?", [retracted, registration])
    assert verdict.label == "insufficient"


def test_results_text_is_the_results_section_of_a_labelled_abstract() -> None:
    text = results_text(DOCUMENTS[1]["text"])
    assert text.startswith("Supervised exercise significantly increased")
    assert "Walking is limited" not in text


# --- deepcritical eval on a generated file ---

ANSWER_FIELDS = ("final_decision", "LONG_ANSWER", "reasoning_required_pred", "reasoning_free_pred")


def pubmedqa_items() -> dict[str, dict[str, Any]]:
    items = {}
    for number, record in enumerate(DOCUMENTS):
        items[str(100 + number)] = {
            "QUESTION": ["Does vitamin D reduce fractures?", "Does exercise improve walking?", "Is coffee good?"][
                number
            ],
            "CONTEXTS": [record["text"]],
            "LABELS": ["RESULTS"],
            "MESHES": ["Humans"],
            "YEAR": "2020",
            "final_decision": ["no", "yes", "maybe"][number],
            "LONG_ANSWER": "The answer is given away here: yes yes yes, significantly better.",
            "reasoning_required_pred": "yes",
            "reasoning_free_pred": "yes",
        }
    return items


async def evaluate(tmp_path: Path, items: dict[str, dict[str, Any]], name: str) -> tuple[list[dict[str, Any]], Path]:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    out = tmp_path / name
    questions, pool = evaluation.read_pubmedqa_inputs(path)
    timing = await evaluation.predict("pubmedqa", questions, pool, settings_at(tmp_path / "home", no_llm=True), out)
    summary = evaluation.score("pubmedqa", out / "predictions.jsonl", path, timing)
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    lines = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    return lines, out


async def test_eval_predicts_scores_and_resumes_on_a_generated_file(tmp_path: Path) -> None:
    lines, out = await evaluate(tmp_path, pubmedqa_items(), "full")
    assert [line["id"] for line in lines] == ["100", "101", "102"]
    assert all(line["prediction"] in ("yes", "no", "maybe") for line in lines)
    assert all(str(line["id"]) in line["collected"] for line in lines)  # each question finds its own abstract
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scored"] == 3
    assert summary["gold_evidence_recall"] == 1.0
    assert sum(map(sum, summary["confusion"]["rows_gold_columns_predicted"])) == 3
    assert summary["majority_baseline"]["accuracy"] == pytest.approx(1 / 3, abs=1e-3)
    # Each question ran as every run does (a RunRequest through run_to_folder): its folder holds the request
    # (library only, no recall), its events and its report.
    for line in lines:
        folder = out / "runs" / str(line["id"])
        request = json.loads((folder / "request.json").read_text())
        assert (request["sources"], request["collection"], request["recall"]) == (["library"], "pubmedqa", False)
        assert (folder / "report.md").is_file()
        assert (folder / "events.jsonl").read_text().strip()
    # Run again on the same output: every item is done, nothing is predicted twice.
    again, _ = await evaluate(tmp_path, pubmedqa_items(), "full")
    assert len(again) == 3
    # A crash cut the last line off mid-write: the rerun drops it, predicts that item again, and scores.
    predictions = out / "predictions.jsonl"
    text = predictions.read_text(encoding="utf-8")
    predictions.write_text(text[: text.rindex("\n", 0, -1) + 15], encoding="utf-8")
    resumed, _ = await evaluate(tmp_path, pubmedqa_items(), "full")
    assert [line["id"] for line in resumed] == ["100", "101", "102"]


async def test_the_answer_fields_are_never_read_before_predicting(tmp_path: Path) -> None:
    with_answers, _ = await evaluate(tmp_path, pubmedqa_items(), "with")
    stripped = {
        key: {k: v for k, v in item.items() if k not in ANSWER_FIELDS} for key, item in pubmedqa_items().items()
    }
    without, out = await evaluate(tmp_path, stripped, "without")
    keep = ("id", "prediction", "verdict", "confidence", "collected", "cited")
    assert [{k: line[k] for k in keep} for line in with_answers] == [{k: line[k] for k in keep} for line in without]
    assert "accuracy" not in json.loads((out / "summary.json").read_text())


# --- the real benchmarks, a slice (skipped without ../shared/data) ---


async def test_eval_on_a_slice_of_pubmedqa_finds_each_question_s_own_abstract_and_keeps_its_accuracy(
    tmp_path: Path, shared_data: Callable[[str], Path]
) -> None:
    data = json.loads((shared_data("pubmedqa") / "pqal_dev.json").read_text(encoding="utf-8"))
    keys = list(data)[:40]
    path = tmp_path / "slice.json"
    path.write_text(json.dumps({key: data[key] for key in keys}), encoding="utf-8")
    questions, pool = evaluation.read_pubmedqa_inputs(path)
    timing = await evaluation.predict(
        "pubmedqa", questions, pool, settings_at(tmp_path / "home", no_llm=True), tmp_path / "out", limit=20
    )
    summary = evaluation.score("pubmedqa", tmp_path / "out" / "predictions.jsonl", path, timing)
    assert summary["scored"] == 20
    assert summary["gold_evidence_recall"] >= 0.9
    # The slice's documented figure, less 0.02: 14 of the first 20 items, 0.70, no LLM. It was 15 (0.75,
    # phases/23_readers.md) until the review-style answer (phases/23_cochrane_answer.md): one direct study now
    # answers, and the stance model no longer overrides it; the item lost is a regression kept on record there.
    assert summary["accuracy"] >= 0.70 - 0.02


async def test_eval_on_a_slice_of_scifact_maps_verdicts_to_its_labels(
    tmp_path: Path, shared_data: Callable[[str], Path]
) -> None:
    claims_file = shared_data("scifact-claims") / "claims_train.jsonl"
    claims = [json.loads(line) for line in claims_file.read_text(encoding="utf-8").splitlines()[:8]]
    wanted = {str(doc) for claim in claims for doc in (*claim["evidence"], *claim["cited_doc_ids"])}
    corpus_lines = (shared_data("beir-scifact") / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    corpus = [line for line in corpus_lines if json.loads(line)["_id"] in wanted] + corpus_lines[:60]
    corpus_file = tmp_path / "corpus.jsonl"
    corpus_file.write_text("\n".join(dict.fromkeys(corpus)) + "\n", encoding="utf-8")
    small_claims = write_jsonl(tmp_path / "claims.jsonl", claims)
    questions = evaluation.read_scifact_inputs(small_claims)
    timing = await evaluation.predict(
        "scifact",
        questions,
        evaluation.corpus_documents(corpus_file),
        settings_at(tmp_path / "home", no_llm=True),
        tmp_path / "out",
    )
    summary = evaluation.score("scifact", tmp_path / "out" / "predictions.jsonl", small_claims, timing)
    assert summary["scored"] == 8
    assert set(summary["predicted"]) <= {"SUPPORT", "REFUTE", "NEI"}
    assert summary["gold_evidence_recall"] >= 0.5


# --- --no-llm from the command line, and the demo's reproducibility ---


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


def test_a_no_llm_run_over_a_library_collection_exits_0_with_a_verdict(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    docs = write_jsonl(tmp_path / "docs.jsonl", DOCUMENTS)
    added = run_cli(home, "library", "add", str(docs), "--collection", "mine")
    assert added.returncode == 0, added.stderr
    assert "3 passage(s) added to the collection mine" in added.stdout
    out = tmp_path / "out"
    question = "Does supervised exercise increase walking distance?"
    result = run_cli(
        home, "research", question, "--no-llm", "--sources", "library", "--collection", "mine", "--out", str(out), "-q"
    )
    assert result.returncode == 0, result.stderr
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert markdown.split("## ")[1].startswith("Verdict")
    assert "This run uses no language model" in markdown
    record = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert record["verdict"]["by"] == "code"
    assert record["llm_usage"]["requests"] == 0
    assert not record["degraded"]


def test_a_missing_jsonl_file_exits_2_naming_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    result = run_cli(home, "library", "add", str(tmp_path / "absent.jsonl"))
    assert result.returncode == 2
    assert "absent.jsonl: no such file" in result.stderr


VOLATILE = re.compile(r"research-\d{8}-\d{6}-[0-9a-f]{6}")


async def demo_markdown(home: Path) -> str:
    settings = load_settings(demo_mode=True, home=home)
    async with http_client(settings) as client:
        outcome = await Orchestrator(assemble(settings, client)).research("Do statins reduce mortality in sepsis?")
    return VOLATILE.sub("RUN", outcome.markdown)


async def test_two_demo_runs_on_one_home_give_the_same_report(tmp_path: Path) -> None:
    first = await demo_markdown(tmp_path / "home")
    second = await demo_markdown(tmp_path / "home")
    assert first == second
    assert first.split("## ")[1].startswith("Verdict")
    # The demo's store is its own: the user's store directory was never created.
    assert not (tmp_path / "home" / "chroma").exists()


def test_a_verdict_the_counted_items_contradict_is_stated_as_mixed() -> None:
    mixed = Strength(weights={"favourable": 1.0, "null": 1.0, "unfavourable": 0.0})
    one_way = Strength(weights={"favourable": 3.0, "null": 0.0, "unfavourable": 0.0})
    leaning = {"yes": 0.43, "no": 0.32, "maybe": 0.25}
    weak_yes = Verdict(label="yes", confidence=0.43, by="code", rationale="pooled.", probabilities=leaning)
    question = "Could metformin slow Alzheimer's disease?"
    assert reconciled(weak_yes, question, mixed).label == "maybe"
    assert "mixed" in (reconciled(weak_yes, question, mixed).rationale or "")
    assert reconciled(weak_yes.model_copy(update={"label": "supported"}), "Metformin slows AD.", mixed).label == "mixed"
    # A strong lean, or counted results that agree, keep the verdict; insufficient stays insufficient.
    assert reconciled(weak_yes.model_copy(update={"confidence": 0.7}), question, mixed).label == "yes"
    assert reconciled(weak_yes, question, one_way).label == "yes"
    nothing = Verdict(label="insufficient", confidence=0.0, by="code")
    assert reconciled(nothing, question, mixed).label == "insufficient"
    # However strong the pooled stance, a yes does not rest on a best-level study that found no effect: it
    # names it as reading against it.
    strong_yes = weak_yes.model_copy(
        update={"confidence": 0.8, "probabilities": {"yes": 0.8, "no": 0.1, "maybe": 0.1}, "evidence_ids": ["pmid:1"]}
    )
    best_is_null = strength_of("Does vitamin D supplementation reduce fracture risk?", [NULL_TRIAL])
    assert best_is_null.directions[NULL_TRIAL.id] == "null"
    contradicted = reconciled(strong_yes, "Does vitamin D supplementation reduce fracture risk?", best_is_null)
    assert contradicted.label == "yes"
    assert contradicted.against_ids == [NULL_TRIAL.id]
    assert NULL_TRIAL.id not in contradicted.evidence_ids
    assert contradicted.strongest_level is None


def test_an_extractive_report_quotes_nothing_when_nothing_is_on_the_question() -> None:
    report = extractive_report("Does melatonin prevent delirium in ICU patients?", [NULL_TRIAL, POSITIVE_TRIAL])
    assert report.key_findings == []
    assert report.contrary_evidence == []
    on_topic = extractive_report("Does vitamin D supplementation reduce fracture risk?", [NULL_TRIAL, POSITIVE_TRIAL])
    assert [i for finding in (*on_topic.key_findings, *on_topic.contrary_evidence) for i in finding.evidence_ids] == [
        NULL_TRIAL.id
    ]


def test_eval_prints_only_its_summary_on_stdout_and_adds_up_the_time_of_every_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    items = tmp_path / "items.json"
    items.write_text(json.dumps(pubmedqa_items()), encoding="utf-8")
    out = tmp_path / "eval"
    first = run_cli(home, "eval", "pubmedqa", str(items), "--no-llm", "--limit", "2", "--out", str(out))
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)  # nothing but the summary: no log line
    assert summary["items"] == 2
    second = run_cli(home, "eval", "pubmedqa", str(items), "--no-llm", "--out", str(out))
    assert second.returncode == 0, second.stderr
    resumed = json.loads(second.stdout)
    assert resumed["items"] == 3
    assert resumed["sessions"] == 2
    assert resumed["setup_seconds"] >= summary["setup_seconds"]
    assert resumed["predict_seconds"] >= summary["predict_seconds"]


def test_an_extractive_report_with_nothing_counted_quotes_no_study_of_another_treatment() -> None:
    # The empagliflozin trial names most of a colchicine question's terms (cardiovascular events after myocardial
    # infarction) but not colchicine: it is quoted neither as a finding nor as contrary evidence.
    other = EvidenceView(
        id="pmid:7",
        title="Empagliflozin after acute myocardial infarction: a randomised trial",
        source="pubmed",
        date="2024",
        text="Cardiovascular events after myocardial infarction did not differ. Adverse events were similar, with "
        "no excess of ketoacidosis or hypotension.",
        design="randomized_controlled_trial",
        level=2,
        population="humans",
        n=6522,
        document="pmid:7",
    )
    report = extractive_report("Does colchicine reduce cardiovascular events after myocardial infarction?", [other])
    assert report.key_findings == []
    assert report.contrary_evidence == []
