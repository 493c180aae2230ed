"""The study-results table: one row per counted study that states a number, the best stated result
chosen, the same numbers in the rows (run.json) and in report.md, every cell escaped."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from deepcritical.appraisal.results import StudyResult, study_results
from deepcritical.appraisal.run_appraisal import counted_items
from deepcritical.cli.common import inert
from deepcritical.cli.export import results_csv
from deepcritical.cli.extract import cell
from deepcritical.models import Evidence, Grade
from deepcritical.outputs import ResearchReport
from deepcritical.report.render import RenderContext, escape, render_markdown
from deepcritical.report.results import effect_text, p_text
from helpers.builders import evidence

QUESTION = "Does drug X reduce mortality in heart failure?"
RCT = Grade(
    design="randomized_controlled_trial", level=2, population="humans", basis="publication_type", sample_size=4744
)


def make(key: str, text: str, grade: Grade = RCT) -> Evidence:
    return evidence(text, pmid=key, title=f"Drug X in heart failure: trial {key}", date="2021", grade=grade)


HAZARD = make(
    "201",
    "RESULTS: Drug X reduced mortality in heart failure: 386 of 2373 (16.3%) vs 502 of 2371 (21.2%), "
    "p<0.001; cardiovascular death or worsening heart failure occurred less often (HR 0.74, 95% CI 0.65 "
    "to 0.85; p<0.001).",
)
GROUPS = make(
    "202",
    "RESULTS: In heart failure, mortality with drug X was 12/80 (15%) vs 20/81 (25%) with placebo, p = 0.11.",
    Grade(design="cohort", level=3, population="humans", basis="mesh"),
)
WORDS = make("203", "RESULTS: Drug X did not reduce mortality in heart failure compared with placebo.")
HOSTILE = make(
    "204",
    "RESULTS: Drug X in heart failure <script>alert(1)</script> | mortality OR 0.80 (95% CI 0.66 to 0.98), p=0.03.",
)
EVIDENCE = {item.id: item for item in (HAZARD, GROUPS, WORDS, HOSTILE)}


def test_each_counted_study_with_a_number_gets_its_best_stated_result() -> None:
    counted = counted_items(QUESTION, EVIDENCE, ())
    rows = {row.id: row for row in study_results(counted, EVIDENCE)}
    assert set(rows) == {HAZARD.id, GROUPS.id, HOSTILE.id}  # the study stating no number has no row
    hazard = rows[HAZARD.id]
    # the effect size with its interval, not the group counts written first
    assert (hazard.measure, hazard.value, hazard.ci_low, hazard.ci_high, hazard.p) == ("HR", 0.74, 0.65, 0.85, "<0.001")
    assert (hazard.design, hazard.n, hazard.significant, hazard.others) == (
        "randomised controlled trial",
        4744,
        True,
        1,
    )
    groups = rows[GROUPS.id]
    assert (groups.measure, groups.groups, groups.p) == ("group_values", ["12/80 (15%)", "20/81 (25%)"], "=0.11")
    assert effect_text(groups) == "12/80 (15%) vs 20/81 (25%)"
    assert groups.significant is False


def test_the_report_shows_the_rows_numbers_escaped() -> None:
    report = ResearchReport(question=QUESTION, answer_brief="Drug X may help.", key_findings=[], contrary_evidence=[])
    markdown = render_markdown(report, EVIDENCE, RenderContext(demo=False, stop_reason="max_iterations"))
    section = markdown.split("## Study results", 1)[1].split("\n## ", 1)[0]
    counted = counted_items(QUESTION, EVIDENCE, ())
    rows = study_results(counted, EVIDENCE)
    table = [line for line in section.splitlines() if line.startswith("| \\[")]
    assert len(table) == len(rows)
    for row, line in zip(rows, table, strict=True):  # one order: the table's rows are the record's rows
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        assert cells[6:8] == [escape(effect_text(row)) or "–", escape(p_text(row.p))]
        assert cells[8] == {True: "significant", False: "not significant", None: "–"}[row.significant]
        assert cells[9] == escape(row.reading)
    assert "HR 0.74 \\[0.65, 0.85\\]" in section
    assert re.search(r"(?<!\\)<script>", markdown) is None  # its "<" escaped: it opens no element
    assert all(line.count(" | ") == 9 for line in table)  # a "|" in a study's words does not split its row
    assert f"{len(rows)} of {len(counted.counted)} counted studies state a result in numbers" in section


def test_p_values_read_as_a_table_shows_them() -> None:
    assert [p_text(p) for p in ("<0.001", "=0.03", "NS", "≤0.05", None)] == ["< 0.001", "0.03", "NS", "≤ 0.05", "–"]


def test_an_estimate_and_its_interval_are_shown_to_one_precision() -> None:
    def row(value: float, low: float | None, high: float | None) -> StudyResult:
        return StudyResult(id="pmid:1", design="trial", measure="HR", value=value, ci_low=low, ci_high=high, quote="")

    assert effect_text(row(0.77, 0.6, 0.98)) == "HR 0.77 [0.60, 0.98]"
    assert effect_text(row(0.8, 0.71, 0.9)) == "HR 0.80 [0.71, 0.90]"
    assert effect_text(row(12.0, 3.5, 20.0)) == "HR 12.0 [3.5, 20.0]"
    assert effect_text(row(2.0, None, None)) == "HR 2"


def test_a_percent_change_keeps_its_percent_sign() -> None:
    item = make("205", "RESULTS: In heart failure, drug X reduced the rise in tissue factor mRNA by 48% (p<0.01).")
    (row,) = study_results(counted_items(QUESTION, {item.id: item}, ()), {item.id: item})
    assert (row.measure, row.value, row.unit) == ("percent_change", -48.0, "%")
    assert effect_text(row) == "change -48%"
    ranged = row.model_copy(update={"value": -21.0, "ci_low": -38.0, "ci_high": 0.0})
    assert effect_text(ranged) == "change -21% [-38%, 0%]"


def test_the_results_csv_writes_p_as_a_number_a_spreadsheet_reads_and_still_guards_formulas(tmp_path: Path) -> None:
    """ "=0.21" was written "'=0.21" (the formula guard): text to a spreadsheet. The number is its own cell now."""
    rows = [
        StudyResult(id=HAZARD.id, design="trial", measure="HR", value=0.9, p="=0.21", quote="=HYPERLINK(1)"),
        StudyResult(
            id=HAZARD.id, design="trial", measure="RD", value=3.6, unit="percentage points", p="<0.001", quote="q"
        ),
        StudyResult(id=HAZARD.id, design="trial", measure="HR", value=0.7, p="NS", quote="q"),
        StudyResult(id=HAZARD.id, design="trial", measure="HR", value=0.7, quote="q"),
    ]
    (tmp_path / "run.json").write_text(json.dumps({"study_results": [row.model_dump() for row in rows]}))
    text, count = results_csv(tmp_path, [HAZARD.id], {HAZARD.id: HAZARD})
    exported = list(csv.DictReader(io.StringIO(text)))
    assert count == 4
    assert [(r["p_bound"], r["p"]) for r in exported] == [("", "0.21"), ("<", "0.001"), ("", "NS"), ("", "")]
    assert float(exported[0]["p"]) == 0.21
    assert (exported[1]["measure"], exported[1]["unit"]) == ("RD", "percentage points")
    assert exported[0]["quote"] == "'=HYPERLINK(1)"  # a real formula is still written as text


def test_a_csv_cell_that_is_a_signed_number_stays_a_number_and_a_formula_becomes_text() -> None:
    """One guard (``cli.common.inert``) for this table, extract's CSV and batch's summary: "-5" was written "'-5"
    here (text to a spreadsheet) and -5 in the summary."""
    values = ("-5", "+1.5", "-2+3", "=A1", "@SUM(A1)", "\tTabbed", "HR")
    assert [cell(value) for value in values] == ["-5", "+1.5", "'-2+3", "'=A1", "'@SUM(A1)", "'\tTabbed", "HR"]
    assert [inert(value) for value in values] == [cell(value) for value in values]
    assert cell(-7.0) == -7.0


META = make(
    "206",
    "METHODS: Mortality estimates were pooled by design. RESULTS: Twenty observational studies of drug X in heart "
    "failure (over 100,000 patients) gave a pooled adjusted OR of 0.65 (0.57 to 0.75). Nine RCTs (2,275 "
    "patients) showed no effect on 30-day mortality (RR 0.98, 95% CI 0.84 to 1.14). In the six trials at low risk "
    "of bias the estimate was 0.95 (0.84 to 1.07; I²=61%). Funnel-plot asymmetry suggested small-study effects "
    "(Egger p=0.03).",
    Grade(design="meta_analysis", level=1, population="humans", basis="publication_type", sample_size=2275),
)


def test_each_estimate_of_a_review_gets_its_row_its_outcome_and_the_studies_it_pools(tmp_path: Path) -> None:
    """A new user's faults (issue 23, phases/19): a pooled estimate had no outcome and nothing said which studies
    it pooled; a subgroup's "the estimate was 0.95 (...)" had no row, only an unexplained "(+1 more)"."""
    evidence = {META.id: META}
    rows = study_results(counted_items(QUESTION, evidence, ()), evidence)
    assert [(r.measure, r.value, r.outcome, r.subgroup, r.others) for r in rows] == [
        ("OR", 0.65, "Mortality", "Twenty observational studies", 1),
        ("RR", 0.98, "30-day mortality", "Nine RCTs", 1),
        ("RR", 0.95, "30-day mortality", "six trials at low risk of bias", 1),  # the estimate before it, its outcome
    ]
    report = ResearchReport(question=QUESTION, answer_brief="Unclear.", key_findings=[], contrary_evidence=[])
    markdown = render_markdown(report, evidence, RenderContext(demo=False, stop_reason="max_iterations"))
    section = markdown.split("## Study results", 1)[1].split("\n## ", 1)[0]
    assert "| Mortality (in: Twenty observational studies) |" in section
    assert '"(+N more)": the study\'s text states N further results without an interval' in section
    (tmp_path / "run.json").write_text(json.dumps({"study_results": [row.model_dump() for row in rows]}))
    exported = list(csv.DictReader(io.StringIO(results_csv(tmp_path, [META.id], evidence)[0])))
    assert [r["subgroup"] for r in exported] == [
        "Twenty observational studies",
        "Nine RCTs",
        "six trials at low risk of bias",
    ]


def test_only_results_between_the_arms_make_rows() -> None:
    """A change within one arm and one group's mean with its interval state no study's result on its comparison:
    the table (and so the forest plot) shows neither; the difference between the arms beside them is the row."""
    within = make(
        "205",
        "RESULTS: In heart failure, the mean change from baseline in mortality risk score with drug X was -3.2 points "
        "(95% CI -4.0 to -2.4); the mean score at 12 months was 41.2 (95% CI 39.9 to 43.5).",
    )
    both = make(
        "206",
        "RESULTS: In heart failure, the mean change from baseline in the drug X group was -3.2 points (95% CI -4.0 to "
        "-2.4); mortality risk score fell more with drug X than with placebo (mean difference -1.1 points, 95% CI -1.9 "
        "to -0.3).",
    )
    evidence = {item.id: item for item in (within, both)}
    counted = counted_items(QUESTION, evidence, ())
    assert set(counted.counted) == set(evidence)
    rows = study_results(counted, evidence)
    assert [(row.id, row.measure, row.value) for row in rows] == [(both.id, "MD", -1.1)]
    assert rows[0].unit == "points"
    assert rows[0].ci_sides == 2
