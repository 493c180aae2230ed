"""The demo Judge's and the extractive report's algorithms: simple, and verifiably honest."""

from __future__ import annotations

import pytest
from research_fakes import CORPUS, QUESTION, evidence

from deepcritical.stages.assessment import code_assessment
from deepcritical.stages.extractive import extractive_report, sentences
from deepcritical.stages.framing import EvidenceView
from deepcritical.stages.reading import aspects_of, context_terms, key_terms, reads_contrary


def views(items: list) -> list[EvidenceView]:  # type: ignore[type-arg]
    return [EvidenceView.of(item) for item in items]


def test_key_terms_drop_question_words() -> None:
    assert key_terms(QUESTION) == ["metformin", "Alzheimer's"]
    assert key_terms("Does exercise reduce depression in older adults?") == [
        "exercise",
        "reduce",
        "depression",
        "older",
        "adults",
    ]


def test_context_terms_prefer_repeated_technical_terms_not_in_the_query() -> None:
    context = "Metformin activates AMPK. AMPK lowers insulin resistance. Metformin is cheap."
    assert context_terms(context, exclude=["metformin"]) == ["AMPK"]


def test_aspects_of_text() -> None:
    assert aspects_of("A randomized trial in patients") == {"clinical"}
    assert aspects_of("Metformin activates AMPK in mice") == {"mechanism"}
    assert "safety" in aspects_of("Treatment did not improve cognition")


def test_assessment_is_sufficient_only_when_every_aspect_is_covered() -> None:
    full = code_assessment(QUESTION, views(CORPUS), capped=False)
    assert full.sufficient
    assert min(full.scores.values()) >= 7
    assert full.gaps == []
    # None of these items is graded as a study in people, so the caps take clinical evidence down to 2.
    capped = code_assessment(QUESTION, views(CORPUS))
    assert capped.scores["clinical"] == 2
    assert not capped.sufficient
    assert {cap.aspect for cap in capped.caps} >= {"clinical", "sufficient"}
    mechanism_only = code_assessment(QUESTION, views(CORPUS[:1]), capped=False)
    assert not mechanism_only.sufficient
    assert mechanism_only.scores["clinical"] == 0
    assert any("clinical" in query for query in mechanism_only.next_queries)
    assert mechanism_only.confidence < full.confidence


def test_items_off_the_question_do_not_count() -> None:
    text = "A randomized trial of aspirin in patients with safety outcomes."
    off_topic = [evidence(i, text, title=f"Aspirin trial {i}") for i in range(5)]
    verdict = code_assessment(QUESTION, views(off_topic))
    assert verdict.scores == {"mechanism": 0, "clinical": 0, "safety": 0}
    assert not verdict.sufficient


def test_sentences_drop_section_labels() -> None:
    text = (
        "BACKGROUND: Metformin is a drug used widely for diabetes. RESULTS: Metformin reduced amyloid load in mice. "
        "Too short."
    )
    assert sentences(text) == [
        "Metformin is a drug used widely for diabetes.",
        "Metformin reduced amyloid load in mice.",
    ]


def test_extractive_report_quotes_and_cites_each_sentence() -> None:
    items = views(CORPUS)
    report = extractive_report(QUESTION, items)
    texts = {item.id: item.text for item in items}
    assert report.key_findings
    assert report.contrary_evidence
    for finding in (*report.key_findings, *report.contrary_evidence):
        assert all(finding.statement in texts[i] for i in finding.evidence_ids)
    assert any("did not" in finding.statement for finding in report.contrary_evidence)
    assert set(report.references) == {
        i for f in (*report.key_findings, *report.contrary_evidence) for i in f.evidence_ids
    }


@pytest.mark.parametrize(
    ("sentence", "contrary"),
    [
        ("Long-term use was associated with a higher risk of AD (OR 1.28).", True),
        ("The pooled association was no longer significant (RR 0.95).", True),
        ("Metformin did not slow cognitive decline over 24 months.", True),
        (
            "Starting metformin was linked to a 16% lower risk of dementia, with no association in people "
            "with reduced kidney function.",
            False,
        ),
        ("Metformin reduced phospho-tau by 27% and improved memory.", False),
        ("Metformin lowers hepatic glucose production.", False),
    ],
)
def test_a_sentence_reads_contrary_by_its_main_claim(sentence: str, contrary: bool) -> None:
    assert reads_contrary(sentence) is contrary
