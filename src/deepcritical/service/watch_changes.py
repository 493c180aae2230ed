"""What changed between two runs of a watch, computed in code from their run records: the studies new to
the watch (design, level and how each reads), the studies held before that are now retracted or under an
expression of concern, a new strongest design, and the verdict and its confidence before and after.

Only additions and new flags are changes. A study the earlier run held and this one did not find again is
not "removed": the watch carries its evidence forward, so a source that did not answer this time (its
availability) can never read as a change in the evidence; which sources did not answer is said apart."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Literal, cast

from pydantic import BaseModel, Field

from deepcritical.appraisal.run_appraisal import counted_items
from deepcritical.appraisal.strength import Strength
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.models import DESIGN_LABELS, Evidence, StudyDesign
from deepcritical.reading.results import ResultReader
from deepcritical.report.document import Block, Item, bullets, heading, strong
from deepcritical.report.document import item as entry
from deepcritical.report.markdown_writer import blocks_markdown
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.service.watches import verdict_words

Reading = Literal["favourable", "null", "unfavourable", "no clear result", "a registration", "retracted"]


class StudyChange(BaseModel):
    """A study in a change: what it is and how it reads for the question."""

    id: str
    title: str
    url: str | None
    date: str
    design: str
    level: int | None
    reading: Reading
    read_before: Reading | None = Field(
        default=None, description="A study retracted or flagged since: how the run before read it"
    )


class VerdictState(BaseModel):
    label: str
    confidence: float
    strongest_design: str | None
    strongest_level: int | None
    confidence_is_split: bool = Field(
        default=False, description="The confidence of a maybe or mixed is how evenly the evidence is split"
    )
    favourable_share: float | None = Field(
        default=None, description="The favourable share of the weight the counted studies' verdict is read from"
    )


class Changes(BaseModel):
    """``changes.json``: what one run of a watch found changed since the run before it."""

    watch_id: str
    question: str
    run_at: datetime
    since: date | None = Field(
        description="The date searched from: the last run in which every source answered (None: the first run)"
    )
    baseline: bool = Field(description="The watch's first run: nothing to compare, so nothing changed")
    failed: str | None = Field(default=None, description="This run failed: nothing is compared")
    new_studies: list[StudyChange] = Field(default_factory=list)
    newly_retracted: list[StudyChange] = Field(default_factory=list)
    newly_under_concern: list[StudyChange] = Field(default_factory=list)
    strongest_before: str | None = None
    strongest_after: str | None = None
    verdict_before: VerdictState | None = None
    verdict_after: VerdictState | None = None
    verdict_changed: bool = False
    sources_unavailable: dict[str, str] = Field(
        default_factory=dict, description="Sources that did not answer this run: availability, not evidence"
    )
    recheck: str = Field(default="", description="How the retractions of the held studies were re-checked")

    @property
    def new_strongest(self) -> bool:
        return self.strongest_after is not None and self.strongest_after != self.strongest_before

    @property
    def changed(self) -> bool:
        """Whether anything in the evidence or the verdict moved: what an alert is sent for."""
        return bool(
            self.new_studies
            or self.newly_retracted
            or self.newly_under_concern
            or self.new_strongest
            or self.verdict_changed
        )

    def summary(self) -> list[str]:
        """One plain line per change (the history, the feed, the webhook)."""
        if self.failed:
            return [f"the run failed: {self.failed}"]
        if self.baseline:
            return ["first run: the baseline later runs are compared with"]
        lines = [f"new: {study.title} ({_grade(study)}; {_read_as(study.reading)})" for study in self.new_studies]
        lines += [f"retracted since: {study.title}{_before(study)}" for study in self.newly_retracted]
        lines += [
            f"under an expression of concern since: {study.title}{_before(study)}" for study in self.newly_under_concern
        ]
        if self.new_strongest:
            lines.append(f"strongest design: {self.strongest_before or 'none'} -> {self.strongest_after}")
        if self.verdict_changed and self.verdict_before and self.verdict_after:
            lines.append(f"VERDICT CHANGED: {_verdict(self.verdict_before)} -> {_verdict(self.verdict_after)}")
        return lines or ["nothing changed"]


def _design(design: str) -> str:
    """A design's label ("randomised controlled trial"); a design this version does not know, as recorded."""
    return DESIGN_LABELS.get(cast(StudyDesign, design), design)


