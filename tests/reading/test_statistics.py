"""The statistics reader on the forms results are written in: each a small written example, and
generated estimates in any spelling read back exactly."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deepcritical.reading.effects import Effect, significant_from_ci, significant_from_p
from deepcritical.reading.statistics import read_effects


def only(text: str) -> Effect:
    effects = read_effects(text)
    assert len(effects) == 1, effects
    return effects[0]


def estimates(text: str) -> list[tuple[str, float | None, float | None, float | None]]:
    return [(e.measure, e.value, e.ci_low, e.ci_high) for e in read_effects(text) if e.measure != "p_only"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no difference (p = .03)", "=0.03"),
        ("(P<0.05)", "<0.05"),
        ("p-value 0.02", "=0.02"),
        ("p < 0.001", "<0.001"),
        ("P\u2009=\u20090.907", "=0.907"),
        ("P\xa0<\xa00.0001", "<0.0001"),
        ("p≤0.01", "≤0.01"),
        ("p >= 0.05", "≥0.05"),
        ("p=0·0300", "=0.0300"),
        ("P-value for difference =0.0001", "=0.0001"),
        ("P for trend = 0.02", "=0.02"),
        ("p = NS", "NS"),
        ("(P = 2.3 × 10-5)", "=2.3e-5"),
        ("P < 10−4", "<1e-4"),
        ("the difference was not significant (NS).", "NS"),
        ("98.4\n100\nN.S.\n", "NS"),
    ],
)
def test_a_p_value_is_read_with_its_comparator(text: str, expected: str) -> None:
    assert [e.p for e in read_effects(text)] == [expected]


@pytest.mark.parametrize(
    "text",
    [
        "Group P2.5 had fewer events",  # a group named P, not a p-value
        "p = 1.7",  # no probability
        "the 12 patients of study P",
        "normal saline (NS) was given; 40 ml of NS, then",
    ],
)
def test_what_only_looks_like_a_p_value_is_not_read(text: str) -> None:
    assert [e.p for e in read_effects(text) if e.p] == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hazard ratio 0.77, 95% CI 0.72-0.82", ("HR", 0.77, 0.72, 0.82)),
        ("HR 0.58 (95% CI, 0.34 to 0.97)", ("HR", 0.58, 0.34, 0.97)),
        ("aOR 0·80, 95% CI 0·66 to 0·98", ("OR", 0.80, 0.66, 0.98)),
        ("odds ratio 3.33, 95% confidence interval 0.75–14.5", ("OR", 3.33, 0.75, 14.5)),
        ("(OR = 2.1, CI 95%: 1.2-3.4)", ("OR", 2.1, 1.2, 3.4)),
        ("RR 1.26 (1.00-1.59)", ("RR", 1.26, 1.00, 1.59)),
        ("risk ratio [RR] 0.8094 [95% CI 0.7090–0.9242]", ("RR", 0.8094, 0.7090, 0.9242)),
        ("relative risk 0.9 (0.8, 1.1)", ("RR", 0.9, 0.8, 1.1)),
        ("incidence rate ratio 1.4 (95% CI 1.1 to 1.8)", ("IRR", 1.4, 1.1, 1.8)),
        ("mean difference −7.0 mm (95% CI −20.7 to +6.7)", ("MD", -7.0, -20.7, 6.7)),
        ("difference between groups −16 mm, 95% CI: −26 to −6", ("MD", -16.0, -26.0, -6.0)),
        ("MD = 1.77, 95% CI 0.26–3.28", ("MD", 1.77, 0.26, 3.28)),
        ("SMD -0.45 (95% CI -0.80 to -0.10)", ("SMD", -0.45, -0.80, -0.10)),
        ("risk difference 4.1% (95% CI 1.2% to 7.0%)", ("RD", 4.1, 1.2, 7.0)),
        ("risk difference was 4.2 percentage points (95% CI 1.1 to 7.3)", ("RD", 4.2, 1.1, 7.3)),
        ("ARR 2.0 percent points (95% CI -0.4 to 4.4)", ("RD", 2.0, -0.4, 4.4)),
        ("NNT 12 (95% CI 7 to 40)", ("NNT", 12.0, 7.0, 40.0)),
        ("HR with 95% CI: 0.77 (0.72–0.82)", ("HR", 0.77, 0.72, 0.82)),
        ("HR (95% CI) 0.77 (0.72–0.82)", ("HR", 0.77, 0.72, 0.82)),
        ("a 26% reduction (95% CI 10% to 40%)", ("percent_change", -26.0, -40.0, -10.0)),  # a fall is negative
        ("a 12% increase (95% CI 2% to 23%)", ("percent_change", 12.0, 2.0, 23.0)),
        (
            "cardiovascular death (HR 0.87, 95% CI 0.79 to 0.95), death (HR 0.92, 0.86 to 0.99)",
            ("HR", 0.92, 0.86, 0.99),
        ),
        ("hazard ratio −0.5?? no: differences of 0.34, 95% C.I. -0.33, 1.02", ("MD", 0.34, -0.33, 1.02)),
        ("HR 0.61; 90% CI 0.45 to 0.83", ("HR", 0.61, 0.45, 0.83)),
        ("OR\u2009=\u20091.1, 95% CI\u2009=\u20090.3–3.4", ("OR", 1.1, 0.3, 3.4)),
        ("RR 1.16, CI 0.99–1.36", ("RR", 1.16, 0.99, 1.36)),
        ("-0.5--0.1 aside, MD -0.3 (-0.5 - -0.1)", ("MD", -0.3, -0.5, -0.1)),
    ],
)
def test_an_estimate_is_read_with_its_interval(text: str, expected: tuple[str, float, float, float]) -> None:
    assert expected in estimates(text)


@pytest.mark.parametrize(
    ("text", "measure"),
    [
        (
            "Sixty-day mortality was 28.5% with rosuvastatin and 24.9% with placebo (difference 3.6 percentage "
            "points, 95% CI -2.8 to 10.0; p=0.21).",
            "RD",
        ),
        ("Events: 12.0% vs 9.5% (between-group difference 2.5 percentage points, 95% CI 0.4 to 4.6).", "RD"),
        # A difference of averages measured in percent is a mean difference, not one of risks.
        ("Mean HbA1c was 7.1% vs 7.6% (difference -0.5 percentage points, 95% CI -0.7 to -0.3).", "MD"),
        ("Weight fell by 3.1 kg vs 1.0 kg (difference -2.1 kg, 95% CI -2.9 to -1.3).", "MD"),
    ],
)
def test_a_difference_in_percentage_points_of_two_risks_is_a_risk_difference(text: str, measure: str) -> None:
    (effect,) = [effect for effect in read_effects(text) if effect.measure != "group_values"]
    assert effect.measure == measure


def test_the_level_of_an_interval_is_kept() -> None:
    assert only("HR 0.61; 90% CI 0.45 to 0.83").ci_level == 90.0
    assert only("HR 0.61 (95 % CI 0.45 to 0.83)").ci_level == 95.0
    assert only("RR 1.26 (1.00-1.59)").ci_level is None  # not stated


def test_an_estimate_without_an_interval_is_read_from_its_name() -> None:
    assert estimates("OR = 2.3, p = 0.01") == [("OR", 2.3, None, None)]
    assert estimates("teachers' behaviour (ES = 1.29)") == [("SMD", 1.29, None, None)]


@pytest.mark.parametrize(
    "text",
    [
        "Heart rate (HR) was 72 (95% CI 68-76) beats per minute",
        "HR 78 (70-86) bpm at rest",
        "respiratory rate (RR) 18 (16-20) breaths/min",
        "a continuous infusion (CI) of remifentanil, CI 0.5-1.0 µg/kg/min",
        "the median stay was 4.0 (2.0-6.0) days",  # a median and its range: one group's value
    ],
)
def test_look_alikes_are_not_effect_sizes(text: str) -> None:
    assert [e for e in read_effects(text) if e.measure in ("HR", "RR", "OR", "MD", "IRR")] == []


def test_a_hazard_ratio_beside_a_heart_rate_is_still_read() -> None:
    text = "HR 72 ± 8 vs 80 ± 9 bpm (P<0.05). The hazard ratio was 0.77 (0.72-0.82)."
    assert ("HR", 0.77, 0.72, 0.82) in estimates(text)


@pytest.mark.parametrize(
    ("text", "groups"),
    [
        ("79 % vs 59 %, p = 0.04", ("79 %", "59 %")),
        ("59/250 (22%) and 45/209 (21%)", ("59/250 (22%)", "45/209 (21%)")),
        ("(CM+ 4/24; 17%, CM– 7/24; 29%, P\u2009=\u2009.16)", ("4/24; 17%", "7/24; 29%")),
        ("in 17 (27.4%) and 31 (50.0%) patients", ("17 (27.4%)", "31 (50.0%)")),
        ("(265 [25%] of 1054) than placebo (304 [29%] of 1058)", ("265 [25%] of 1054", "304 [29%] of 1058")),
        ("(7.9 ± 4.1; UCC: 5.0 ± 4.0; P = .04)", ("7.9 ± 4.1", "5.0 ± 4.0")),
        ("(2.3 versus 4.2 months; P = 0.067)", ("2.3", "4.2 months")),
        ("(67.6%, SD 21.4 vs 43.3%, SD 23.4; P<.001)", ("67.6%, SD 21.4", "43.3%, SD 23.4")),
        ("3.4 cm2 versus 6.6 cm2 for sows", ("3.4 cm2", "6.6 cm2")),
        ("35 mm in the Lozenge group and 51 mm in the Control group", ("35 mm", "51 mm")),
        ("were 752 and 707 events, respectively", ("752", "707 events")),
        ("56% [188 of 334] vs 15% [46 of 313]", ("56% [188 of 334]", "15% [46 of 313]")),
        ("3.8% (0.4%–12.9%) in HAART and 5.7% (1.8%–12.7%) in PMTCT", ("3.8% (0.4%–12.9%)", "5.7% (1.8%–12.7%)")),
    ],
)
def test_each_groups_value_is_read_as_written(text: str, groups: tuple[str, ...]) -> None:
    found = [e.groups for e in read_effects(text) if e.measure == "group_values"]
    assert found == [groups]


def test_a_tables_rows_are_separate_comparisons() -> None:
    text = "Lean mass (kg)\n−0.4 ± 1.0\n−0.5 ± 1.2\n0.77\n−0.8 ± 0.9\n−1.2 ± 1.7\n0.24\n"
    found = [e.groups for e in read_effects(text) if e.measure == "group_values"]
    assert found == [("−0.4 ± 1.0", "−0.5 ± 1.2"), ("−0.8 ± 0.9", "−1.2 ± 1.7")]


def test_concentrations_and_thresholds_are_not_group_values() -> None:
    text = "the 2% CHX group and the 2.5% NaOCl group; relapse was a return to ≥ 90% of baseline and 50%"
    assert [e for e in read_effects(text) if e.measure == "group_values"] == []


def test_a_p_value_belongs_to_the_result_it_follows() -> None:
    text = "rash (56% vs 15%, p<0·0001); HR 0.75 [95% CI 0.57–1.00], p\u200a=\u200a0.047. Other (P = 0.3)."
    effects = read_effects(text)
    assert [(e.measure, e.p) for e in effects] == [("group_values", "<0.0001"), ("HR", "=0.047"), ("p_only", "=0.3")]


def test_a_fall_is_a_negative_change_and_a_rise_a_positive_one() -> None:
    effects = read_effects("Plasma volume fell by 7.3%, with a 27% rise in erythropoietin; 16% fewer deaths.")
    assert [(e.measure, e.value) for e in effects] == [
        ("percent_change", -7.3),
        ("percent_change", 27.0),
        ("percent_change", -16.0),
    ]


def test_an_interaction_p_value_is_not_the_estimates_own() -> None:
    effects = read_effects("death (HR 0.92, 95% CI 0.86 to 0.99). Effects were consistent (interaction p=0.64).")
    assert [(e.measure, e.p) for e in effects] == [("HR", None), ("p_only", "=0.64")]


def test_a_p_value_after_another_sentence_with_numbers_is_its_own() -> None:
    effects = read_effects("HR 0.8 (0.7-0.9). Mortality was 12 in all. Another outcome differed (p = 0.01).")
    assert [(e.measure, e.p) for e in effects] == [("HR", None), ("p_only", "=0.01")]


def test_offsets_index_the_text_as_given() -> None:
    text = "Fewer had expansion (aOR 0·80, 95% CI 0·66 to 0·98, p=0·0300) overall, 26 % more fractures."
    for effect in read_effects(text):
        assert text[effect.start : effect.end] == effect.quote
    first = read_effects(text)[0]
    assert first.quote == "aOR 0·80, 95% CI 0·66 to 0·98, p=0·0300"


@pytest.mark.parametrize(
    ("text", "significant"),
    [
        ("OR 1.5 (95% CI 1.1-2.0)", True),
        ("OR 1.5 (95% CI 0.9-2.0)", False),
        ("RR 1.26 (1.00-1.59)", False),  # touches the null
        ("MD -3 (95% CI -5 to -1)", True),
        ("MD 0.8 (95% CI 0.2 to 1.4)", True),
        ("MD 0.8 (95% CI -0.2 to 1.4)", False),
        ("HR 0.75 [95% CI 0.57–1.00], p = 0.047", True),  # the p-value rules
        ("no difference (p = 0.05)", False),
        ("differed (p < 0.10)", None),
        ("(P > 0.05)", False),
        ("NNT 12 (95% CI 7 to 40)", None),
    ],
)
def test_significance_comes_from_the_p_value_else_the_interval(text: str, significant: bool | None) -> None:
    assert read_effects(text)[0].significant is significant


def test_significance_helpers_on_edge_cases() -> None:
    assert significant_from_p("<0.05") is True
    assert significant_from_p("=0.049") is True
    assert significant_from_p("≥0.05") is False
    assert significant_from_p("NS") is False
    assert significant_from_ci("HR", 1.2, 0.8) is False  # bounds in either order
    assert significant_from_ci("group_values", 1.0, 2.0) is None


def test_a_change_within_one_arm_is_marked() -> None:
    within = only("Flexion improved significantly from baseline to 24 months (P < 0.0001).")
    between = only("Flexion was better with A than with B (P = 0.01).")
    assert within.within_group
    assert not between.within_group


def test_text_without_results_gives_none() -> None:
    assert read_effects("There were no significant differences in the implantation or clinical pregnancy rates.") == []
    assert read_effects("") == []


def test_importing_the_reader_compiles_no_pattern() -> None:
    code = (
        "import re, sys; import deepcritical.reading.statistics as s; "
        "from deepcritical.reading import patterns; "
        "print(patterns.p_value.cache_info().currsize, 'pydantic' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["0", "False"]


_RATIO_NAMES = {
    "HR": ("HR", "aHR", "hazard ratio", "Hazard Ratio"),
    "OR": ("OR", "odds ratio"),
    "RR": ("RR", "risk ratio"),
}
_SEPARATORS = ("-", "–", "−", " to ", ", ")
_DECIMAL = st.sampled_from((".", "·"))


@st.composite
def written_estimate(draw: st.DrawFn) -> tuple[str, str, float, float, float]:
    measure = draw(st.sampled_from(sorted(_RATIO_NAMES)))
    name = draw(st.sampled_from(_RATIO_NAMES[measure]))
    low, value, high = sorted(draw(st.lists(st.integers(1, 399), min_size=3, max_size=3, unique=True)))
    point = draw(_DECIMAL)

    def number(hundredths: int) -> str:
        return f"{hundredths // 100}{point}{hundredths % 100:02d}"

    separator = draw(st.sampled_from(_SEPARATORS))
    interval = f"{number(low)}{separator}{number(high)}"
    template = draw(
        st.sampled_from(
            (
                "{name} {v} (95% CI {i})",
                "{name} {v}, 95% CI {i}",
                "{name} = {v}; 95 % CI, {i}",
                "{name} {v} [95% confidence interval {i}]",
                "{name} (95% CI) {v} ({i})",
                "{name} {v} ({i})",
                "({name}, {v}; 95%\u2009CI {i})",
            )
        )
    )
    text = "In the trial, " + template.format(name=name, v=number(value), i=interval) + " overall."
    return text, measure, value / 100, low / 100, high / 100


@given(written_estimate())
def test_a_generated_ratio_in_any_spelling_is_read_back_exactly(case: tuple[str, str, float, float, float]) -> None:
    text, measure, value, low, high = case
    effect = only(text)
    assert (effect.measure, effect.value, effect.ci_low, effect.ci_high) == (measure, value, low, high)
    assert effect.significant is (not low <= 1 <= high)
    assert text[effect.start : effect.end] == effect.quote


@given(
    st.floats(0.0001, 0.999, allow_nan=False).map(lambda x: round(x, 4)),
    st.sampled_from(("<", "=", ">", "≤")),
    st.sampled_from(("p", "P", "p-value", "P value")),
    st.sampled_from(("", " ", "\u2009", "\xa0")),
)
def test_a_generated_p_value_is_read_back(number: float, comparator: str, word: str, space: str) -> None:
    written = f"{number:.4f}".rstrip("0").rstrip(".")
    text = f"Outcomes differed ({word}{space}{comparator}{space}{written})."
    assert [e.p for e in read_effects(text)] == [comparator + written]


@st.composite
def written_difference(draw: st.DrawFn) -> tuple[str, float, float, float]:
    low, value, high = sorted(draw(st.lists(st.integers(-3000, 3000), min_size=3, max_size=3, unique=True)))
    minus = draw(st.sampled_from(("-", "−")))

    def number(tenths: int) -> str:
        sign = minus if tenths < 0 else draw(st.sampled_from(("", "+"))) if tenths > 0 else ""
        return f"{sign}{abs(tenths) // 10}.{abs(tenths) % 10}"

    separator = draw(st.sampled_from((" to ", ", ", "; ")))
    name = draw(st.sampled_from(("mean difference", "MD", "difference between groups")))
    unit = draw(st.sampled_from(("", " mm", " points")))
    template = draw(st.sampled_from(("{n} {v}{u} (95% CI {lo}{sep}{hi})", "{n} {v}{u}, 95% CI [{lo}{sep}{hi}]")))
    text = template.format(n=name, v=number(value), u=unit, lo=number(low), sep=separator, hi=number(high))
    return f"At 12 weeks the {text} favoured neither arm.", value / 10, low / 10, high / 10


@given(written_difference())
def test_a_generated_difference_with_negative_bounds_is_read_back_exactly(
    case: tuple[str, float, float, float],
) -> None:
    text, value, low, high = case
    effect = only(text)
    assert (effect.measure, effect.value, effect.ci_low, effect.ci_high) == ("MD", value, low, high)
    assert effect.significant is (not low <= 0 <= high)


def test_a_small_study_bias_test_p_is_not_the_pooled_estimates() -> None:
    text = "The pooled RR was 0.92 (0.77 to 1.10). Funnel-plot asymmetry suggested small-study effects (Egger p=0.03)."
    pooled, egger = read_effects(text)
    assert (pooled.measure, pooled.value, pooled.p, pooled.significant) == ("RR", 0.92, None, False)
    assert (egger.measure, egger.p) == ("p_only", "=0.03")


def test_two_outcomes_changed_by_percentages_are_not_two_groups() -> None:
    first, *_ = read_effects("Atorvastatin reduced tissue factor mRNA by 48% and CRP by 39% compared with placebo.")
    assert (first.measure, first.value, first.groups) == ("percent_change", -48.0, ())
    assert not [e for e in read_effects("reduced tissue factor mRNA by 48% and CRP by 39%") if e.groups]
    long_name = "reduced the LPS-induced rise in monocyte tissue factor mRNA by 48% and in CRP by 39% (both p<0.01)"
    assert [(e.measure, e.value) for e in read_effects(long_name)][:1] == [("percent_change", -48.0)]


# --- round 4: a per-unit estimate keeps its interval ---


@pytest.mark.parametrize(
    ("text", "expected", "per"),
    [
        (
            "(OR 0.98 per standard deviation increase, 95% CI 0.93 to 1.04; p=0.55)",
            ("OR", 0.98, 0.93, 1.04),
            "per standard deviation increase",
        ),
        ("OR 0.98 per SD (95% CI 0.93 to 1.03)", ("OR", 0.98, 0.93, 1.03), "per SD"),
        ("the odds ratio was 0.98 per SD (95% CI 0.94-1.02)", ("OR", 0.98, 0.94, 1.02), "per SD"),
        ("HR 1.12 per 10 nmol/L (95% CI 1.01 to 1.24)", ("HR", 1.12, 1.01, 1.24), "per 10 nmol/L"),
        ("OR 0.98 per 1-SD increase (0.93-1.03)", ("OR", 0.98, 0.93, 1.03), "per 1-SD increase"),
    ],
)
def test_a_per_unit_estimate_keeps_its_interval_and_its_unit(
    text: str, expected: tuple[str, float, float, float], per: str
) -> None:
    from deepcritical.appraisal.results import StudyResult
    from deepcritical.report.results import effect_text

    effect = only(text)
    assert (effect.measure, effect.value, effect.ci_low, effect.ci_high) == expected
    assert effect.unit == per
    row = StudyResult(
        id="x", design="cohort", measure=effect.measure, value=effect.value, ci_low=effect.ci_low,
        ci_high=effect.ci_high, quote=effect.quote, unit=effect.unit,
    )  # fmt: skip
    assert effect_text(row) == f"{expected[0]} {expected[1]:.2f} {per} [{expected[2]:.2f}, {expected[3]:.2f}]"


def test_a_ratio_per_unit_is_not_plotted_beside_a_ratio_between_groups() -> None:
    from deepcritical.reading.pooling import StudyEstimate, comparable

    per_sd = StudyEstimate("A", "OR", 0.98, 0.93, 1.04, unit="per SD")
    groups = StudyEstimate("B", "OR", 0.80, 0.70, 0.91)
    plotted, reason = comparable([per_sd, groups])
    assert plotted == []
    assert reason == "the ratios are per different units (between groups, per SD)"
    assert comparable([per_sd, StudyEstimate("C", "OR", 0.95, 0.90, 1.00, unit="per SD")])[1] is None


def test_a_value_called_the_estimate_takes_the_measure_of_the_estimate_before_it() -> None:
    """A pooled subgroup's estimate written without its measure or a CI label ("the estimate was 0.95 (0.84 to
    1.07; I²=61%)") is read as the text's last named estimate's measure; a median and its range are not, nor an
    "estimate" with no estimate before it."""
    text = (
        "The pooled relative risk (RR) of dementia was 0.80 (95% CI 0.71 to 0.90; I²=88%).\n\nIn the nine studies "
        "free of immortal-time bias the estimate was 0.95 (0.84 to 1.07; I²=61%). The median age was 65 (58 to 72)."
    )
    estimates = [(e.measure, e.value, e.ci_low, e.ci_high) for e in read_effects(text) if e.measure == "RR"]
    assert estimates == [("RR", 0.80, 0.71, 0.90), ("RR", 0.95, 0.84, 1.07)]
    assert all(e.value != 65 for e in read_effects(text))
    alone = "In the nine studies the estimate was 0.95 (0.84 to 1.07)."
    assert all(e.ci_low is None for e in read_effects(alone))


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        (
            "Atorvastatin 40 mg daily reduced progression to severe sepsis from 24% to 4% (p=0.007). The trial was "
            "not powered for mortality.",
            "24% to 4% (p=0.007)",
        ),
        (
            "Simvastatin reduced the LPS-induced rise in monocyte tissue factor mRNA by 48% and in CRP by 39% "
            "(both p<0.01) and attenuated the release of soluble E-selectin.",
            "(both p<0.01)",
        ),
        (
            "The pooled relative risk (RR) of all-cause dementia was 0.80 (95% CI 0.71 to 0.90; I²=88%). In the "
            "nine studies the estimate was 0.95.",
            "(RR) of all-cause dementia was 0.80 (95% CI 0.71 to 0.90; I²=88%)",
        ),
    ],
)
def test_a_quote_closes_every_bracket_it_opens(text: str, quote: str) -> None:
    """A new user saw "24% to 4% (p=0.007", "(both p<0.01" and "RR) of all-cause dementia was 0.80 (95% CI 0.71
    to 0.90" in the results table: a quote now reaches the other half of each bracket it cuts."""
    effect = read_effects(text)[0]
    assert effect.quote.endswith(quote) or effect.quote == quote
    assert text[effect.start : effect.end] == effect.quote
    for opening, closing in ("()", "[]"):
        assert effect.quote.count(opening) == effect.quote.count(closing)


def test_a_bracket_with_no_other_half_nearby_is_cut_off() -> None:
    text = "Mortality fell from 30% to 20% (p=0.04; see the supplementary appendix for the sensitivity analyses"
    effect = read_effects(text)[0]
    assert "(" not in effect.quote
    assert text[effect.start : effect.end] == effect.quote
