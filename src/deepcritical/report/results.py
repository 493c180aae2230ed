"""The report's study-results table: a row per stated result that the appraisal read (``appraisal.results``)."""

from __future__ import annotations

from collections.abc import Mapping

from deepcritical.appraisal.results import EFFECT_SIZES, StudyResult
from deepcritical.reading.effects import RATIO_MEASURES
from deepcritical.reading.outcomes import MAX_OUTCOME_CHARS
from deepcritical.reading.p_values import p_parts
from deepcritical.report.document import Block, Code, Table, cites, heading, paragraph, runs
from deepcritical.text import same_precision, shorten


def effect_text(row: StudyResult) -> str:
    """ "HR 0.77 [0.72, 0.82]", "OR 0.98 per SD [0.93, 1.04]", "change -21% [-38%, 0%]", "group values: 79 % vs
    59 %", or "" for a p-value alone."""
    if row.value is not None and row.measure in EFFECT_SIZES:
        name = "change" if row.measure == "percent_change" else row.measure
        value, low, high = same_precision(row.value, row.ci_low, row.ci_high)
        if row.measure == "percent_change":  # "reduced ... by 48%": "change -48%", never a bare "-48"
            value, low, high = f"{value}%", f"{low}%", f"{high}%"
        interval = f" [{low}, {high}]" if row.ci_low is not None else ""
        per = f" {row.unit}" if row.unit and row.measure in RATIO_MEASURES else ""  # "OR 0.98 per SD [0.93, 1.04]"
        return f"{name} {value}{per}{interval}"
    if row.groups:
        return " vs ".join(row.groups)
    return ""


def p_text(p: str | None) -> str:
    """A p-value as a table shows it: "< 0.001", "0.03" (its "=" dropped), "NS"; "–" when none."""
    if p is None:
        return "–"
    relation, number = p_parts(p)
    return f"{relation} {number}" if relation not in ("", "=") else number


def results_table(
    rows: list[StudyResult],
    counted: int,
    numbers: Mapping[str, int],
    comparison: str | None = None,
) -> list[Block]:
    """The report's section: a row per stated result (``study_results``); ``comparison`` (the question frame's
    intervention against its comparator) is what each reading is for. The page sorts the table by a column."""
    lines: list[Block] = [heading("Study results")]
    if not rows:
        return [*lines, paragraph("None of the counted studies states a result in numbers in the text read.")]
    if comparison:
        lines += [paragraph(f"Comparison read for: {comparison}.")]
    # A row's own significance (its interval or p-value) beside the study's one reading for the question: a
    # study reads by the result for the question's outcome, so its other rows may well read otherwise.
    header = [
        "Study",
        "Design",
        "Population",
        "n",
        "Outcome",
        "Result as stated",
        "Effect [95% CI]",
        "p",
        "This result",
        "Study's reading",
    ]
    # On the page the quote and the population fold into each row's "More": the rest fits the page's width.
    table = Table(
        header=header, rows=[], sortable=True, folded=[header.index("Population"), header.index("Result as stated")]
    )
    for row in rows:
        reference = cites([numbers[row.id]]) if row.id in numbers else runs("–")
        n = f"{row.n:,}" if row.n else "–"
        more = f" (+{row.others} more)" if row.others else ""
        outcome = shorten(row.outcome, MAX_OUTCOME_CHARS) if row.outcome else "–"  # the CSV has it whole
        if row.subgroup:  # "Mortality (in: Twenty-seven observational studies)"
            outcome = f"{outcome} (in: {row.subgroup})"
        cells = [reference, runs(row.design), runs(row.population or "–"), runs(n), runs(outcome)]
        cells += [runs(row.quote + more), runs(effect_text(row) or "–"), runs(p_text(row.p))]
        significance = {True: "significant", False: "not significant", None: "–"}[row.significant]
        table.rows.append([*cells, runs(significance), runs(row.reading)])
    studies = len({row.id for row in rows})
    lines += [
        table,
        paragraph(
            f"{studies} of {counted} counted studies state a result in numbers in the text read (abstract or "
            "passage). Each is read in code from the study's own words (every effect size stated with its interval, "
            "one row each, else the first effect size, else each group's value with a p-value, else a p-value), "
            "with the outcome the words before it name (or, when they name none, the outcome of the result before "
            'it), and, in brackets after "in:", the studies a pooled estimate is for when its sentence names them. '
            '"(+N more)": the study\'s text states N further results without an interval (effect sizes, each '
            "group's values, p-values), not shown. The numbers are not appraised. \"This result\" is the row's "
            'own significance (its interval against no effect, else its p-value); "Study\'s reading" is the '
            "study's one reading for the question, from its result for the question's outcome (\"result for "
            'another outcome": the study states one, but for an outcome the question does not ask about; it is not '
            "weighed). ",
            Code(text="deepcritical export RUN_DIR --format results-csv"),
            " writes this table as CSV.",
        ),
    ]
    return lines
