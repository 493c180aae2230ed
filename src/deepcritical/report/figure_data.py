"""A run's figures as numbers: the PRISMA 2020-style flow (records identified per source, duplicates,
screened, excluded with reasons, included) and one forest plot per outcome that two or more counted
studies state a comparable estimate for. The numbers are recorded in ``run.json``; the SVG and PNG
files are drawn from these records (report/forest.py, report/prisma.py) and the report links them, so the
table, the plot, the record and the CSV export cannot show different numbers."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from deepcritical.appraisal.results import StudyResult, study_results
from deepcritical.appraisal.strength import Strength
from deepcritical.appraisal.studies import group_studies, record_counts
from deepcritical.models import DESIGNS, Evidence, StudyDesign
from deepcritical.reading.abbreviations import defined_abbreviations
from deepcritical.reading.effects import RATIO_MEASURES
from deepcritical.reading.outcomes import MAX_OUTCOME_CHARS, outcome_key
from deepcritical.reading.pooling import MEASURE_NAMES, NOT_POOLED, PLOTTED_MEASURES, StudyEstimate, comparable, pool
from deepcritical.report.document import Block, Figure, FileLink, Inline, cites, heading, paragraph, runs, strong
from deepcritical.text import quantity, same_precision, shorten

FLOW_FILE = "prisma.svg"
LABEL_CHARS = 60
# Short enough for a box of the diagram; the report's counted line says each in full.
EXCLUSION_REASONS = {
    "not_reviewed": "beyond the items the report reviewed",
    "off_topic": "off the question's topic",
    "registrations": "trial registration (no results)",
    "not_studies": "web page or commentary (not a study)",
    "retracted": "retracted",
}

# The designs a forest plot keeps apart, as Cochrane draws one comparison and one kind of study per plot: a review
# beside a trial it pooled would show the same patients twice, and a cohort's estimate is not a trial's.
PLOT_DESIGNS: dict[StudyDesign, str] = {
    "meta_analysis": "systematic reviews and meta-analyses",
    "systematic_review": "systematic reviews and meta-analyses",
    "randomized_controlled_trial": "randomised trials",
    **{
        design: "observational and non-randomised studies"
        for design in ("clinical_trial", "cohort", "case_control", "cross_sectional", "observational", "case_report")
    },
    "preprint": "preprints",
}
OTHER_DESIGNS = "other designs"
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")

# A forest plot's words for the studies it leaves out (``Strength.indirect``).
LEFT_OUT = "left out, as studies of other people than the question's (an indirect answer): "
_LEFT_OUT_OPENING = LEFT_OUT[:1].upper() + LEFT_OUT[1:]  # the same words opening a sentence


class StudyFlow(BaseModel):
    """The PRISMA flow's numbers, by record: an article's abstract and its full-text passages are one record,
    found by the sources that found the article (a passage is read from the library, but belongs to its
    study); a web page is a record, set aside as no study. Each number is one the report states."""

    identified: dict[str, int] = Field(description="Records found per source (a record found by two counts in each)")
    duplicates: int = Field(description="Records found by more than one source, removed")
    screened: int = Field(description="Records collected (an article's abstract and its passages are one)")
    excluded: dict[str, int] = Field(description="Records set aside, by reason")
    included: int = Field(description="Studies counted in the strength-of-evidence table")
    stating_result: int = Field(description="Included studies whose result reads favourable, null or unfavourable")


def study_flow(counted: Strength, evidence: Mapping[str, Evidence]) -> StudyFlow:
    """The flow of the collected records into the report's counted set, one record per study."""
    places = (
        (set(counted.counted), None),
        (set(counted.retracted), "retracted"),
        (set(counted.registrations), "registrations"),
        (set(counted.not_studies), "not_studies"),
        (set(counted.off_topic), "off_topic"),
    )
    excluded = dict.fromkeys(EXCLUSION_REASONS.values(), 0)
    studies = group_studies(evidence.values())
    records = record_counts(studies)  # the run log states the same count after each search
    for study in studies:
        ids = {item.id for item in study}
        # Each reviewed study is placed once (``strength._one_per_study``): where its placed item is.
        place = next((reason for members, reason in places if ids & members), "not_reviewed")
        if place is not None:
            excluded[EXCLUSION_REASONS[place]] += 1
    return StudyFlow(
        identified=records.identified,
        duplicates=records.duplicates,
        screened=records.studies,
        excluded={reason: count for reason, count in excluded.items() if count},
        included=len(counted.counted),
        stating_result=len(counted.stated),
    )


class PlottedStudy(BaseModel):
    id: str
    label: str = Field(description="The study's reference number and title, as the plot shows it")
    number: int | None = Field(default=None, description="The study's reference number, when it has one")
    design: StudyDesign
    n: int | None = None
    value: float
    ci_low: float
    ci_high: float
    ci_level: float = 95.0


