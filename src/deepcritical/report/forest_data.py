"""A run's forest plots as numbers: per outcome and kind of study, the counted studies' comparable estimates
(Cochrane's layout: one comparison and one kind of study a plot), their exploratory pooling, and what is left out
and why. ``report.figure_data`` puts them beside the flow; ``report.forest`` draws them."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, Field

from deepcritical.appraisal.results import StudyResult
from deepcritical.models import Evidence, StudyDesign
from deepcritical.reading.abbreviations import defined_abbreviations
from deepcritical.reading.effects import RATIO_MEASURES
from deepcritical.reading.outcomes import MAX_OUTCOME_CHARS, outcome_key
from deepcritical.reading.pooling import MEASURE_NAMES, PLOTTED_MEASURES, StudyEstimate, comparable, pool
from deepcritical.text import quantity, shorten

LABEL_CHARS = 60

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
LEFT_OUT_OPENING = LEFT_OUT[:1].upper() + LEFT_OUT[1:]  # the same words opening a sentence


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
        return f"{LEFT_OUT_OPENING}{_left_out_text(self.left_out)}." if self.left_out else ""

    def title(self) -> str:
        """ "Hazard ratio: cardiovascular death, randomised trials" """
        name = MEASURE_NAMES.get(self.measure, self.measure) + (f" ({self.unit})" if self.unit else "")
        return f"{name}: {self.outcome}" + (f", {self.designs}" if self.designs else "")

    def estimates(self) -> list[StudyEstimate]:
        return [
            StudyEstimate(s.label, self.measure, s.value, s.ci_low, s.ci_high, s.design, s.n, self.unit, s.ci_level)
            for s in self.studies
        ]


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


PlotGroups = dict[tuple[frozenset[str], str], list[StudyResult]]


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
    groups, named = _plot_groups(rows, evidence)
    plots: list[ForestPlot] = []
    notes: list[str] = []
    for (key, designs), stating in groups.items():
        if len(stating) < 2:
            continue
        stating, twice = _one_review_per_trial(stating, evidence)
        if twice:  # two reviews that pooled one trial: the larger is drawn, and the note says which is not
            opening, ending = ("Forest plot", ".") if len(stating) > 1 else ("No forest plot", "; one remains.")
            notes.append(f"{opening} for {named[key]} ({designs}): {twice}{ending}")
            if len(stating) < 2:
                continue
        plot = _plot(named[key], designs, stating, evidence, numbers, indirect, f"forest-{len(plots) + 1}")
        if isinstance(plot, str):
            notes.append(plot)
        else:
            plots.append(plot)
    notes += _mixed_kinds_notes(groups, named, {outcome_key(plot.outcome) for plot in plots}, evidence)
    if not plots and not notes:
        studies = len({row.id for rows_of_outcome in groups.values() for row in rows_of_outcome})
        notes.append(
            "No forest plot: no outcome has an estimate with its confidence interval from two or more counted "
            f"studies ({studies} stud{'y states' if studies == 1 else 'ies state'} such an estimate, "
            f"on {quantity(len(groups), 'outcome')})."
        )
    return plots, notes


def _plot_groups(
    rows: Sequence[StudyResult], evidence: Mapping[str, Evidence]
) -> tuple[PlotGroups, dict[frozenset[str], str]]:
    """The rows a plot may draw, by outcome and kind of study (``PLOT_DESIGNS``): a review is never drawn beside
    the trials it may have pooled, nor a trial beside a cohort; and each outcome's name as first stated."""
    groups: PlotGroups = {}
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
    return groups, named


def _plot(
    outcome: str,
    designs: str,
    stating: Sequence[StudyResult],
    evidence: Mapping[str, Evidence],
    numbers: Mapping[str, int],
    indirect: Mapping[str, str],
    file: str,
) -> ForestPlot | str:
    """One outcome's plot of one kind of study, or the note that says why it has none."""
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
        return f"No forest plot for {outcome} ({designs}): {LEFT_OUT}{_left_out_text(left_out)}; fewer than two remain."
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
        return f"No forest plot for {outcome} ({designs}): {reason}."
    by_label = {estimate.label: row for estimate, row in zip(estimates, group, strict=True)}
    return ForestPlot(
        file=file,
        outcome=outcome,
        designs=designs,
        lower_favours=_lower_favours([by_label[e.label] for e in chosen], chosen[0].measure),
        measure=chosen[0].measure,
        unit=chosen[0].unit,
        studies=[_plotted(e, by_label[e.label].id, numbers) for e in chosen],
        pooled=_pooled(chosen),
        left_out=left_out,
    )