def _grade(study: StudyChange) -> str:
    level = f", level {study.level}" if study.level is not None else ""
    return f"{_design(study.design)}{level}"


def _verdict(state: VerdictState) -> str:
    return verdict_words(state.label, state.confidence, split=state.confidence_is_split, share=state.favourable_share)


def _before(study: StudyChange) -> str:
    """ " (reads favourable before)": whether the verdict before could have rested on a study now retracted."""
    return f" ({_read_as(study.read_before)} before)" if study.read_before is not None else ""


def _strongest(state: VerdictState | None) -> str | None:
    if state is None or state.strongest_design is None:
        return None
    level = f" (level {state.strongest_level})" if state.strongest_level is not None else ""
    return f"{_design(state.strongest_design)}{level}"


def verdict_state(outcome: ResearchOutcome | None) -> VerdictState | None:
    if outcome is None or outcome.verdict is None:
        return None
    verdict = outcome.verdict
    return VerdictState(
        label=verdict.label,
        confidence=verdict.confidence,
        strongest_design=verdict.strongest_design,
        strongest_level=verdict.strongest_level,
        confidence_is_split=verdict.confidence_is_split,
        favourable_share=verdict.favourable_share,
    )


def counted(outcome: ResearchOutcome) -> Strength:
    """The run's studies placed as its report places them (on topic, retracted, registrations, counted)."""
    reader = StudyReader(outcome.question, ResultReader.load(outcome.settings.get("reader", "linear")))
    return counted_items(outcome.question, {item.id: item for item in outcome.evidence}, (), reader)


def _reading(item: Evidence, strength: Strength) -> Reading:
    if item.retracted:
        return "retracted"
    if item.id in strength.registrations:
        return "a registration"
    return strength.directions.get(item.id) or "no clear result"


def _study(item: Evidence, strength: Strength) -> StudyChange:
    return StudyChange(
        id=item.id,
        title=item.citation.title,
        url=item.citation.url,
        date=item.citation.date,
        design=item.grade.design,
        level=item.grade.level,
        reading=_reading(item, strength),
    )


def _by_identity(items: Iterable[Evidence]) -> dict[str, Evidence]:
    return {key: item for item in items for key in item.identity_keys}


def _held_as(item: Evidence, held: Mapping[str, Evidence]) -> Evidence | None:
    return next((held[key] for key in item.identity_keys if key in held), None)


def unavailable_sources(outcome: ResearchOutcome) -> dict[str, str]:
    """Sources that failed in every search of the run they were asked in, with their first error."""
    answered = {name for step in outcome.searches for name in step.sources_answered}
    failed: dict[str, str] = {}
    for step in outcome.searches:
        for name, error in step.sources_failed.items():
            if name not in answered:
                failed.setdefault(name, error)
    return failed


