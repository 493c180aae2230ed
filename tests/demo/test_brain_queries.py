"""The demo Brain's queries add only terms of background about the question's own subject (issue 23 follow-up):
a lookup sentence that shares an outcome ("mortality") or a condition with another intervention's topic gives
no term, so "Which drugs reduce mortality in sepsis?" is never searched with "SGLT2"."""

from __future__ import annotations

import pytest

from deepcritical.demo.corpus import search
from deepcritical.demo.models import demo_queries
from deepcritical.demo.records import YouRecord
from deepcritical.questions import key_terms

# Another topic's background that shares the question's outcome or condition, with a technical term repeated.
SHARES_THE_OUTCOME = (
    "SGLT2 inhibitors are recommended to reduce hospitalisation, although no reduction in mortality was shown. "
    "SGLT2 inhibitors lowered mortality in heart failure."
)
SHARES_THE_CONDITION = "IVC-50 lowered mortality in sepsis. In septic shock, IVC-50 was given within 6 hours of sepsis."


def _added(question: str, contexts: list[str]) -> set[str]:
    """The words the planner's queries add to what the question says."""
    said = {word.lower() for word in key_terms(question)}
    queries = [
        query
        for iteration in (1, 2)
        for query in demo_queries({"question": question, "iteration": iteration}, contexts)
    ]
    return {word for query in queries for word in query.split() if word.lower() not in said}


@pytest.mark.parametrize(
    ("question", "context", "unrelated"),
    [
        ("Which drugs reduce mortality in sepsis?", SHARES_THE_OUTCOME, "SGLT2"),
        ("Do statins reduce mortality in sepsis?", SHARES_THE_OUTCOME, "SGLT2"),
        ("Do statins reduce mortality in sepsis?", SHARES_THE_CONDITION, "IVC-50"),
    ],
)
def test_a_term_from_another_topics_background_joins_no_query(question: str, context: str, unrelated: str) -> None:
    assert unrelated not in _added(question, [context])


def test_a_term_from_background_about_the_subject_joins_a_query() -> None:
    about = "Statins inhibit HMG-CoA reductase. Statins act on HMG-CoA pathways in the liver."
    assert "HMG-CoA" in _added("Do statins reduce mortality in sepsis?", [SHARES_THE_CONDITION, about])
    # An open question's subject is its condition: what is said about sepsis is about the question.
    assert "IVC-50" in _added("Which drugs reduce mortality in sepsis?", [SHARES_THE_CONDITION])
    # "statin" is read from a word's start: nystatin is not a statin.
    assert "HMG-CoA" not in _added("Do statins reduce mortality in sepsis?", ["Nystatin HMG-CoA. Nystatin HMG-CoA."])


def test_the_demo_open_question_on_sepsis_is_not_searched_with_another_topics_drug() -> None:
    """The demo's own lookups (the You.com stand-in over the corpus), as the Brain makes them."""
    question = "Which drugs reduce mortality in sepsis?"
    contexts = []
    for term in key_terms(question)[:2]:
        records = search("you", f"What is {term} in biomedical research? Definition and mechanism.", k=10)
        contexts.append("\n".join(s for r in records if isinstance(r, YouRecord) for s in r.snippets))
    assert any("SGLT2" in context for context in contexts)  # the lookups do bring another topic's background
    added = _added(question, contexts)
    assert not {"SGLT2", "dapagliflozin", "empagliflozin"} & added, added
