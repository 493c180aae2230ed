"""A run's figures end to end: the SGLT2 demo run's study results, forest plot and PRISMA flow, and the same
numbers in report.md's table, the plot's SVG (and its PNG), run.json and the CSV export; the flow's numbers
always those the report states, for any mix of sources, pool and set-aside items (hypothesis)."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepcritical.appraisal.results import StudyResult
from deepcritical.appraisal.run_appraisal import counted_items
from deepcritical.models import Citation, Evidence, Grade, count_by_source
from deepcritical.outputs import ResearchReport
from deepcritical.report.figure_data import EXCLUSION_REASONS, build_figures
from deepcritical.report.figure_files import flow_counts
from deepcritical.report.forest_data import plot_designs
from deepcritical.report.prisma import prisma_svg
from deepcritical.report.render import RenderContext, escape, render_markdown
from deepcritical.report.results import effect_text
from deepcritical.text import quantity, same_precision
from helpers.commands import run_cli

SVG = "{http://www.w3.org/2000/svg}"
SGLT2 = "Do SGLT2 inhibitors improve outcomes in heart failure?"


def svg_texts(document: str) -> list[str]:
    return [element.text or "" for element in ET.fromstring(document).iter(f"{SVG}text")]


@pytest.fixture(scope="module")
def sglt2_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    out = home.parent / "sglt2-run"
    result = run_cli("research", SGLT2, "--demo", "--out", str(out), home=home)
    assert result.returncode == 0, result.stderr
    return out


def table_rows(markdown: str) -> list[list[str]]:
    section = markdown.split("## Study results", 1)[1].split("\n## ", 1)[0]
    return [
        [c.strip() for c in line.strip("|").split(" | ")] for line in section.splitlines() if line.startswith("| \\[")
    ]


@pytest.mark.model
def test_the_sglt2_demo_shows_hazard_ratios_no_plot_across_kinds_of_study_and_a_flow(
    sglt2_run: Path,
) -> None:
    record = json.loads((sglt2_run / "run.json").read_text(encoding="utf-8"))
    markdown = (sglt2_run / "report.md").read_text(encoding="utf-8")
    rows = [StudyResult.model_validate(row) for row in record["study_results"]]
    hazard = [row for row in rows if row.measure == "HR" and row.ci_low is not None]
    assert len({row.id for row in hazard}) >= 4  # the trials', the meta-analysis's and the cohort's HRs
    # Issue 40: a plot draws one kind of study. The meta-analysis stood beside the HFpEF trial it pooled (the
    # same patients twice) and beside an observational preprint; now each outcome whose studies are of different
    # kinds has no plot but a note naming them by author and year, and the post-MI trial (people without heart
    # failure) is still no study of the question's people.
    evidence = {item["id"]: item for item in record["evidence"]}
    for plot in record["forest_plots"]:
        kinds = {plot_designs(Evidence.model_validate(evidence[study["id"]])) for study in plot["studies"]}
        assert kinds == {plot["designs"]}, plot
    notes = " ".join(record["forest_notes"])
    composite = "No forest plot for composite of cardiovascular death or hospitalisation for heart failure: its studies"
    assert composite in notes
    assert "(systematic reviews and meta-analyses)" in notes
    assert "(randomised trials)" in notes
    assert "a review is never drawn beside the trials it may have pooled" in markdown
    # The preprint's n, which its abstract states ("a nationwide cohort of 38,115 adults"), is read.
    (preprint,) = {row.n for row in rows if row.id == "doi:10.99999/demo.ppr.2024.0401"}
    assert preprint == 38_115
    # The flow: drawn, recorded, linked
    flow = record["study_flow"]
    assert f"Counted: {flow['included']} of the" in markdown
    assert f"![PRISMA 2020-style flow diagram: {sum(flow['identified'].values())} records identified" in markdown
    assert f"Records screened (n = {flow['screened']})" in svg_texts((sglt2_run / "prisma.svg").read_text())


@pytest.mark.model
def test_the_run_log_states_the_flows_records_and_duplicates(sglt2_run: Path) -> None:
    # Round 4: the log said "0 duplicates dropped" (duplicates in meaning only) beside a flow of 12 duplicates.
    flow = json.loads((sglt2_run / "run.json").read_text(encoding="utf-8"))["study_flow"]
    events = [json.loads(line)["data"] for line in (sglt2_run / "events.jsonl").read_text().splitlines() if line]
    last = [event for event in events if event["kind"] == "search_finished"][-1]
    assert flow["duplicates"] > 0
    assert (last["records_identified"], last["duplicates_removed"]) == (
        sum(flow["identified"].values()),
        flow["duplicates"],
    )
    assert f"({last['records_identified']} records identified, {flow['duplicates']} duplicates removed" in last["line"]
    assert "duplicates dropped" not in last["line"]


@pytest.mark.model
def test_the_table_the_plot_run_json_and_the_csv_show_the_same_numbers(sglt2_run: Path) -> None:
    record = json.loads((sglt2_run / "run.json").read_text(encoding="utf-8"))
    rows = [StudyResult.model_validate(row) for row in record["study_results"]]
    # report.md: a line per row, in the record's order, with the row's effect and p
    table = table_rows((sglt2_run / "report.md").read_text(encoding="utf-8"))
    assert [line[6] for line in table] == [escape(effect_text(row)) or "–" for row in rows]
    # the CSV export: the record's rows, number for number
    result = run_cli("export", str(sglt2_run), "--format", "results-csv", home=sglt2_run.parent / "home")
    assert result.returncode == 0, result.stderr
    exported = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [(r["id"], r["measure"], r["value"], r["ci_low"], r["ci_high"]) for r in exported] == [
        (row.id, row.measure, *("" if v is None else str(v) for v in (row.value, row.ci_low, row.ci_high)))
        for row in rows
    ]
    assert [r["reference"] for r in exported] == [line[0].strip("\\[]") for line in table]
    # each row's population and reading, in the record, the report and the CSV alike
    assert [(r["population"], r["study_reading"]) for r in exported] == [
        (row.population or "", row.reading) for row in rows
    ]
    # each row's own direction, not the study's reading: a trial's favourable HR reads "lower"
    assert [r["direction"] for r in exported] == [row.result_direction for row in rows]
    assert any(r["direction"] == "lower" and r["measure"] == "HR" for r in exported)
    assert any(r["direction"] != r["study_reading"] for r in exported)
    assert all(not r["outcome"].endswith("…") for r in exported)
    assert [line[9] for line in table] == [row.reading for row in rows]
    shown = {True: "significant", False: "not significant", None: "–"}
    assert [line[8] for line in table] == [shown[row.significant] for row in rows]  # the row's own
    assert any(row.direction == "favourable" and row.measure == "HR" for row in rows)  # SGLT2: the trials' HRs
    to_file = run_cli(
        "export",
        str(sglt2_run),
        "--format",
        "results-csv",
        "-o",
        str(sglt2_run / "results.csv"),
        home=sglt2_run.parent / "home",
    )
    assert to_file.returncode == 0, to_file.stderr
    assert f"{len(rows)} result row(s) written" in to_file.stderr
    assert (sglt2_run / "results.csv").read_text(encoding="utf-8") == result.stdout
    # the plot: each study's estimate is a row of the record, and the SVG shows it
    by_row = {(row.id, row.value, row.ci_low, row.ci_high) for row in rows}
    for plot in record["forest_plots"]:
        shown = svg_texts((sglt2_run / f"{plot['file']}.svg").read_text(encoding="utf-8"))
        for study in plot["studies"]:
            assert (study["id"], study["value"], study["ci_low"], study["ci_high"]) in by_row
            assert "{} [{}, {}]".format(*same_precision(study["value"], study["ci_low"], study["ci_high"])) in shown


# --- the flow's numbers are the report's, whatever the run ---

QUESTION = "Does drug X reduce mortality in heart failure?"
ON_TOPIC = "RESULTS: Drug X reduced mortality in heart failure (HR 0.80, 95% CI 0.70 to 0.91)."
OFF_TOPIC = "RESULTS: Vitamin D did not change bone density in older women."
SOURCES = ("pubmed", "europepmc", "web", "clinicaltrials", "searxng")
item_kinds = st.sampled_from(["on_topic", "off_topic", "registration", "retracted"])


def make_item(index: int, kind: str, sources: tuple[str, ...]) -> Evidence:
    design = "registered_trial" if kind == "registration" else "randomized_controlled_trial"
    citation = Citation(
        source=sources[0],  # type: ignore[arg-type]
        title=f"Trial {index} of drug X in heart failure" if kind != "off_topic" else f"Bone study {index}",
        url=f"https://pubmed.ncbi.nlm.nih.gov/{9000 + index}/",
        pmid=str(9000 + index),
        date="2021",
    )
    return Evidence(
        content=OFF_TOPIC if kind == "off_topic" else ON_TOPIC,
        citation=citation,
        grade=Grade(design=design, level=2, population="humans", basis="publication_type"),
        found_by=sources,  # type: ignore[arg-type]
        retracted=kind == "retracted",
    )


def numbers_after(label: str, text: str) -> int:
    match = re.search(rf"{label}[^0-9]*(\d+)", text)
    return int(match.group(1)) if match else 0


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(item_kinds, st.lists(st.sampled_from(SOURCES), min_size=1, max_size=3, unique=True)),
        min_size=0,
        max_size=8,
    ),
    st.data(),
)
def test_the_flow_always_shows_the_reports_own_counts(items: list[tuple[str, list[str]]], data: st.DataObject) -> None:
    evidence = {e.id: e for e in (make_item(i, kind, tuple(found)) for i, (kind, found) in enumerate(items))}
    pool = data.draw(st.lists(st.sampled_from(sorted(evidence)), unique=True) if evidence else st.just([]))
    sources = count_by_source(evidence.values())
    context = RenderContext(demo=False, stop_reason="max_iterations", sources=sources, pool=pool)
    report = ResearchReport(question=QUESTION, answer_brief="Maybe.", key_findings=[], contrary_evidence=[])
    markdown = render_markdown(report, evidence, context)
    counted = counted_items(QUESTION, evidence, pool)
    flow = build_figures(counted, evidence, {}).flow
    assert flow is not None
    drawn = svg_texts(prisma_svg(flow_counts(flow)))
    # What the report says, read back from its own words
    said_sources = dict(re.findall(r"(\w+) (\d+)", markdown.split("counts for each): ", 1)[1].split(".\n", 1)[0]))
    assert {name: int(count) for name, count in said_sources.items()} == flow.identified
    assert f"Records identified (n = {sum(flow.identified.values())})" in drawn
    box = drawn[1 : drawn.index("Records removed before screening")]  # the identified box, after its title
    assert box == [f"{name}: n = {count}" for name, count in sorted(flow.identified.items())]
    assert f"Records screened (n = {len(evidence)})" in drawn
    assert f"{quantity(len(evidence), 'item')} collected" in markdown
    assert f"Duplicate records: n = {sum(sources.values()) - len(evidence)}" in drawn
    if evidence:
        counted_line = markdown.split("## Answer in brief", 1)[1].split("Counted: ", 1)[1].split("\n", 1)[0]
        assert f"Studies included (n = {numbers_after('', counted_line)})" in drawn
        reviewed = int(re.search(r"of the (\d+) items? reviewed", counted_line).group(1))  # type: ignore[union-attr]
        assert flow.excluded.get(EXCLUSION_REASONS["not_reviewed"], 0) == len(evidence) - reviewed
        for words, reason in (
            ("off the question's topic", "off_topic"),
            ("trial registration", "registrations"),
            ("retracted", "retracted"),
        ):
            said = re.search(rf"(\d+) {re.escape(words)}", counted_line)
            assert flow.excluded.get(EXCLUSION_REASONS[reason], 0) == (int(said.group(1)) if said else 0)
            if said:
                assert f"{EXCLUSION_REASONS[reason]}: n = {said.group(1)}" in drawn
    else:
        assert "Studies included (n = 0)" in drawn


def test_figures_an_earlier_run_left_in_the_folder_are_removed(tmp_path: Path) -> None:
    """A new user's "--out" given again for another question: the heart-failure run's forest-1..3 stayed beside
    the statin run's report (which drew none) and the page offered them as its downloads."""
    from deepcritical.report.figure_data import Figures
    from deepcritical.report.figure_files import write_figures

    for name in ("forest-1.svg", "forest-1.png", "forest-3.svg", "prisma.svg", "report.md"):
        (tmp_path / name).write_text("earlier run", encoding="utf-8")
    assert write_figures(Figures(), tmp_path) == []
    assert sorted(path.name for path in tmp_path.iterdir()) == ["report.md"]