class PooledEstimate(BaseModel):
    """An automatic, exploratory random-effects pooling (statsmodels, Paule-Mandel), with its caveat."""

    value: float
    ci_low: float
    ci_high: float
    i2: float = Field(description="I² as a share, 0 to 1")
    tau2: float
    k: int
    caveat: str


class LeftOut(BaseModel):
    """A counted study that states an estimate for the plot's outcome but is not drawn beside the others."""

    id: str
    label: str
    number: int | None = None
    reason: str = Field(description='Why: "people without heart failure" (an indirect answer to the question)')


class ForestPlot(BaseModel):
    """One outcome's comparable estimates from studies of one kind, drawn as ``file``.svg and ``file``.png in the
    run folder."""

    file: str
    outcome: str
    designs: str = Field(default="", description='The kind of study it draws: "randomised trials" (PLOT_DESIGNS)')
    lower_favours: Literal["intervention", "control"] | None = Field(
        default=None,
        description="Which arm a value below no effect favours, read from the studies' own readings (None: unread)",
    )
    measure: str
    unit: str | None = None
    studies: list[PlottedStudy]
    pooled: PooledEstimate | None = None
    left_out: list[LeftOut] = Field(
        default_factory=list, description="Studies of other people than the question's, stating this outcome"
    )

    def left_out_sentence(self) -> str:
        """What the plot leaves out and why, as its caption and its drawing say it ("" when nothing)."""
        return f"{_LEFT_OUT_OPENING}{_left_out_text(self.left_out)}." if self.left_out else ""

    def title(self) -> str:
        """ "Hazard ratio: cardiovascular death, randomised trials" """
        name = MEASURE_NAMES.get(self.measure, self.measure) + (f" ({self.unit})" if self.unit else "")
        return f"{name}: {self.outcome}" + (f", {self.designs}" if self.designs else "")

    def estimates(self) -> list[StudyEstimate]:
        return [
            StudyEstimate(s.label, self.measure, s.value, s.ci_low, s.ci_high, s.design, s.n, self.unit, s.ci_level)
            for s in self.studies
        ]


class Figures(BaseModel):
    """Everything a run's figures show, once: the study-results rows, the flow and the forest plots."""

    rows: list[StudyResult] = Field(default_factory=list)
    flow: StudyFlow | None = None
    forest_plots: list[ForestPlot] = Field(default_factory=list)
    forest_notes: list[str] = Field(default_factory=list, description="Why an outcome has no plot")


def _label(item: Evidence | None, number: int | None) -> str:
    """A study as a forest plot names it: "[4] Imaginaro 2018" (its first author's surname and its year), else its
    title cut short."""
    name = item.citation.title if item is not None else ""
    if item is not None and item.citation.authors:
        year = _YEAR.search(item.citation.date or "")
        name = item.citation.authors[0].split()[0] + (f" {year.group()}" if year else "")
    return shorten(f"[{number}] {name}" if number else name, LABEL_CHARS)


def plot_designs(item: Evidence | None) -> str:
    """The kind of study a forest plot holds the item with (``PLOT_DESIGNS``)."""
    return PLOT_DESIGNS.get(item.grade.design, OTHER_DESIGNS) if item is not None else OTHER_DESIGNS


def _lower_favours(rows: Sequence[StudyResult], measure: str) -> Literal["intervention", "control"] | None:
    """Which arm a value below no effect favours, as the plotted studies read themselves: a favourable study
    whose estimate is below no effect says lower favours the intervention; an unfavourable one, the control.
    None when no study reads either way or they disagree."""
    null = 1.0 if measure in RATIO_MEASURES else 0.0
    votes = {
        (row.value < null) == (row.direction == "favourable")
        for row in rows
        if row.value is not None and row.value != null and row.direction in ("favourable", "unfavourable")
    }
    if len(votes) != 1:
        return None
    return "intervention" if votes.pop() else "control"