def compare(
    before: ResearchOutcome | None,
    after: ResearchOutcome,
    *,
    watch_id: str,
    run_at: datetime,
    since: date | None,
    recheck: str = "",
) -> Changes:
    """What ``after`` holds that ``before`` did not (by every identity of a study: PMID, DOI, NCT, URL)."""
    common = {
        "watch_id": watch_id,
        "question": after.question,
        "run_at": run_at,
        "since": since,
        "recheck": recheck,
        "sources_unavailable": unavailable_sources(after),
        "verdict_after": verdict_state(after),
    }
    if after.error:
        return Changes(baseline=before is None, failed=after.error, **common)
    if before is None:
        return Changes(baseline=True, **common)
    held = _by_identity(before.evidence)
    strength = counted(after)
    on_topic = {*strength.counted, *strength.registrations, *strength.retracted, *strength.not_studies}
    new, retracted, concern = [], [], []
    held_strength = counted(before)  # cheap: this run carried those studies forward and read them already (cached)

    def flagged(item: Evidence, earlier: Evidence) -> StudyChange:
        # How the run before read a study flagged since: whether its verdict could have rested on it.
        return _study(item, strength).model_copy(update={"read_before": _reading(earlier, held_strength)})

    for item in after.evidence:
        earlier = _held_as(item, held)
        if earlier is None:
            if item.id in on_topic and item.grade.design != "web":  # a study that bears on the question
                new.append(_study(item, strength))
            continue
        if item.retracted and not earlier.retracted:
            retracted.append(flagged(item, earlier))
        elif item.expression_of_concern and not earlier.expression_of_concern and not item.retracted:
            concern.append(flagged(item, earlier))
    before_state, after_state = verdict_state(before), verdict_state(after)
    return Changes(
        baseline=False,
        new_studies=new,
        newly_retracted=retracted,
        newly_under_concern=concern,
        strongest_before=_strongest(before_state),
        strongest_after=_strongest(after_state),
        verdict_before=before_state,
        verdict_changed=before_state is not None
        and after_state is not None
        and before_state.label != after_state.label,
        **common,
    )


def _read_as(reading: Reading) -> str:
    """ "reads favourable", "a registration", "retracted": how a run read a study."""
    return f"reads {reading}" if reading in ("favourable", "null", "unfavourable") else reading


def _line(study: StudyChange) -> Item:
    before = f"; {_read_as(study.read_before)} before" if study.read_before is not None else ""
    return entry(f"{study.title} ({_grade(study)}, {study.date}; {_read_as(study.reading)}{before})")


def section_blocks(changes: Changes) -> list[Block]:
    """The "What changed since DATE" section that opens the watch run's report; a watch's first run has
    nothing to compare with, so its report opens with "Watch baseline" instead."""
    lines: list[Item] = []
    if changes.baseline:
        title = "Watch baseline"
        lines.append(entry("The watch's first run: later runs report what changed since this one."))
    else:
        title = f"What changed since {f'{changes.since:%Y-%m-%d}' if changes.since else 'the first run'}"
    if changes.failed:
        lines += [entry(line) for line in changes.summary()]
    elif not changes.baseline:
        if changes.verdict_before and changes.verdict_after:
            moved = [strong("The verdict changed"), ": "] if changes.verdict_changed else ["The verdict: "]
            lines.append(entry(*moved, f"{_verdict(changes.verdict_before)} -> {_verdict(changes.verdict_after)}"))
        if changes.new_studies:
            lines.append(entry("New studies:", items=[_line(study) for study in changes.new_studies]))
        if changes.newly_retracted:
            lines.append(entry("Retracted since:", items=[_line(study) for study in changes.newly_retracted]))
        if changes.newly_under_concern:
            lines.append(
                entry("Under an expression of concern since:", items=[_line(s) for s in changes.newly_under_concern])
            )
        if changes.new_strongest:
            lines.append(
                entry(f"New strongest design: {changes.strongest_before or 'none'} -> {changes.strongest_after}")
            )
        if not changes.changed:
            lines.append(entry("Nothing in the evidence changed."))
    if changes.sources_unavailable:
        names = ", ".join(sorted(changes.sources_unavailable))
        lines.append(
            entry(f"Not a change in the evidence: {names} did not answer this time; what they gave before is kept.")
        )
    if changes.recheck:
        lines.append(entry(f"Retractions: {changes.recheck}"))
    return [heading(title), bullets(lines)]


def markdown_section(changes: Changes) -> str:
    """``section_blocks`` as Markdown."""
    return blocks_markdown(section_blocks(changes))
