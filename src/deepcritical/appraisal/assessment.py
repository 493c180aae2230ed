"""An assessment computed in code: aspect scores from how many relevant items cover each aspect (clinical
evidence weighed by its level: a meta-analysis or a randomised trial in humans counts for more than a
cohort, and animal or cell studies count for mechanism, not for clinical evidence), sufficiency when every
aspect is well covered, confidence from coverage and the number of sources, and gaps that name the study
designs missing. It stands in for the Judge when its model fails (labelled as built in code), and the demo
Judge is exactly this algorithm. It reads the same counted set as the report (``strength_of``: items that
name the question's key entities; retracted items count for nothing) and its scores are capped like a
model's (``appraisal.ratings.cap_assessment``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from deepcritical.appraisal.aspects import ASPECT_LABELS, ASPECT_QUERY_WORDS, ASPECTS, SUFFICIENT_SCORE, aspects_of
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.passages import informative, quote
from deepcritical.appraisal.ratings import cap_assessment
from deepcritical.appraisal.strength import strength_of
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.outputs import AspectScore, Assessment
from deepcritical.questions import key_terms, stem
from deepcritical.reading.frame import frame_question
from deepcritical.text import quantity
from deepcritical.vocabulary import (
    CLINICAL_SCORE_LEVEL_WEIGHTS,
    CLINICAL_SCORE_OUTSIDE_SCALE_WEIGHTS,
    CLINICAL_SCORE_UNGRADED_WEIGHT,
    REVIEW_DESIGNS,
    TRIAL_DESIGNS,
    is_lab_study,
)


def _score(covering: float) -> int:
    score: float = 10 * (1 - 0.5**covering)
    return min(10, round(score))


def _level_rank(item: EvidenceView) -> int:
    return item.level if item.level is not None else 6


def _non_human(item: EvidenceView) -> bool:
    return is_lab_study(item.population, item.design)


def _clinical_weight(item: EvidenceView) -> float:
    if _non_human(item) or item.design == "registered_trial":
        return 0.0
    if item.level is not None:
        return CLINICAL_SCORE_LEVEL_WEIGHTS.get(item.level, CLINICAL_SCORE_UNGRADED_WEIGHT)
    return CLINICAL_SCORE_OUTSIDE_SCALE_WEIGHTS.get(item.design, CLINICAL_SCORE_UNGRADED_WEIGHT)


def design_gaps(relevant: Sequence[EvidenceView]) -> tuple[list[str], list[str]]:
    """Gaps that name the designs missing among the relevant items, and the query words that would look
    for them. Nothing is said when no item is graded: what is missing cannot be told then."""
    if all(item.design == "unknown" for item in relevant):
        return [], []
    designs = {item.design for item in relevant if not _non_human(item)}
    gaps: list[str] = []
    words: list[str] = []
    if not designs & REVIEW_DESIGNS:
        gaps.append("No systematic review or meta-analysis among the evidence judged")
        words.append("systematic review meta-analysis")
    if not designs & TRIAL_DESIGNS:
        gaps.append("No randomised controlled trial among the evidence judged")
        words.append("randomized controlled trial")
    if not any(not _non_human(item) and item.design not in ("web", "unknown", "registered_trial") for item in relevant):
        gaps.append("No published study in humans among the evidence judged")
    return gaps, words


def code_assessment(
    question: str, items: Sequence[EvidenceView], *, capped: bool = True, reader: StudyReader | None = None
) -> Assessment:
    """Scores from how many counted items cover each aspect; sufficient when every aspect reaches
    ``SUFFICIENT_SCORE``; confidence from coverage and the number of independent sources. ``capped``: with the
    ceilings of ``appraisal.ratings`` applied (the demo Judge leaves that to the Judge stage, as for a model).
    ``reader``: the run's reader of the question's studies (else the linear one)."""
    stems = [stem(term) for term in key_terms(question)]
    strength = strength_of(question, items, reader)
    # Web pages and commentary are not counted studies, but the Judge weighs what it was shown of them.
    on_topic = set(strength.counted) | set(strength.registrations) | set(strength.not_studies)
    relevant = [item for item in items if item.id in on_topic]
    covering = {
        name: [item.id for item in relevant if name in aspects_of(informative(f"{item.title}. {item.text}"))]
        for name in ASPECTS
    }
    # Animal and cell studies are mechanism evidence whatever words they use; never clinical evidence.
    covering["mechanism"] += [i.id for i in relevant if _non_human(i) and i.id not in covering["mechanism"]]
    # A graded study in people is clinical evidence whatever words its slice of text uses.
    covering["clinical"] += [
        i.id for i in relevant if i.level is not None and not _non_human(i) and i.id not in covering["clinical"]
    ]
    by_id = {item.id: item for item in relevant}
    covering["clinical"] = [i for i in covering["clinical"] if _clinical_weight(by_id[i]) > 0]
    clinical_weight = sum(_clinical_weight(by_id[i]) for i in covering["clinical"])
    scores = {name: _score(len(ids)) for name, ids in covering.items()}
    scores["clinical"] = _score(clinical_weight)
    sources = {source for item in relevant for source in (item.found_by or [item.source])}
    coverage = sum(scores.values()) / (10 * len(ASPECTS))
    confidence = round(0.75 * coverage + 0.25 * min(1.0, len(sources) / 3), 2)
    base = frame_question(question).base

    weak = [name for name in ASPECTS if scores[name] < SUFFICIENT_SCORE]
    missing, design_words = design_gaps(relevant)
    gaps = [f"Little or no evidence on {ASPECT_LABELS[name]}" for name in weak] + missing
    if not relevant:
        gaps.append("None of the items judged is on the question's topic")
    elif len(sources) < 2:
        gaps.append(f"On-topic evidence comes from {len(sources)} source only")
    # The same classifier as the extractive report's: an item is contrary when its quoted result reads contrary.
    contrary = [item.id for item in relevant if (found := quote(item, stems)) is not None and found.contrary]
    supportive = len(relevant) - len(contrary)
    answers = [
        f"{quantity(supportive, 'relevant item')} {'reports' if supportive == 1 else 'report'} results consistent with "
        f"the question; {len(contrary)} {'reports' if len(contrary) == 1 else 'report'} null, negative or unfavourable "
        "results."
    ]
    assessment = Assessment(
        mechanism=AspectScore(score=scores["mechanism"], reason=_reason("mechanism", covering, relevant)),
        clinical=AspectScore(score=scores["clinical"], reason=_reason("clinical", covering, relevant)),
        safety=AspectScore(score=scores["safety"], reason=_reason("safety", covering, relevant)),
        sufficient=not weak and bool(relevant),
        confidence=confidence,
        gaps=gaps,
        next_queries=[f"{base} {ASPECT_QUERY_WORDS[name]}" for name in weak] + [f"{base} {w}" for w in design_words],
        candidate_answers=answers if relevant else [],
        cited_ids=[item.id for item in relevant],
    )
    return cap_assessment(assessment, strength, "judged") if capped else assessment


def _cite(ids: Sequence[str], budget: int = 380) -> str:
    """Every id when they fit in a reason (a model's sentence is bounded), else as many as fit, said so."""
    shown: list[str] = []
    for i in ids:
        if len(", ".join([*shown, i])) > budget:
            break
        shown.append(i)
    return f"({', '.join(shown)})" if len(shown) == len(ids) else f"(among them {', '.join(shown)})"


def _reason(name: str, covering: Mapping[str, Sequence[str]], relevant: Sequence[EvidenceView]) -> str:
    """Why an aspect scored what it did: the on-topic items that address it."""
    ids = covering[name]
    if not ids:
        return f"None of the {len(relevant)} on-topic items judged addresses {ASPECT_LABELS[name]}."
    if name == "clinical":
        by_id = {item.id: item for item in relevant}
        # Strongest first, so the reason names the best evidence.
        ids = sorted(ids, key=lambda i: _level_rank(by_id[i]))
        best = by_id[ids[0]]
        studies = sum(by_id[i].level is not None for i in ids)
        level = f", the strongest at OCEBM level {best.level}" if best.level else ""
        return (
            f"{len(ids)} of {len(relevant)} on-topic items judged speak to clinical use in people: "
            f"{quantity(studies, 'graded study', 'graded studies')}{level}, the rest commentary, web pages or "
            f"ungraded items, weighed less {_cite(ids)}."
        )
    return f"{len(ids)} of {len(relevant)} on-topic items judged address {ASPECT_LABELS[name]} {_cite(ids)}."
