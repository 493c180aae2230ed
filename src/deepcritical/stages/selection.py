"""What a model reads of the run's evidence (the Judge each round, the Report agent at the end): the
strongest studies that address the question directly first (best OCEBM level, then the most direct, then
the largest), then the store's relevant and diverse ranking for the rest, each study once: by its
abstract, else its results passage, never its methods alone. Before this, a Judge could be shown a forum
thread, two registrations and an editorial while the meta-analysis and both trials were collected."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from deepcritical.appraisal.framing import REPORT_TEXT_CHARS, EvidenceView, study_key
from deepcritical.appraisal.passages import share_named
from deepcritical.appraisal.strength import is_lab
from deepcritical.appraisal.studies import group_studies, readable
from deepcritical.appraisal.topic import Topic, on_topic, topic_of
from deepcritical.models import Evidence
from deepcritical.questions import key_terms, stem
from deepcritical.reading.frame import frame_question, terms_of

# The share of a selection given to the strongest direct studies; the rest keeps relevance and diversity
# (mechanism and safety items a judge needs too).
STRONGEST_SHARE = 0.5


# OCEBM level 5 is mechanism-based reasoning: reviews, editorials and guidelines, not studies of their own.
MAX_STUDY_LEVEL = 4


def _graded_study(view: EvidenceView, topic: Topic) -> bool:
    """A study in people, graded on the OCEBM scale (levels 1-4), that reports results and names the question."""
    return (
        view.level is not None
        and view.level <= MAX_STUDY_LEVEL
        and not is_lab(view)
        and view.design != "registered_trial"
        and not view.retracted
        and on_topic(view, topic)
    )


def strongest_studies(question: str, collected: Sequence[Evidence]) -> list[list[Evidence]]:
    """The collected studies in people that name the question, strongest first: OCEBM level, then how much
    of the question's frame (intervention, population, outcomes) they name, then the number of participants."""
    stems = [stem(term) for term in key_terms(question)]
    topic = topic_of(question)
    framed = [stem(term) for term in terms_of(frame_question(question).entities) if len(term) >= 3] or stems
    ranked: list[tuple[tuple[int, float, int], list[Evidence]]] = []
    for group in group_studies(collected):
        views = [EvidenceView.of(item, REPORT_TEXT_CHARS) for item in group]
        graded = [view for view in views if _graded_study(view, topic)]
        if not graded:
            continue
        level = min(view.level for view in graded if view.level is not None)
        direct = max(share_named(framed, f"{view.title} {view.text}") for view in graded)
        size = max((view.n or 0) for view in graded)
        ranked.append(((level, -round(direct, 1), -size), group))
    ranked.sort(key=lambda pair: pair[0])
    return [group for _, group in ranked]


def select_studies(
    question: str, ranked: Sequence[Evidence], collected: Mapping[str, Evidence], k: int
) -> list[Evidence]:
    """At most ``k`` items: the strongest direct studies (up to ``STRONGEST_SHARE`` of ``k``), then the
    studies of ``ranked`` (a relevance and diversity order) in that order; every study read once
    (``studies.readable``) from what was ``collected``."""
    if k <= 0:
        return []
    strongest = strongest_studies(question, list(collected.values()))
    by_study = {study_key(group[0]): group for group in group_studies(collected.values())}
    order = [study_key(group[0]) for group in strongest[: math.ceil(STRONGEST_SHARE * k)]]
    order += [study_key(group[0]) for group in group_studies(ranked)]
    chosen: list[Evidence] = []
    for key in dict.fromkeys(order):
        parts = readable(by_study.get(key, []))
        chosen += parts[: k - len(chosen)]
        if len(chosen) >= k:
            break
    return chosen


# Words of a query that ask for a study design, by the designs that answer them: a query for "clinical
# trials" is answered by a randomised trial collected, one for "systematic review" by a meta-analysis.
_DESIGN_ASKS: dict[str, tuple[re.Pattern[str], frozenset[str]]] = {
    "systematic reviews": (
        re.compile(r"\b(?:meta-?analys[ie]s|systematic reviews?)\b", re.IGNORECASE),
        frozenset({"meta_analysis", "systematic_review"}),
    ),
    "randomised trials": (
        re.compile(r"\b(?:randomi[sz]ed(?: controlled)? trials?|RCTs?|(?:clinical|controlled) trials?)\b", re.I),
        frozenset({"randomized_controlled_trial", "clinical_trial"}),
    ),
    "cohort studies": (re.compile(r"\bcohorts?(?: stud(?:y|ies))?\b", re.IGNORECASE), frozenset({"cohort"})),
    "case-control studies": (re.compile(r"\bcase-?control\b", re.IGNORECASE), frozenset({"case_control"})),
}
HELD_KINDS = frozenset(_DESIGN_ASKS)


def held_kinds(question: str, items: Iterable[Evidence]) -> list[str]:
    """The kinds of study ("randomised trials", ...) the run holds on the question: studies in people that
    name it, not retracted, not registrations."""
    topic = topic_of(question)
    views = (EvidenceView.of(item, REPORT_TEXT_CHARS) for item in items)
    designs = {view.design for view in views if _graded_study(view, topic)}
    return [kind for kind, (_, answering) in _DESIGN_ASKS.items() if answering & designs]


def asks_for_held_kind(query: str, held: Collection[str]) -> str | None:
    """The kind of study ``query`` asks for when the run holds one on the question already ("randomised
    trials"), else None: a search for it would find the studies the run holds."""
    return next((kind for kind in held if _DESIGN_ASKS[kind][0].search(query)), None)


def without_held_kinds(queries: Sequence[str], held: Collection[str]) -> list[str]:
    """``queries`` without those that ask for a kind of study the run holds on the question."""
    return [query for query in queries if asks_for_held_kind(query, held) is None]
