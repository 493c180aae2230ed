"""The run's one appraisal of its evidence: the counted set (each counted study read once, with the run's
reader), the question's frame, the verdict those readings give and the judge's scores capped by them. It is
computed once, from the items the report was written from, and handed to everything that states or draws
it: the verdict, the report's sections, its figures and its reference order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from deepcritical.appraisal.framing import STUDY_TEXT_CHARS, EvidenceView
from deepcritical.appraisal.ratings import cap_assessment
from deepcritical.appraisal.stance import MAX_VERDICT_ITEMS
from deepcritical.appraisal.strength import Strength, strength_of
from deepcritical.appraisal.studies import counted_parts
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.appraisal.verdict import counted_verdict
from deepcritical.models import DESIGN_LABELS, Evidence
from deepcritical.outputs import Assessment, ResearchReport, Verdict
from deepcritical.reading.frame import QuestionFrame, frame_question


@dataclass(frozen=True)
class Appraisal:
    """What the counted studies establish, before anything is written about them."""

    frame: QuestionFrame
    counted: Strength
    counted_verdict: Verdict  # the verdict the counted studies' readings give, in code
    assessment: Assessment | None  # the judge's last assessment, each score capped by the counted set


def counted_items(
    question: str, evidence: Mapping[str, Evidence], pool: Sequence[str], reader: StudyReader | None = None
) -> Strength:
    """The report's one counted set: the items it was written from (every collected item when not told), read
    with the run's ``reader`` (else the linear one)."""
    pooled = [evidence[i] for i in pool if i in evidence] or list(evidence.values())
    # A study is counted by what states its results: its abstract or results passage, when collected, stands
    # for a methods passage that was in the pool. The whole text: an abstract states its results last, past the
    # slice a report quotes from.
    pooled = counted_parts(pooled, evidence)
    return strength_of(question, [EvidenceView.of(item, STUDY_TEXT_CHARS) for item in pooled], reader)


def shown_assessment(assessment: Assessment | None, counted: Strength) -> Assessment | None:
    """The judge's last assessment as the report shows it: capped (again) by the report's counted items."""
    return cap_assessment(assessment, counted) if assessment is not None else None


def appraise_run(
    question: str,
    evidence: Mapping[str, Evidence],
    pool: Sequence[str],
    reader: StudyReader,
    assessment: Assessment | None = None,
) -> Appraisal:
    """The appraisal of the items in ``pool`` (every collected item when it is empty)."""
    counted = counted_items(question, evidence, pool, reader)
    items = [evidence[i] for i in pool if i in evidence] or list(evidence.values())
    in_code = counted_verdict(question, counted, [EvidenceView.of(item, STUDY_TEXT_CHARS) for item in items])
    return Appraisal(frame_question(question), counted, in_code, shown_assessment(assessment, counted))


def run_verdict(appraisal: Appraisal, report: ResearchReport, evidence: Mapping[str, Evidence]) -> Verdict:
    """The run's verdict: the report model's, when it gave one, resting on the items the report cites; else
    the verdict the appraisal computed in code."""
    in_code = appraisal.counted_verdict
    if report.verdict is None or in_code.label == "open":  # which intervention: a model's yes or no answers nothing
        return in_code
    cited = [evidence[i] for i in report.references if i in evidence and not evidence[i].retracted]
    strongest = min(cited, key=lambda item: item.grade.level or 6, default=None)
    # Where the model and the counted studies' readings disagree, both are shown and the difference said.
    disagrees = in_code.label not in (report.verdict, "insufficient")
    return Verdict(
        label=report.verdict,
        confidence=report.verdict_confidence if report.verdict_confidence is not None else 0.5,
        evidence_ids=[item.id for item in cited[:MAX_VERDICT_ITEMS]],
        strongest_design=DESIGN_LABELS[strongest.grade.design] if strongest is not None else None,
        strongest_level=strongest.grade.level if strongest is not None else None,
        by="model",
        method="the report model, from the cited evidence",
        counted=in_code if disagrees else None,
    )
