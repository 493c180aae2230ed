"""GRADE as the handbook rates a body of evidence (issue 38): the summary of findings row's effect is the one read
for its outcome, imprecision is judged from that interval and the optimal information size, and the starting level,
the participants and the studies counted are one body (randomised trials, or observational studies starting low)."""

from __future__ import annotations

from deepcritical.appraisal.answer import appraise
from deepcritical.appraisal.certainty import grade
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.results import StudyResult
from deepcritical.appraisal.strength import strength_of
from deepcritical.appraisal.verdict import counted_verdict, verdict_weight
from deepcritical.outputs import Verdict
from deepcritical.reading.frame import frame_question
from deepcritical.report.document import Inline, Table, Text
from deepcritical.report.figure_data import Figures
from deepcritical.report.summary_of_findings import best_effect, summary_of_findings
from helpers.builders import evidence_view

FRACTURES = "Does vitamin D supplementation prevent fractures in older adults?"
# One trial stating two outcomes in one sentence: falls first (significant), fractures second (its interval touching
# no effect).
FALLS_AND_FRACTURES = evidence_view(
    "506",
    "Annual high-dose oral vitamin D and falls and fractures in older women: a randomised, double-blind, "
    "placebo-controlled trial",
    "METHODS: In all, 2,256 community-dwelling women aged 70 years or older were randomised to a single annual oral "
    "dose of 500,000 IU cholecalciferol or placebo. RESULTS: Women receiving vitamin D had 15% more falls (rate ratio "
    "1.15, 95% CI 1.02 to 1.30) and 26% more fractures (1.26, 1.00 to 1.59) than those receiving placebo.",
    "randomized_controlled_trial",
    2,
    2256,
)


def verdict_of(question: str, studies: list[EvidenceView]) -> Verdict:
    return counted_verdict(question, strength_of(question, studies), studies)


def test_the_estimate_read_for_the_question_is_its_outcomes_not_the_first_in_the_sentence() -> None:
    counted = strength_of(FRACTURES, [FALLS_AND_FRACTURES])
    (study,) = appraise(counted, counted.reader_for(FRACTURES), verdict_weight)
    assert study.estimate is not None
    assert (study.estimate.value, study.estimate.ci_low, study.estimate.ci_high) == (1.26, 1.0, 1.59)


def test_the_summary_of_findings_row_shows_its_outcomes_effect_never_another_outcomes() -> None:
    def row(outcome: str, value: float, low: float, high: float) -> StudyResult:
        return StudyResult(
            id="pmid:506", design="randomised controlled trial", n=2256, measure="IRR", value=value, ci_low=low,
            ci_high=high, quote=f"{value}", outcome=outcome,
        )  # fmt: skip

    rows = [row("falls", 1.15, 1.02, 1.30), row("fractures", 1.26, 1.00, 1.59)]
    shown = best_effect(rows, ["pmid:506"], Figures(rows=rows), "fractures", "higher")
    assert "1.26" in shown
    assert "1.15" not in shown
    # A study whose only estimate names another outcome gives the row none.
    assert "1.15" not in best_effect(rows[:1], ["pmid:506"], Figures(rows=rows[:1]), "fractures", "higher")


def test_one_trial_whose_interval_touches_no_effect_is_rated_down_for_imprecision_and_says_one_study() -> None:
    verdict = verdict_of(FRACTURES, [FALLS_AND_FRACTURES])
    assert verdict.answer == "higher"
    assert verdict.certainty != "high"
    (imprecision,) = [reason for reason in verdict.certainty_reasons if reason.startswith("imprecision")]
    assert "includes no effect" in imprecision
    assert "1.00 to 1.59" in imprecision
    assert verdict.certainty_ids == [FALLS_AND_FRACTURES.id]


def trial(pmid: str, text: str, n: int, design: str = "randomized_controlled_trial", level: int = 2) -> EvidenceView:
    return evidence_view(pmid, f"Simvastatin in sepsis: study {pmid}", text, design, level, n)


SEPSIS = "Does simvastatin reduce 28-day mortality compared with placebo in sepsis?"
BLINDED = (
    "METHODS: {n} adults with sepsis were randomly assigned (computer-generated sequence, sealed opaque envelopes) to "
    "simvastatin or placebo in a double-blind trial; analysis was by intention to treat. RESULTS: 28-day mortality was "
    "lower with simvastatin than with placebo (relative risk {rr}, 95% CI {low} to {high})."
)