def forest_plots(
    rows: Sequence[StudyResult],
    evidence: Mapping[str, Evidence],
    numbers: Mapping[str, int],
    indirect: Mapping[str, str] | None = None,
) -> tuple[list[ForestPlot], list[str]]:
    """A plot for each outcome that two or more studies state an estimate with an interval for, when the
    estimates are comparable; else a note saying why there is none. A study in ``indirect`` (its people are
    not the question's, with why: ``Strength.indirect``) is left out of the plot, and the plot says so: an
    estimate in people without the condition is not one of the same effect as those in people with it."""
    indirect = indirect or {}
    # One plot per outcome and kind of study (``PLOT_DESIGNS``): a review is never drawn beside the trials it
    # may have pooled, nor a trial beside a cohort.
    groups: dict[tuple[frozenset[str], str], list[StudyResult]] = {}
    named: dict[frozenset[str], str] = {}
    for row in rows:
        # A one-sided interval ("one-sided 97.5% CI -0.05 to 1") is a bound, not an interval to draw.
        two_sided = row.ci_low is not None and row.ci_sides != 1
        if row.measure in PLOTTED_MEASURES and row.value is not None and two_sided and row.outcome:
            outcome = _spelled_out(shorten(row.outcome, MAX_OUTCOME_CHARS), evidence.get(row.id))
            group = groups.setdefault((outcome_key(outcome), plot_designs(evidence.get(row.id))), [])
            named.setdefault(outcome_key(outcome), outcome)
            if all(other.id != row.id for other in group):  # a study once per outcome: its first estimate
                group.append(row)
    plots: list[ForestPlot] = []
    notes: list[str] = []
    for (key, designs), stating in groups.items():
        if len(stating) < 2:
            continue
        outcome = named[key]
        left_out = [
            LeftOut(
                id=row.id,
                label=_label(evidence.get(row.id), numbers.get(row.id)),
                number=numbers.get(row.id),
                reason=indirect[row.id],
            )
            for row in stating
            if row.id in indirect
        ]
        group = [row for row in stating if row.id not in indirect]
        if len(group) < 2:
            notes.append(
                f"No forest plot for {outcome} ({designs}): {LEFT_OUT}{_left_out_text(left_out)}; "
                "fewer than two remain."
            )
            continue
        estimates = [
            StudyEstimate(
                _label(evidence.get(row.id), numbers.get(row.id)),
                row.measure,
                row.value,
                row.ci_low,
                row.ci_high,
                evidence[row.id].grade.design if row.id in evidence else "unknown",
                row.n,
                row.unit,
                row.ci_level or 95.0,
            )
            for row in group
            if row.value is not None and row.ci_low is not None and row.ci_high is not None
        ]
        chosen, reason = comparable(estimates)
        if reason is not None:
            notes.append(f"No forest plot for {outcome} ({designs}): {reason}.")
            continue
        by_label = {estimate.label: row for estimate, row in zip(estimates, group, strict=True)}
        pooled = pool(chosen)
        plots.append(
            ForestPlot(
                file=f"forest-{len(plots) + 1}",
                outcome=outcome,
                designs=designs,
                lower_favours=_lower_favours([by_label[e.label] for e in chosen], chosen[0].measure),
                measure=chosen[0].measure,
                unit=chosen[0].unit,
                studies=[
                    PlottedStudy(
                        id=by_label[e.label].id,
                        label=e.label,
                        number=numbers.get(by_label[e.label].id),
                        design=e.design,
                        n=e.n,
                        value=e.value,
                        ci_low=e.ci_low,
                        ci_high=e.ci_high,
                        ci_level=e.ci_level,
                    )
                    for e in chosen
                ],
                pooled=None
                if pooled is None
                else PooledEstimate(
                    value=pooled.value,
                    ci_low=pooled.ci_low,
                    ci_high=pooled.ci_high,
                    i2=pooled.i2,
                    tau2=pooled.tau2,
                    k=pooled.k,
                    caveat=pooled.caveat,
                ),
                left_out=left_out,
            )
        )
    plotted = {outcome_key(plot.outcome) for plot in plots}
    for key, outcome in named.items():
        kinds = {designs: stating for (of, designs), stating in groups.items() if of == key}
        if key in plotted or len(kinds) < 2 or any(len(stating) > 1 for stating in kinds.values()):
            continue  # plotted, one kind of study, or a kind with a note of its own
        each = "; ".join(
            # By author and year only: a note is plain text, where a bracketed number would read as an unlinked
            # citation.
            ", ".join(_label(evidence.get(row.id), None) for row in stating) + f" ({designs})"
            for designs, stating in kinds.items()
        )
        notes.append(
            f"No forest plot for {outcome}: its studies are of different kinds ({each}), and a plot draws one kind "
            "(a review is never drawn beside the trials it may have pooled)."
        )
    if not plots and not notes:
        studies = len({row.id for rows_of_outcome in groups.values() for row in rows_of_outcome})
        notes.append(
            "No forest plot: no outcome has an estimate with its confidence interval from two or more counted "
            f"studies ({studies} stud{'y states' if studies == 1 else 'ies state'} such an estimate, "
            f"on {quantity(len(groups), 'outcome')})."
        )
    return plots, notes


