"""What a model reads of the run's evidence (the Judge each round, the Report agent at the end): the
strongest studies that address the question directly first (best OCEBM level, then the most direct, then
the largest), then the store's relevant and diverse ranking for the rest, each study read whole: its
abstract and its results passage, never its methods alone. Before this, a Judge could be shown a forum
thread, two registrations and an editorial while the meta-analysis and both trials were collected."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from deepcritical.models import Evidence
from deepcritical.reading.frame import frame_question, terms_of
from deepcritical.stages.framing import REPORT_TEXT_CHARS, EvidenceView, study_key
from deepcritical.stages.reading import key_terms, on_topic, share_named, stem
from deepcritical.stages.strength import is_lab
from deepcritical.stages.studies import group_studies, readable

# The share of a selection given to the strongest direct studies; the rest keeps relevance and diversity
# (mechanism and safety items a judge needs too).
STRONGEST_SHARE = 0.5


def _graded_study(view: EvidenceView, stems: Sequence[str]) -> bool:
    """A study in people, graded on the OCEBM scale, that reports results and names the question."""
    return (
        view.level is not None
        and not is_lab(view)
        and view.design != "registered_trial"
        and not view.retracted
        and on_topic(view, stems)
    )


def strongest_studies(question: str, collected: Sequence[Evidence]) -> list[list[Evidence]]:
    """The collected studies in people that name the question, strongest first: OCEBM level, then how much
    of the question's frame (intervention, population, outcomes) they name, then the number of participants."""
    stems = [stem(term) for term in key_terms(question)]
    framed = [stem(term) for term in terms_of(frame_question(question).entities) if len(term) >= 3] or stems
    ranked: list[tuple[tuple[int, float, int], list[Evidence]]] = []
    for group in group_studies(collected):
        views = [EvidenceView.of(item, REPORT_TEXT_CHARS) for item in group]
        graded = [view for view in views if _graded_study(view, stems)]
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
    studies of ``ranked`` (a relevance and diversity order) in that order; every study read whole
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
