"""The forest plot and the PRISMA flow as SVG: what they draw, what they refuse, escaping, and the flow's
numbers always those of its counts; the pooled estimate on cases whose answer is known."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deepcritical.appraisal.results import StudyResult
from deepcritical.reading.pooling import POOLED_CAVEAT, StudyEstimate, comparable, pool
from deepcritical.report.document import Figure
from deepcritical.report.figure_data import Figures, figure_lines
from deepcritical.report.forest import NOT_POOLED, NotComparableError, forest_svg
from deepcritical.report.forest_data import ForestPlot, PlottedStudy
from deepcritical.report.prisma import FlowCounts, prisma_svg
from deepcritical.report.results import effect_text

SVG = "{http://www.w3.org/2000/svg}"


def rct(label: str, value: float, low: float, high: float, n: int = 100, measure: str = "HR") -> StudyEstimate:
    return StudyEstimate(label, measure, value, low, high, "randomized_controlled_trial", n)


def texts(document: str) -> list[str]:
    return [element.text or "" for element in ET.fromstring(document).iter(f"{SVG}text")]


THREE_TRIALS = [rct("A", 0.62, 0.49, 0.77, 7020), rct("B", 0.87, 0.72, 1.06, 10142), rct("C", 0.98, 0.82, 1.17)]


def test_ratios_are_drawn_on_a_log_axis_with_each_study_and_the_null_line() -> None:
    document = forest_svg(THREE_TRIALS, "cardiovascular death")
    shown = texts(document)
    assert "Hazard ratio: cardiovascular death" in shown
    assert "Hazard ratio (log scale)" in shown
    assert [t for t in shown if t[:2] == "0." and "[" in t][:3] == [
        "0.62 [0.49, 0.77]",
        "0.87 [0.72, 1.06]",
        "0.98 [0.82, 1.17]",
    ]
    assert "7,020" in shown
    root = ET.fromstring(document)
    dashed = [line for line in root.iter(f"{SVG}line") if line.get("stroke-dasharray")]
    (null,) = dashed
    ticks = {
        t.text: float(t.get("x", "0")) for t in root.iter(f"{SVG}text") if t.text in ("0.5", "1", "2", "0.6", "0.8")
    }
    # log scale: equal ratios are equal distances, and the null line stands at 1
    assert float(null.get("x1", "0")) == pytest.approx(ticks["1"], abs=0.01)
    assert ticks["1"] - ticks["0.8"] == pytest.approx(
        (ticks["0.8"] - ticks["0.6"]) * math.log(1 / 0.8) / math.log(0.8 / 0.6), abs=0.05
    )


def test_three_randomised_trials_are_pooled_and_labelled_exploratory() -> None:
    document = forest_svg(THREE_TRIALS)
    shown = " ".join(texts(document))
    assert "Pooled (random effects, 3 RCTs; I² =" in shown
    assert "exploratory" in shown
    assert POOLED_CAVEAT.split(":")[0] in shown
    assert len(ET.fromstring(document).findall(f"{SVG}polygon")) == 1  # the diamond


@pytest.mark.parametrize(
    "studies",
    [
        THREE_TRIALS[:2],  # two trials
        [*THREE_TRIALS, StudyEstimate("Registry", "HR", 0.7, 0.55, 0.9, "cohort", 4000)],  # across designs
    ],
)
def test_no_pooled_estimate_from_fewer_than_three_trials_or_across_designs(studies: list[StudyEstimate]) -> None:
    assert pool(studies) is None
    document = forest_svg(studies)
    assert ET.fromstring(document).findall(f"{SVG}polygon") == []
    assert NOT_POOLED.split(":")[0] in " ".join(texts(document))


@pytest.mark.parametrize(
    ("studies", "reason"),
    [
        ([rct("A", 0.62, 0.49, 0.77)], "fewer than two studies"),
        ([rct("A", 0.62, 0.49, 0.77), rct("B", 1.4, 1.1, 1.9, measure="OR")], "different measures (HR, OR)"),
        (
            [
                StudyEstimate("A", "MD", -7.0, -20.7, 6.7, unit="mm"),
                StudyEstimate("B", "MD", -1.2, -2.0, -0.4, unit="points"),
            ],
            "different units",
        ),
        ([rct("A", 0.62, 0.49, 0.77), rct("B", 0.9, 1.0, 1.2)], "fewer than two studies"),  # value outside its CI
    ],
)
def test_nothing_comparable_gives_no_plot_and_the_reason(studies: list[StudyEstimate], reason: str) -> None:
    assert comparable(studies)[0] == []
    with pytest.raises(NotComparableError, match=re.escape(reason)):
        forest_svg(studies)


def test_mean_differences_in_one_unit_are_drawn_on_a_linear_axis_through_zero() -> None:
    studies = [StudyEstimate("A", "MD", -7.0, -20.7, 6.7, unit="mm"), StudyEstimate("B", "MD", -16, -26, -6, unit="mm")]
    shown = texts(forest_svg(studies, "pain"))
    assert "Mean difference (mm)" in shown
    assert "0" in shown
    assert "-7.0 [-20.7, 6.7]" in shown  # to the precision the study states it


def test_every_text_in_the_plots_is_escaped() -> None:
    hostile = '<script>alert("x")</script> & </text><text>'
    document = forest_svg([rct(hostile, 0.8, 0.6, 0.9), rct("B", 0.9, 0.7, 1.1)], hostile)
    assert "<script>" not in document
    assert hostile[:20] in " ".join(texts(document))  # shown as text, whole enough to read
    flow = prisma_svg(FlowCounts({hostile: 3}, 0, {hostile: 1}))
    assert "<script>" not in flow
    ET.fromstring(flow)  # still well-formed


def test_the_pooled_estimate_is_the_inverse_variance_mean_when_the_trials_agree() -> None:
    # Identical trials: no heterogeneity (tau² = 0, I² = 0) and the pooled interval narrows by sqrt(k).
    trials = [rct(name, 0.8, 0.64, 1.0) for name in "ABCD"]
    pooled = pool(trials)
    assert pooled is not None
    assert pooled.value == pytest.approx(0.8)
    assert (pooled.i2, pooled.tau2, pooled.k) == (0.0, 0.0, 4)
    se = (math.log(1.0) - math.log(0.64)) / (2 * 1.959964)
    assert pooled.ci_high == pytest.approx(math.exp(math.log(0.8) + 1.959964 * se / 2), rel=1e-4)


def test_heterogeneous_trials_widen_the_pooled_interval() -> None:
    spread = [rct("A", 0.5, 0.4, 0.62), rct("B", 1.3, 1.1, 1.55), rct("C", 0.9, 0.75, 1.08)]
    pooled = pool(spread)
    assert pooled is not None
    assert pooled.i2 > 0.5
    assert pooled.tau2 > 0
    assert pooled.ci_low < 0.75 < 1.1 < pooled.ci_high


def box_text(document: str, ident: str) -> str:
    root = ET.fromstring(document)
    elements = list(root)
    start = next(i for i, e in enumerate(elements) if e.get("id") == ident)
    following = []
    for element in elements[start + 1 :]:
        if element.tag != f"{SVG}text":
            break
        following.append(element.text or "")
    return " | ".join(following)


@given(
    st.dictionaries(
        st.sampled_from(["PubMed", "Europe PMC", "ClinicalTrials.gov", "Web", "Library"]),
        st.integers(0, 500),
        min_size=1,
    ),
    st.data(),
)
def test_the_flows_numbers_are_always_its_counts(identified: dict[str, int], data: st.DataObject) -> None:
    total = sum(identified.values())
    duplicates = data.draw(st.integers(0, total))
    screened = total - duplicates
    reasons = ["off-topic", "trial registration", "retracted", "no result stated"]
    excluded: dict[str, int] = {}
    left = screened
    for reason in reasons:
        excluded[reason] = data.draw(st.integers(0, left))
        left -= excluded[reason]
    counts = FlowCounts(identified, duplicates, excluded)
    document = prisma_svg(counts)
    assert box_text(document, "identified").startswith(f"Records identified (n = {total})")
    for source, n in identified.items():
        assert f"{source}: n = {n}" in box_text(document, "identified")
    assert box_text(document, "removed").endswith(f"Duplicate records: n = {duplicates}")
    assert box_text(document, "screened") == f"Records screened (n = {screened})"
    assert box_text(document, "excluded").startswith(f"Records excluded (n = {screened - left})")
    assert box_text(document, "included") == f"Studies included (n = {left})"
    assert counts.included == left


@pytest.mark.parametrize(
    ("identified", "duplicates", "excluded", "message"),
    [
        ({"PubMed": 3}, 4, {}, "4 duplicates removed of 3"),
        ({"PubMed": 3}, 1, {"off-topic": 3}, "3 records excluded of 2 screened"),
        ({"PubMed": -1}, 0, {}, "negative"),
    ],
)
def test_counts_that_do_not_add_up_are_refused(
    identified: dict[str, int], duplicates: int, excluded: dict[str, int], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        FlowCounts(identified, duplicates, excluded)


def test_each_studys_estimate_is_drawn_and_described_to_its_own_precision_as_the_table_writes_it() -> None:
    """A new user compared the SGLT2 plot with its table and its text alternative: the table and the drawing wrote
    "0.79 [0.69, 0.90]", the alternative "0.79 [0.69, 0.9]"; and the drawing's fixed two decimals would show an
    OR of 0.005 [0.001, 0.020] as "0.01 [0.00, 0.02]". One precision per estimate everywhere."""
    studies = [rct("A", 0.005, 0.001, 0.02, measure="OR"), rct("B", 0.79, 0.69, 0.9, measure="OR")]
    shown = texts(forest_svg(studies, "death"))
    assert "0.005 [0.001, 0.020]" in shown
    assert "0.79 [0.69, 0.90]" in shown
    plot = ForestPlot(
        file="forest-1", outcome="death", measure="OR",
        studies=[PlottedStudy(id=s.label, label=s.label, design=s.design, value=s.value, ci_low=s.ci_low,
                              ci_high=s.ci_high) for s in studies],
    )  # fmt: skip
    alt = next(block for block in figure_lines(Figures(forest_plots=[plot])) if isinstance(block, Figure)).alt
    assert alt.endswith("A 0.005 [0.001, 0.020]; B 0.79 [0.69, 0.90]")
    row = StudyResult(id="pmid:1", design="trial", measure="OR", value=0.005, ci_low=0.001, ci_high=0.02, quote="")
    assert effect_text(row) == "OR 0.005 [0.001, 0.020]"