def _spelled_out(outcome: str, item: Evidence | None) -> str:
    """An outcome with the abbreviations its study defines written out: a case-control study's "AD" (after
    "Alzheimer's disease (AD)") is the Alzheimer's disease another study states, one outcome for the plots."""
    if item is None:
        return outcome
    defined = defined_abbreviations(f"{item.citation.title}. {item.content}")
    for short, long in defined.items():
        outcome = re.sub(rf"(?<![\w-]){re.escape(short)}(?![\w-])", long, outcome)  # words: no backslash to read
    return outcome


def _left_out_text(left_out: Sequence[LeftOut]) -> str:
    """ "[6] Empagliflozin after acute ... (people without heart failure)", each left-out study so."""
    return "; ".join(f"{study.label} ({study.reason})" for study in left_out)


def build_figures(counted: Strength, evidence: Mapping[str, Evidence], numbers: Mapping[str, int]) -> Figures:
    """The study-results rows, the flow and the forest plots of one counted set."""
    rows = study_results(counted, evidence)
    plots, notes = forest_plots(rows, evidence, numbers, counted.indirect)
    flow = study_flow(counted, evidence)
    return Figures(rows=rows, flow=flow, forest_plots=plots, forest_notes=notes)


def flow_lines(flow: StudyFlow | None) -> list[Block]:
    """The report's flow section: the diagram and its numbers in words."""
    if flow is None:
        return []
    identified = sum(flow.identified.values())
    sources = ", ".join(f"{name} {count}" for name, count in flow.identified.items()) or "none"
    reasons = "; ".join(f"{reason} {count}" for reason, count in flow.excluded.items()) or "none"
    alt = (
        f"PRISMA 2020-style flow diagram: {identified} records identified, {flow.duplicates} duplicates removed, "
        f"{flow.screened} screened, {sum(flow.excluded.values())} excluded, {flow.included} included"
    )
    return [
        heading("Study flow (PRISMA 2020-style)"),
        Figure(file=FLOW_FILE, alt=alt),
        paragraph(
            f"Records identified: {identified} (by source: {sources}); duplicates removed: {flow.duplicates}; "
            f"records screened: {flow.screened}; excluded: {sum(flow.excluded.values())} ({reasons}); "
            f"studies included: {flow.included}, of which {flow.stating_result} state a result. An article's "
            "abstract and its full-text passages are one record, under the sources that found the article. "
            "Diagram: ",
            FileLink(name=FLOW_FILE),
            ".",
        ),
    ]


def _cited(number: int | None, label: str) -> list[Inline]:
    """A study in a caption: its citation ("[6]"), else its label."""
    return cites([number]) if number is not None else runs(label)


def _estimate(value: float, low: float, high: float) -> str:
    """ "0.79 [0.69, 0.90]": as the table and the drawing write it."""
    shown, shown_low, shown_high = same_precision(value, low, high)
    return f"{shown} [{shown_low}, {shown_high}]"


def figure_lines(figures: Figures) -> list[Block]:
    """The report's forest plots: each plot, its files, and what it does and does not show."""
    lines: list[Block] = [heading("Forest plots")]
    for plot in figures.forest_plots:
        title = plot.title()
        values = "; ".join(f"{s.label} {_estimate(s.value, s.ci_low, s.ci_high)}" for s in plot.studies)
        lines += [heading(title, level=3), Figure(file=f"{plot.file}.svg", alt=f"Forest plot. {title}. {values}")]
        if plot.pooled is not None:
            pooled = plot.pooled
            said = runs(
                f"Pooled, random effects ({pooled.k} randomised trials): {pooled.value:.2f} "
                f"[{pooled.ci_low:.2f}, {pooled.ci_high:.2f}], I² = {pooled.i2:.0%}. ",
                strong("Automatic, exploratory pooling."),
                f" {pooled.caveat}",
            )
        else:
            said = runs(NOT_POOLED)
        files = runs(FileLink(name=f"{plot.file}.svg"), ", ", FileLink(name=f"{plot.file}.png"), ".")
        # Each study's design, so a meta-analysis beside a preprint reads as such, not as like with like.
        # Each study by its citation, so the page links it: "[1] meta-analysis, [5] preprint".
        drawn: list[Inline] = runs(f"{len(plot.studies)} studies (")
        for index, study in enumerate(plot.studies):
            drawn += runs(", " if index else "", _cited(study.number, study.label), f" {DESIGNS[study.design].label}")
        drawn += runs("). ")
        if plot.left_out:
            drawn += runs(_LEFT_OUT_OPENING)
            for index, left in enumerate(plot.left_out):
                drawn += runs("; " if index else "", _cited(left.number, left.label), f" ({left.reason})")
            drawn += runs(". ")
        lines += [paragraph(drawn, *said, " Files: ", *files)]
    lines += [paragraph(note) for note in figures.forest_notes]
    if not figures.forest_plots and not figures.forest_notes:
        lines.append(paragraph("No counted study states an estimate with its confidence interval."))
    return lines
