"""The extractive report's answer in brief: a hedged answer computed from how the quoted sentences read
and from the judge's scores, citing collected ids (never a URL) through the same rendering path."""

from __future__ import annotations

import re

import pytest
from research_fakes import CORPUS, QUESTION, evidence

from deepcritical.models import Evidence, Grade
from deepcritical.stages.assessment import code_assessment
from deepcritical.stages.citations import verify_citations
from deepcritical.stages.extractive import MAX_CONTRARY, extractive_report
from deepcritical.stages.framing import EvidenceView
from deepcritical.stages.render import RenderContext, render_markdown


def views(items: list[Evidence]) -> list[EvidenceView]:
    return [EvidenceView.of(item) for item in items]


def graded(item: Evidence, grade: Grade) -> Evidence:
    return item.model_copy(update={"grade": grade})


TRIAL = Grade(design="randomized_controlled_trial", level=2, population="humans", basis="publication_type")
COHORT = Grade(design="cohort", level=3, population="humans", basis="mesh")
MICE = Grade(design="preclinical", population="animals", basis="mesh")
WEB = Grade(design="web", population="humans", basis="source")
GRADED = [
    graded(CORPUS[0], MICE),
    graded(CORPUS[1], TRIAL),
    graded(CORPUS[2], WEB),
    graded(CORPUS[3], TRIAL),
    graded(CORPUS[4], WEB),
    graded(CORPUS[5], MICE),
]


@pytest.mark.parametrize(
    ("items", "lean", "counts"),
    [
        (CORPUS[:3], "leans favourable", "(2): 2 favourable"),
        (CORPUS[3:5], "leans against", "(2): 1 null (no effect) and 1 unfavourable"),
        (CORPUS, "is mixed", "(5): 3 favourable, 1 null (no effect) and 1 unfavourable"),
    ],
)
def test_the_answer_leans_by_how_the_quoted_sentences_read(items: list[Evidence], lean: str, counts: str) -> None:
    brief = extractive_report(QUESTION, views(items)).answer_brief
    assert brief.startswith(f"Weighing each item by its study design, the evidence reviewed {lean}.")
    assert f"Web pages and items of unknown design {counts}" in brief  # these test items carry no grade
    assert "extractive summary" in brief


def test_the_answer_counts_by_design_and_carries_the_judges_verdict() -> None:
    items = views(GRADED)
    assessment = code_assessment(QUESTION, items)
    brief = extractive_report(QUESTION, items, assessment=assessment).answer_brief
    assert "Randomised controlled trials (2): 1 favourable and 1 null (no effect)" in brief
    assert "Animal and cell studies (1): 1 favourable" in brief  # the other states no clear result
    assert "Web pages and items of unknown design (2): 1 favourable and 1 unfavourable" in brief
    assert (
        "The strongest evidence found is at OCEBM level 2 (randomised trials), and it is favourable and null" in brief
    )
    scores = assessment.scores
    assert f"mechanism {scores['mechanism']}/10, clinical evidence {scores['clinical']}/10" in brief
    assert f"confidence {assessment.confidence:.2f}" in brief
    without_judge = extractive_report(QUESTION, items).answer_brief
    assert "confidence is unknown" in without_judge


def test_favourable_results_from_animals_only_are_flagged_and_thin_evidence_is_hedged() -> None:
    mice = evidence(60, "Metformin improved spatial memory in transgenic mice with Alzheimer's disease pathology.")
    brief = extractive_report(QUESTION, views([graded(mice, MICE), GRADED[5]])).answer_brief
    assert "Animal and cell studies (2): 2 favourable" in brief
    assert "None of the favourable results comes from a study in humans." in brief
    assert "weak indication" in brief
    ungraded = extractive_report(QUESTION, views([mice, CORPUS[5]])).answer_brief
    assert "None of the favourable results" not in ungraded  # who was studied is unknown: no claim either way


