"""The extractive report's answer in brief: a short answer computed from the counted items (what the strongest
studies in people found, which way the weighed evidence leans), citing every item it counts; rendered with
reference numbers through the same path as every other citation."""

from __future__ import annotations

import re

import pytest

from deepcritical.appraisal.assessment import code_assessment
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.strength import strength_of
from deepcritical.appraisal.verdict import counted_verdict
from deepcritical.models import Evidence, Grade
from deepcritical.report.citations import verify_citations
from deepcritical.report.extractive import MAX_CONTRARY, extractive_report
from deepcritical.report.render import RenderContext, render_markdown
from helpers.research_fakes import CORPUS, QUESTION, corpus_evidence


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
    ("items", "lean"),
    # Over the whole corpus: three favourable, one null, one harm (B12); "the findings suggest metformin may
    # benefit ..." only speculates and states no result (the trial's result is "metformin improved memory recall").
    [(CORPUS[:3], "leans favourable"), (CORPUS[3:5], "leans against"), (CORPUS, "is mixed")],
)
def test_the_answer_leans_as_the_verdict_weighs_the_counted_studies(items: list[Evidence], lean: str) -> None:
    trials = views([graded(item, TRIAL) for item in items])
    brief = extractive_report(QUESTION, trials).answer_brief
    assert f"by design level, size and directness, the evidence {lean}" in brief
    # The brief says the answer the verdict gives over the same counted studies (issue 23, round 3, item 1).
    verdict = counted_verdict(QUESTION, strength_of(QUESTION, trials), trials)
    assert lean == {"yes": "leans favourable", "no": "leans against", "maybe": "is mixed"}[verdict.label]
    counts = r"(\d+) counted stud\(ies\)\D+(\d+) favourable\D+(\d+) null\D+(\d+) unfavourable"
    assert re.findall(counts, brief) == re.findall(counts, verdict.rationale)


def test_the_brief_states_no_lean_beside_a_verdict_the_stance_model_gave() -> None:
    # Ungraded items are not weighed: the verdict reads their whole text, and the brief only counts them.
    brief = extractive_report(QUESTION, views(CORPUS[3:5])).answer_brief
    assert brief.startswith("No counted study in people is graded on the OCEBM scale.")
    assert "2 counted studies state a result (1 null (no effect) and 1 unfavourable)" in brief
    assert "leans" not in brief
    assert "mixed" not in brief


def test_the_answer_starts_from_the_strongest_studies_in_people_and_cites_each() -> None:
    items = views(GRADED)
    brief = extractive_report(QUESTION, items, assessment=code_assessment(QUESTION, items)).answer_brief
    trials = [CORPUS[1].id, CORPUS[3].id]
    assert brief.startswith("The strongest evidence in people is at OCEBM level 2 (randomised trials): 2 studies")
    strongest = brief.split("Weighing")[0]
    # The first trial's abstract states a result ("metformin improved memory recall") and then speculates ("may
    # benefit"): its result is the first sentence's.
    assert "1 favourable and 1 null (no effect)" in strongest
    assert set(re.findall(r"pmid:\d+", strongest)) == set(trials)
    assert "/10" not in brief  # the judge's scores have their own section, capped there


def test_favourable_results_from_animals_only_are_flagged_and_thin_evidence_is_hedged() -> None:
    mice = corpus_evidence(
        60, "Metformin improved spatial memory in transgenic mice with Alzheimer's disease pathology."
    )
    brief = extractive_report(QUESTION, views([graded(mice, MICE), GRADED[5]])).answer_brief
    assert "None of the favourable results comes from a study in people." in brief
    assert "weak indication" in brief
    ungraded = extractive_report(QUESTION, views([mice, CORPUS[5]])).answer_brief
    assert "None of the favourable results" not in ungraded  # who was studied is unknown: no claim either way


def test_evidence_without_a_clear_result_does_not_settle_the_question() -> None:
    plain = corpus_evidence(61, "Metformin is a biguanide drug and Alzheimer's disease is a dementia of older age.")
    brief = extractive_report(QUESTION, views([plain])).answer_brief
    assert "None of the counted studies states a clear favourable, null or unfavourable result." in brief


def test_every_item_is_counted_and_cited_though_only_some_are_quoted() -> None:
    nulls = [
        corpus_evidence(70 + i, f"In trial {i}, metformin did not improve cognition in Alzheimer's disease patients.")
        for i in range(MAX_CONTRARY + 3)
    ]
    report = extractive_report(QUESTION, views(nulls))
    quoted = {i for finding in report.contrary_evidence for i in finding.evidence_ids}
    assert len(quoted) < len(nulls)
    assert f"{len(nulls)} counted studies state a result" in report.answer_brief
    assert set(re.findall(r"pmid:\d+", report.answer_brief)) == {item.id for item in nulls}


def test_the_answer_renders_every_id_as_a_reference_number() -> None:
    collected = {item.id: item for item in CORPUS}
    report, audit = verify_citations(extractive_report(QUESTION, views(CORPUS)), collected, question=QUESTION)
    assert audit.clean
    assert re.findall(r"pmid:\d+", report.answer_brief)
    markdown = render_markdown(report, collected, RenderContext(demo=False, stop_reason="sufficient"))
    answer = markdown.split("## Answer in brief", 1)[1].split("##", 1)[0]
    assert re.search(r"\\\[\d+(?:, \d+)*\\\]", answer)
    assert "pmid:" not in answer
    assert "example.org" not in answer