def test_an_interval_crossing_no_effect_rates_an_effect_down_and_a_narrow_null_is_not() -> None:
    crossing = trial("41", BLINDED.format(n=6000, rr="0.80", low="0.62", high="1.03"), 6000)
    studies = appraise(
        strength_of(SEPSIS, [crossing]), strength_of(SEPSIS, [crossing]).reader_for(SEPSIS), verdict_weight
    )
    rating = grade(studies, "lower")
    assert rating is not None
    assert [d.levels for d in rating.domains if d.domain == "imprecision"] == [1]
    narrow = grade(studies, "no difference")
    assert narrow is not None
    # 0.62 is past GRADE's appreciable benefit (0.75): no difference is not shown either.
    assert [d.levels for d in narrow.domains if d.domain == "imprecision"] == [1]
    precise = trial("42", BLINDED.format(n=6000, rr="0.97", low="0.90", high="1.05"), 6000)
    counted = strength_of(SEPSIS, [precise])
    rated = grade(appraise(counted, counted.reader_for(SEPSIS), verdict_weight), "no difference")
    assert rated is not None
    assert [d.levels for d in rated.domains if d.domain == "imprecision"] == [0]


def test_a_single_small_randomised_trial_is_never_rated_high() -> None:
    small = trial("43", BLINDED.format(n=300, rr="0.60", low="0.45", high="0.80"), 300)
    verdict = verdict_of(SEPSIS, [small])
    assert verdict.answer == "lower"
    assert verdict.certainty_reasons[0].startswith("GRADE starts high")
    assert verdict.certainty in ("moderate", "low")
    assert any(reason.startswith("imprecision (-1): few participants") for reason in verdict.certainty_reasons)


COHORT = (
    "METHODS: We followed {n} adults admitted with sepsis, of whom some took simvastatin. RESULTS: 28-day mortality "
    "was lower among simvastatin users than non-users (adjusted hazard ratio 0.80, 95% CI 0.74 to 0.87)."
)


def test_a_body_of_observational_studies_starts_low_and_a_meta_analysis_of_cohorts_is_one() -> None:
    cohort = trial("51", COHORT.format(n=50000), 50000, design="cohort", level=3)
    verdict = verdict_of(SEPSIS, [cohort])
    assert verdict.certainty_reasons[0].startswith("GRADE starts low (observational studies")
    assert verdict.certainty in ("low", "very low")
    # No randomisation is what starting low counts: not rated down again for it.
    assert not any(reason.startswith("risk of bias") for reason in verdict.certainty_reasons)
    pooled_cohorts = trial(
        "52",
        "METHODS: We pooled 18 cohort studies of statin users with sepsis (1,032,417 participants). RESULTS: 28-day "
        "mortality was lower with simvastatin (pooled relative risk 0.80, 95% CI 0.71 to 0.90).",
        1032417,
        design="meta_analysis",
        level=1,
    )
    assert verdict_of(SEPSIS, [pooled_cohorts]).certainty_reasons[0].startswith("GRADE starts low")


def test_the_row_counts_the_body_rated_the_randomised_trials_not_the_cohorts_beside_them() -> None:
    trials = [trial(pmid, BLINDED.format(n=3000, rr="0.80", low="0.70", high="0.91"), 3000) for pmid in ("61", "62")]
    cohort = trial("63", COHORT.format(n=500000), 500000, design="cohort", level=3)
    studies = [*trials, cohort]
    verdict = verdict_of(SEPSIS, studies)
    assert verdict.certainty_reasons[0].startswith("GRADE starts high (randomised trials, 2 studies rated)")
    assert sorted(verdict.certainty_ids) == ["pmid:61", "pmid:62"]
    counted = strength_of(SEPSIS, studies)
    blocks = summary_of_findings(verdict, frame_question(SEPSIS), counted, Figures(), {"pmid:61": 1, "pmid:62": 2})
    (table,) = [block for block in blocks if isinstance(block, Table)]
    participants = _text(table.rows[0][2])
    assert participants.startswith("6,000 (2 studies)")


def _text(cell: list[Inline]) -> str:
    return "".join(run.text for run in cell if isinstance(run, Text))


def test_a_question_naming_no_outcome_says_so_not_the_outcome() -> None:
    question = "Can simvastatin be repurposed for sepsis?"
    verdict = Verdict(label="maybe", confidence=0.8, answer="uncertain effect", certainty="low", by="code")
    counted = strength_of(question, [])
    blocks = summary_of_findings(verdict, frame_question(question), counted, Figures(), {})
    (table,) = [block for block in blocks if isinstance(block, Table)]
    cells = [_text(cell) for cell in table.rows[0]]
    assert cells[0].startswith("none named by the question")
    assert "the outcome" not in cells[4].replace("the outcomes the studies measured", "")