def test_evidence_without_a_clear_result_does_not_settle_the_question() -> None:
    plain = evidence(61, "Metformin is a biguanide drug and Alzheimer's disease is a dementia of older age.")
    brief = extractive_report(QUESTION, views([plain])).answer_brief
    assert brief.startswith(
        "Weighing each item by its study design, the evidence reviewed does not settle the question."
    )
    assert "1 item(s) state no clear favourable, null or unfavourable result" in brief


def test_every_item_is_counted_though_only_some_are_quoted() -> None:
    nulls = [
        evidence(70 + i, f"In trial {i}, metformin did not improve cognition in Alzheimer's disease patients.")
        for i in range(MAX_CONTRARY + 3)
    ]
    report = extractive_report(QUESTION, views(nulls))
    quoted = {i for finding in report.contrary_evidence for i in finding.evidence_ids}
    assert f"({len(nulls)}): {len(nulls)} null (no effect)" in report.answer_brief
    named = set(re.findall(r"pmid:\d+", report.answer_brief))
    assert named
    assert len(named) <= 3
    assert named <= quoted  # the brief names only items the report quotes (and so lists as references)


def test_the_answer_cites_no_url_and_renders_ids_as_reference_numbers() -> None:
    collected = {item.id: item for item in CORPUS}
    report, audit = verify_citations(extractive_report(QUESTION, views(CORPUS)), collected, question=QUESTION)
    assert audit.clean
    named = re.findall(r"pmid:\d+", report.answer_brief)
    assert named
    assert "url:" not in report.answer_brief
    assert "http" not in report.answer_brief
    markdown = render_markdown(report, collected, RenderContext(demo=False, stop_reason="sufficient"))
    answer = markdown.split("## Answer in brief", 1)[1].split("##", 1)[0]
    number = report.references.index(named[0]) + 1
    assert f"see \\[{number}\\]" in answer
    assert "pmid:" not in answer
    assert "example.org" not in answer


NULL_TRIAL = (
    "BACKGROUND: Metformin modulates pathways implicated in Alzheimer's disease. RESULTS: Executive function "
    "z-scores improved slightly (p=0.04), but CSF tau was unchanged. CONCLUSIONS: Eight weeks of metformin reached "
    "the brain but did not change CSF markers of amyloid or tau pathology, or global cognition, in mild dementia."
)
HARM = (
    "BACKGROUND: Metformin is proposed as a neuroprotective agent. CONCLUSIONS: Metformin can promote "
    "amyloidogenic APP processing. This potentially harmful action should be weighed against reported benefits "
    "before metformin is repurposed for Alzheimer's disease."
)


@pytest.mark.parametrize("text", [NULL_TRIAL, HARM])
def test_a_null_or_harmful_conclusion_is_contrary_evidence_in_the_report_and_for_the_judge(text: str) -> None:
    item = evidence(90, text)
    report = extractive_report(QUESTION, views([item]))
    assert [i for f in report.contrary_evidence for i in f.evidence_ids] == [item.id]
    assert report.key_findings == []
    assert "the evidence reviewed leans against" in report.answer_brief
    assert ("(1): 1 null (no effect)" if text == NULL_TRIAL else "(1): 1 unfavourable") in report.answer_brief
    judged = code_assessment(QUESTION, views([item]))
    assert "1 report null, negative or unfavourable" in judged.candidate_answers[0]


def test_a_structured_abstract_is_quoted_from_its_conclusions() -> None:
    report = extractive_report(QUESTION, views([evidence(91, NULL_TRIAL)]))
    assert report.contrary_evidence[0].statement.startswith("Eight weeks of metformin")


def test_a_title_that_states_a_harm_files_an_item_cut_before_its_conclusions_as_contrary() -> None:
    text = "RESULTS: In APP/PS1 mice on metformin, insoluble cortical Aβ42 increased by 23% (p=0.04)."
    title = "Metformin increases BACE1 expression and amyloid-β generation in APP/PS1 mice."
    report = extractive_report(QUESTION, views([evidence(92, text, title=title)]))
    assert report.key_findings == []
    assert report.contrary_evidence[0].statement.startswith("In APP/PS1 mice")