def _plotted(estimate: StudyEstimate, study_id: str, numbers: Mapping[str, int]) -> PlottedStudy:
    return PlottedStudy(
        id=study_id,
        label=estimate.label,
        number=numbers.get(study_id),
        design=estimate.design,
        n=estimate.n,
        value=estimate.value,
        ci_low=estimate.ci_low,
        ci_high=estimate.ci_high,
        ci_level=estimate.ci_level,
    )


def _pooled(chosen: Sequence[StudyEstimate]) -> PooledEstimate | None:
    pooled = pool(chosen)
    if pooled is None:
        return None
    return PooledEstimate(
        value=pooled.value,
        ci_low=pooled.ci_low,
        ci_high=pooled.ci_high,
        i2=pooled.i2,
        tau2=pooled.tau2,
        k=pooled.k,
        caveat=pooled.caveat,
    )


def _mixed_kinds_notes(
    groups: PlotGroups,
    named: Mapping[frozenset[str], str],
    plotted: set[frozenset[str]],
    evidence: Mapping[str, Evidence],
) -> list[str]:
    """Why an outcome stated by one study of each of several kinds has no plot."""
    notes = []
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
    return notes


# A trial's own name, as its title gives it in brackets: "(DAPA-HF)", "(EMPEROR-Reduced)"; not "(COVID-19)".
_TRIAL_NAME = re.compile(r"\(([A-Z][A-Za-z0-9]*(?:-[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*)+)\)")
_REVIEWS = frozenset({"meta_analysis", "systematic_review"})
_PMID_DIGITS = 6  # a shorter number in a review's text is a count or a value far more often than a PMID


def _pooled_trials(review: Evidence, evidence: Mapping[str, Evidence]) -> dict[str, str]:
    """The collected studies (not reviews) that ``review``'s own text shows it pooled, by id with what shows it:
    the study's PMID ("PMID 31535829"), its registration number or its name."""
    text = f"{review.citation.title} {review.content}"
    found: dict[str, str] = {}
    for item in evidence.values():
        if item.grade.design in _REVIEWS:
            continue
        pmid = item.citation.pmid if item.citation.pmid and len(item.citation.pmid) >= _PMID_DIGITS else None
        marks = {pmid: f"PMID {pmid}", item.citation.nct_id: item.citation.nct_id}
        marks |= {name: name for name in _TRIAL_NAME.findall(item.citation.title)}
        for mark, said in marks.items():
            if mark and re.search(rf"(?<![\w.-]){re.escape(mark)}(?![\w-]|\.\d)", text):
                found[item.id] = str(said)
                break
    return found


def _one_review_per_trial(
    rows: Sequence[StudyResult], evidence: Mapping[str, Evidence]
) -> tuple[list[StudyResult], str]:
    """Two reviews that pooled the same trial would draw its patients twice: of the reviews whose texts show
    a trial in common, the largest (then the first) is kept. The rows kept, and what was left out and why ("")."""
    pooled = {
        row.id: _pooled_trials(evidence[row.id], evidence)
        for row in rows
        if row.id in evidence and evidence[row.id].grade.design in _REVIEWS
    }
    kept: list[StudyResult] = []
    said: list[str] = []
    for row in sorted(rows, key=lambda row: -(row.n or 0)):
        overlap = [
            (other, common)
            for other in kept
            if (common := sorted(pooled.get(other.id, {}).keys() & pooled.get(row.id, {}).keys()))
        ][:1]
        if not overlap:
            kept.append(row)
            continue
        other, common = overlap[0]
        trials = ", ".join(pooled[row.id][trial] for trial in common)
        said.append(
            f"{_label(evidence.get(row.id), None)} is not drawn, as it pooled trials that "
            f"{_label(evidence.get(other.id), None)} pooled too ({trials}): their patients would be drawn twice"
        )
    order = {row.id: index for index, row in enumerate(rows)}
    return sorted(kept, key=lambda row: order[row.id]), "; ".join(said)


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
