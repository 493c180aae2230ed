"""An assessment computed in code: aspect scores from how many relevant items cover each aspect,
sufficiency when every aspect is well covered, confidence from coverage and the number of sources.
It stands in for the Judge when its model fails (labelled as built in code), and the demo Judge is
exactly this algorithm."""

from __future__ import annotations

from collections.abc import Sequence

from deepcritical.outputs import AspectScore, Assessment
from deepcritical.stages.framing import EvidenceView
from deepcritical.stages.reading import (
    ASPECT_LABELS,
    ASPECT_QUERY_WORDS,
    ASPECTS,
    SUFFICIENT_SCORE,
    aspects_of,
    informative,
    is_relevant,
    key_terms,
    quote,
    stem,
)


def _score(covering: int) -> int:
    return min(10, round(10 * (1 - 0.5**covering)))


def code_assessment(question: str, items: Sequence[EvidenceView]) -> Assessment:
    """Scores from how many relevant items cover each aspect; sufficient when every aspect reaches
    ``SUFFICIENT_SCORE``; confidence from coverage and the number of independent sources."""
    stems = [stem(term) for term in key_terms(question)]
    relevant = [item for item in items if is_relevant(item, stems)]
    covering = {
        name: [item.id for item in relevant if name in aspects_of(informative(f"{item.title}. {item.text}"))]
        for name in ASPECTS
    }
    scores = {name: _score(len(ids)) for name, ids in covering.items()}
    sources = {source for item in relevant for source in (item.found_by or [item.source])}
    coverage = sum(scores.values()) / (10 * len(ASPECTS))
    confidence = round(0.75 * coverage + 0.25 * min(1.0, len(sources) / 3), 2)
    base = " ".join(key_terms(question)[:3])

    def reason(name: str) -> str:
        ids = covering[name]
        if not ids:
            return f"None of the {len(relevant)} relevant items reviewed addresses {ASPECT_LABELS[name]}."
        return f"{len(ids)} of {len(relevant)} relevant items address {ASPECT_LABELS[name]} ({', '.join(ids[:3])})."

    weak = [name for name in ASPECTS if scores[name] < SUFFICIENT_SCORE]
    gaps = [f"Little or no evidence on {ASPECT_LABELS[name]}" for name in weak]
    if len(sources) < 2:
        gaps.append(f"Evidence comes from {len(sources)} source(s) only")
    # The same classifier as the extractive report's: an item is contrary when its quoted result reads contrary.
    contrary = [item.id for item in relevant if (found := quote(item, stems)) is not None and found.contrary]
    supportive = len(relevant) - len(contrary)
    answers = [
        f"{supportive} relevant item(s) report results consistent with the question; "
        f"{len(contrary)} report null, negative or unfavourable results."
    ]
    return Assessment(
        mechanism=AspectScore(score=scores["mechanism"], reason=reason("mechanism")),
        clinical=AspectScore(score=scores["clinical"], reason=reason("clinical")),
        safety=AspectScore(score=scores["safety"], reason=reason("safety")),
        sufficient=not weak and bool(relevant),
        confidence=confidence,
        gaps=gaps,
        next_queries=[f"{base} {ASPECT_QUERY_WORDS[name]}" for name in weak],
        candidate_answers=answers if relevant else [],
        cited_ids=[item.id for item in relevant],
    )