NULL_TRIAL = (
    "BACKGROUND: Metformin modulates pathways implicated in Alzheimer's disease. RESULTS: Executive function "
    "z-scores did not differ from placebo (p=0.41), and CSF tau was unchanged. CONCLUSIONS: Eight weeks of "
    "metformin reached "
    "the brain but did not change CSF markers of amyloid or tau pathology, or global cognition, in mild dementia."
)
HARM = (
    "BACKGROUND: Metformin is proposed as a neuroprotective agent. CONCLUSIONS: Metformin increased "
    "amyloidogenic APP processing compared with vehicle, a potentially harmful action in Alzheimer's disease. "
    "It should be weighed against reported benefits before metformin is repurposed."
)


@pytest.mark.parametrize("text", [NULL_TRIAL, HARM])
def test_a_null_or_harmful_conclusion_is_contrary_evidence_in_the_report_and_for_the_judge(text: str) -> None:
    item = graded(corpus_evidence(90, text), TRIAL)
    report = extractive_report(QUESTION, views([item]))
    assert [i for f in report.contrary_evidence for i in f.evidence_ids] == [item.id]
    assert report.key_findings == []
    # One direct study answers (issue 38: the stance model no longer does), and the brief says which way it reads.
    assert "1 favourable" not in report.answer_brief
    assert "the evidence leans against" in report.answer_brief
    assert "1 null" in report.answer_brief or "1 unfavourable" in report.answer_brief
    judged = code_assessment(QUESTION, views([item]))
    assert "1 reports null, negative or unfavourable" in judged.candidate_answers[0]


def test_a_structured_abstract_is_quoted_from_its_conclusions() -> None:
    report = extractive_report(QUESTION, views([corpus_evidence(91, NULL_TRIAL)]))
    assert report.contrary_evidence[0].statement.startswith("Eight weeks of metformin")


def test_a_title_that_states_a_harm_files_an_item_cut_before_its_conclusions_as_contrary() -> None:
    text = "RESULTS: In APP/PS1 mice on metformin, insoluble cortical Aβ42 increased by 23% (p=0.04)."
    title = "Metformin increases BACE1 expression and amyloid-β generation in APP/PS1 mice."
    report = extractive_report(QUESTION, views([corpus_evidence(92, text, title=title)]))
    assert report.key_findings == []
    assert report.contrary_evidence[0].statement.startswith("In APP/PS1 mice")


def test_each_study_is_quoted_where_the_strength_table_reads_it() -> None:
    """The table owns each study's reading: a favourable row is a key finding, a null or unfavourable row
    contrary evidence, and a row of no clear result is not quoted (the mice study's "These results suggest a
    mechanism" and the B12 safety study were quoted before, one as a finding)."""
    items = views(CORPUS)
    strength = strength_of(QUESTION, items)
    assert None in strength.directions.values()  # the corpus holds studies of no clear result
    report = extractive_report(QUESTION, items)
    for findings, ways in ((report.key_findings, {"favourable"}), (report.contrary_evidence, {"null", "unfavourable"})):
        for finding in findings:
            assert {strength.directions[i] for i in finding.evidence_ids} <= ways, finding
    quoted = {i for finding in (*report.key_findings, *report.contrary_evidence) for i in finding.evidence_ids}
    assert quoted == set(strength.stated)


def test_a_title_is_never_quoted_as_a_finding() -> None:
    """A new user saw "[DEMO] Metformin increases BACE1 expression ..." (a title) quoted as contrary evidence:
    an item whose text holds no result sentence besides its title (a record without an abstract carries its
    title as its text) is not quoted, whatever its title claims."""
    title = "Metformin increases BACE1 expression and amyloid-β generation in APP/PS1 mice with Alzheimer's disease."
    item = corpus_evidence(93, title, title=title)
    report = extractive_report(QUESTION, views([item]))
    statements = [finding.statement for finding in (*report.key_findings, *report.contrary_evidence)]
    assert title not in statements
    assert not any("BACE1" in statement for statement in statements)


def test_when_nothing_is_counted_an_opening_sentence_quoted_is_never_the_title() -> None:
    """With no counted study, the items naming the question's first term are quoted by their opening
    sentence; a record without an abstract, whose text is its title, is not quoted by it."""
    title = "Metformin use and glycaemic control in type 2 diabetes: a narrative overview."
    item = corpus_evidence(94, title, title=title)
    assert not strength_of(QUESTION, views([item])).counted
    report = extractive_report(QUESTION, views([item]))
    assert [finding.statement for finding in report.key_findings] == []


def test_the_brief_tells_a_result_for_another_outcome_from_no_clear_result() -> None:
    """Two trials without a reading on the question: one states a result for another outcome (a significant
    memory score on a question about dementia), one states none; the brief says which is which."""
    from deepcritical.appraisal.strength import Strength
    from deepcritical.report.extractive import _directions

    strength = Strength(directions={"a": "favourable", "b": None, "c": None}, on_another_outcome={"b"})
    assert _directions(strength, ["a", "b", "c"]) == (
        "1 favourable, 1 with a result for another outcome only and 1 with no clear result"
    )
    assert _directions(strength, ["c"]) == "1 with no clear result"
