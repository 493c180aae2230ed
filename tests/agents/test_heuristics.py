"""The demo Judge's and the extractive report's algorithms: simple, and verifiably honest."""

from __future__ import annotations

import pytest

from deepcritical.appraisal.aspects import aspects_of
from deepcritical.appraisal.assessment import code_assessment
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.passages import Quote, context_terms, quote, reads_contrary, share_named
from deepcritical.questions import key_terms, stem
from deepcritical.report.extractive import extractive_report, sentences
from helpers.research_fakes import CORPUS, QUESTION, corpus_evidence


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


@pytest.mark.parametrize(
    ("question", "text", "share"),
    [
        # A word named by another form of it: its root, or its plural s folded.
        ("Does edaravone offer protection?", "Edaravone was protective in every group.", 2 / 3),
        ("Is the attenuation of injury real?", "Injury was attenuated.", 2 / 3),
        ("Do statins help?", "A statin was given.", 1.0),
        # A compound by every one of its parts, in any form.
        ("reperfusion-induced damage", "damage induced by ischemia and reperfusion", 1.0),
        ("reperfusion-induced injury", "reperfusion injury", 0.5),
        # A root too short to stand for its word is matched as written only: "rat" begins "rate".
        ("rats", "the response rate was high", 0.0),
        # A root matches at the start of a word, not inside one.
        ("validation", "an invalid score", 0.0),
    ],
)
def test_share_named_reads_forms_of_a_word_not_its_look_alikes(question: str, text: str, share: float) -> None:
    assert share_named([stem(term) for term in key_terms(question)], text) == pytest.approx(share)


def test_a_title_standing_in_for_a_missing_abstract_is_not_quoted_as_a_result() -> None:
    stems = [stem(term) for term in key_terms("Can metformin treat Alzheimer's disease?")]
    editorial = "Metformin for Alzheimer's disease: promising signals, premature conclusions."
    title_only = EvidenceView(id="pmid:1", title=editorial, source="pubmed", date="2021", text=editorial)
    assert quote(title_only, stems) is None
    # Nor is a title that states a contrary result (issue 23, a new user's third trial: "[DEMO] Metformin
    # increases BACE1 ..." was quoted): a title is a claim, and it only files the text's own sentence.
    claim = "Metformin increases amyloid generation in Alzheimer's disease models."
    contrary = EvidenceView(id="pmid:2", title=claim, source="pubmed", date="2021", text=claim)
    assert quote(contrary, stems) is None
    measured = "In mice with Alzheimer's disease pathology, metformin raised amyloid by 23% (p = 0.04)."
    with_text = EvidenceView(id="pmid:4", title=claim, source="pubmed", date="2021", text=f"{claim} {measured}")
    assert quote(with_text, stems) == Quote(measured, contrary=True)
    # With an abstract, its sentences are read as before.
    result = "Metformin improved memory scores in Alzheimer's disease (p < 0.01)."
    abstract = EvidenceView(id="pmid:3", title=editorial, source="pubmed", date="2021", text=f"{editorial} {result}")
    assert quote(abstract, stems) == Quote(result, contrary=False)


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
    off_topic = [corpus_evidence(i, text, title=f"Aspirin trial {i}") for i in range(5)]
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
