"""A run's figures as numbers: the PRISMA 2020-style flow (records identified per source, duplicates,
screened, excluded with reasons, included) and the forest plots (``report.forest_data``). The numbers are
recorded in ``run.json``; the SVG and PNG files are drawn from these records (report/forest.py,
report/prisma.py) and the report links them, so the table, the plot, the record and the CSV export cannot
show different numbers."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from deepcritical.appraisal.results import StudyResult, study_results
from deepcritical.appraisal.strength import Strength
from deepcritical.appraisal.studies import group_studies, record_counts
from deepcritical.models import DESIGNS, Evidence
from deepcritical.reading.pooling import NOT_POOLED
from deepcritical.report.document import Block, Figure, FileLink, Inline, cites, heading, paragraph, runs, strong
from deepcritical.report.forest_data import LEFT_OUT_OPENING, ForestPlot, forest_plots
from deepcritical.text import same_precision

FLOW_FILE = "prisma.svg"
# Short enough for a box of the diagram; the report's counted line says each in full.
EXCLUSION_REASONS = {
    "not_reviewed": "beyond the items the report reviewed",
    "off_topic": "off the question's topic",
    "registrations": "trial registration (no results)",
    "not_studies": "web page or commentary (not a study)",
    "retracted": "retracted",
}


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


class Figures(BaseModel):
    """Everything a run's figures show, once: the study-results rows, the flow and the forest plots."""

    rows: list[StudyResult] = Field(default_factory=list)
    flow: StudyFlow | None = None
    forest_plots: list[ForestPlot] = Field(default_factory=list)
    forest_notes: list[str] = Field(default_factory=list, description="Why an outcome has no plot")


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
            drawn += runs(LEFT_OUT_OPENING)
            for index, left in enumerate(plot.left_out):
                drawn += runs("; " if index else "", _cited(left.number, left.label), f" ({left.reason})")
            drawn += runs(". ")
        lines += [paragraph(drawn, *said, " Files: ", *files)]
    lines += [paragraph(note) for note in figures.forest_notes]
    if not figures.forest_plots and not figures.forest_notes:
        lines.append(paragraph("No counted study states an estimate with its confidence interval."))
    return lines
