"""The stance model reads only items that name more than a third of the question's key terms
(``stance.MIN_COVERAGE``): an item that names the drug alone is not a study of the question."""

from __future__ import annotations

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.stance import code_verdict, coverage
from deepcritical.questions import key_terms

THREE_TERMS = "Does metformin prevent dementia?"  # metformin, prevent, dementia
FOUR_TERMS = "Does metformin prevent dementia in diabetes?"
FIVE_TERMS = "Does metformin prevent dementia in older diabetics?"


def cohort(item_id: str, title: str, text: str) -> EvidenceView:
    return EvidenceView(
        id=item_id, title=title, source="pubmed", date="2020", text=text, design="cohort", level=3, document=item_id
    )


# Names metformin alone, with a clear result on another condition.
DRUG_ONLY = cohort(
    "pmid:1",
    "Metformin and kidney stones: a cohort study",
    "RESULTS: Metformin users had fewer kidney stones than non-users (HR 0.70, 95% CI 0.60 to 0.82; p < 0.001).",
)
# Names metformin and dementia.
DRUG_AND_OUTCOME = cohort(
    "pmid:2",
    "Metformin and dementia: a cohort study",
    "RESULTS: Metformin users had less dementia than non-users (HR 0.70, 95% CI 0.60 to 0.82; p < 0.001).",
)


def test_the_questions_have_the_key_terms_the_shares_below_are_counted_over() -> None:
    assert [len(key_terms(question)) for question in (THREE_TERMS, FOUR_TERMS, FIVE_TERMS)] == [3, 4, 5]
    assert coverage(FOUR_TERMS, f"{DRUG_ONLY.title} {DRUG_ONLY.text}") == 0.25
    assert coverage(THREE_TERMS, f"{DRUG_ONLY.title} {DRUG_ONLY.text}") == 1 / 3
    assert coverage(FIVE_TERMS, f"{DRUG_AND_OUTCOME.title} {DRUG_AND_OUTCOME.text}") == 0.4


def test_an_item_naming_fewer_than_a_third_of_the_key_terms_is_not_read() -> None:
    verdict = code_verdict(FOUR_TERMS, [DRUG_ONLY])
    assert verdict.label == "insufficient"
    assert verdict.rationale == "None of the 1 item reviewed names enough of the question's key terms."


def test_naming_exactly_a_third_is_not_enough_either() -> None:
    """One term of three (the drug alone) is not the question: the gate sits just above a third."""
    assert code_verdict(THREE_TERMS, [DRUG_ONLY]).label == "insufficient"


def test_beside_a_study_of_the_question_the_drug_only_item_is_left_out() -> None:
    verdict = code_verdict(THREE_TERMS, [DRUG_ONLY, DRUG_AND_OUTCOME])
    assert verdict.label == "yes"
    assert verdict.evidence_ids == ["pmid:2"]
    assert (verdict.rationale or "").startswith("1 study of the 2 items reviewed weighed")


def test_two_terms_of_five_are_read() -> None:
    verdict = code_verdict(FIVE_TERMS, [DRUG_AND_OUTCOME])
    assert verdict.label != "insufficient"
    assert verdict.evidence_ids == ["pmid:2"]
