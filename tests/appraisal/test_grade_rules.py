"""GRADE rules written from the certainty misses on MedEvidence's development reviews (phases/23_cochrane_answer.md,
round 4), each on an example written here: evidence that exists but whose result could not be read is rated
(very uncertain), not left without a certainty; intervals on opposite sides of no effect are very serious
inconsistency; a review beside the trials it may have pooled is not counted twice for the optimal information size;
an arm's setting ("at 125 mmHg") is named by its number."""

from __future__ import annotations

from deepcritical.appraisal.answer import AppraisedStudy, appraise
from deepcritical.appraisal.certainty import imprecision_domain, inconsistency_domain
from deepcritical.appraisal.directness import direct_to_the_frame
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.risk_of_bias import risk_of_bias
from deepcritical.appraisal.strength import strength_of
from deepcritical.appraisal.verdict import counted_verdict, verdict_weight
from deepcritical.outputs import Verdict
from deepcritical.report.markdown_writer import blocks_markdown
from deepcritical.report.sections import verdict_block
from helpers.builders import evidence_view


def verdict_of(question: str, studies: list[EvidenceView]) -> Verdict:
    return counted_verdict(question, strength_of(question, studies), studies)


TELEREHABILITATION = (
    "Does telerehabilitation with a therapist reduce device abandonment compared with self-guided training?"
)
# A trial that names the question's outcome but states its result only for another one (the abstract's result for
# device abandonment is in the full text).
UNREAD = evidence_view(
    "701",
    "Telerehabilitation with a therapist versus self-guided training for magnifier use in low vision: a randomised "
    "trial",
    "Adults with low vision (n = 57) were randomly assigned to telerehabilitation with a therapist or self-guided "
    "training with a new electronic magnifier. Outcomes were reading speed, vision-related quality of life and "
    "device abandonment at 2 weeks and 3 months. Reading speed improved in both groups from baseline.",
    "randomized_controlled_trial",
    2,
    57,
)


def test_an_insufficient_answer_on_studies_that_name_the_outcome_states_a_very_uncertain_certainty() -> None:
    verdict = verdict_of(TELEREHABILITATION, [UNREAD])
    assert verdict.answer == "insufficient data"
    assert verdict.label == "insufficient"
    # The evidence exists (a randomised trial naming the outcome), its result unread: rated, very uncertain.
    assert verdict.certainty in ("low", "very low")
    assert verdict.certainty_reasons[0].startswith("GRADE starts high (randomised trials, 1 study rated)")
    (imprecision,) = [reason for reason in verdict.certainty_reasons if reason.startswith("imprecision")]
    assert imprecision.startswith("imprecision (-2): no result for the outcome could be read")
    assert verdict.certainty_ids == [UNREAD.id]


def test_the_verdict_line_of_an_insufficient_answer_says_whose_certainty_it_is_and_no_one_study_confidence() -> None:
    line = blocks_markdown(verdict_block(verdict_of(TELEREHABILITATION, [UNREAD]), {}))
    assert "GRADE certainty of the studies naming the outcome, their result unread: very low" in line
    # "confidence 0.00 from one study" would read as one study's result weighed: there is none.
    assert "from one study" not in line
    assert "confidence" not in line  # "Insufficient evidence (confidence 0.00" is no figure about the evidence
    assert "\n**Insufficient evidence** (computed in code; GRADE certainty of the studies" in line


def test_an_insufficient_answer_whose_intervention_nothing_names_states_no_certainty() -> None:
    other = "Does colchicine reduce device abandonment compared with self-guided training?"
    verdict = verdict_of(other, [UNREAD])
    assert verdict.answer == "insufficient data"
    assert verdict.certainty is None
    assert verdict.certainty_reasons == []


HOUSING = "Does housing modification reduce clinical malaria incidence compared with no modification?"


def test_intervals_on_opposite_sides_of_no_effect_are_very_serious_inconsistency() -> None:
    more = evidence_view(
        "711",
        "Housing modification and malaria in children: a randomised trial",
        "Households (800 children) were randomly assigned to housing modification or no modification. Incidence of "
        "clinical malaria was higher in children in modified houses than in unmodified houses (incidence rate ratio "
        "1.68, 95% CI 1.11 to 2.55; p = 0.014).",
        "randomized_controlled_trial",
        2,
        800,
    )
    fewer = evidence_view(
        "712",
        "Housing modification to prevent malaria: a cluster randomised trial",
        "Villages (1,300 children) were randomly assigned to housing modification or no modification. Clinical "
        "malaria incidence was lower in the intervention group than in the control group (hazard ratio 0.62, 95% CI "
        "0.51 to 0.76; p < 0.0001).",
        "randomized_controlled_trial",
        2,
        1300,
    )
    counted = strength_of(HOUSING, [more, fewer])
    studies = appraise(counted, counted.reader_for(HOUSING), verdict_weight)
    assert sorted(study.movement or "" for study in studies) == ["higher", "lower"]
    inconsistency = inconsistency_domain(studies)
    assert inconsistency.levels == 2
    assert "not overlapping" in inconsistency.reason
    # Opposite readings whose intervals overlap (one touches no effect) stay one level.
    touching = evidence_view(
        "713",
        more.title,
        more.text.replace("1.11 to 2.55; p = 0.014", "0.98 to 2.55; p = 0.07"),
        "randomized_controlled_trial",
        2,
        800,
    )
    counted = strength_of(HOUSING, [touching, fewer])
    studies = appraise(counted, counted.reader_for(HOUSING), verdict_weight)
    assert inconsistency_domain(studies).levels <= 1


def study(pmid: str, design: str, participants: int) -> AppraisedStudy:
    return AppraisedStudy(
        id=f"pmid:{pmid}",
        title="",
        design=design,
        level=1 if design == "meta_analysis" else 2,
        participants=participants,
        randomised=True,
        direct=True,
        movement="no difference",
        weight=1.0,
        sentence="",
        probability=1.0,
        risk=risk_of_bias("double-blind", randomised=True),
    )


def test_a_review_beside_a_trial_it_may_have_pooled_is_not_counted_twice_for_the_information_size() -> None:
    # A meta-analysis of 250 people beside a 200-person trial it may have pooled: at least 250, not 450, which is
    # under GRADE's 400.
    body = [study("721", "meta_analysis", 250), study("722", "randomized_controlled_trial", 200)]
    imprecision = imprecision_domain(body, "no difference")
    assert imprecision.levels == 1
    assert "250 participants" in imprecision.reason
    # Primary studies alone are summed.
    trials = [study("723", "randomized_controlled_trial", 250), study("724", "randomized_controlled_trial", 200)]
    assert imprecision_domain(trials, "no difference").levels == 0
    assert "450 participants" in imprecision_domain(trials, "no difference").reason


def test_an_arms_setting_after_at_is_named_by_its_number() -> None:
    question = (
        "Does negative pressure wound therapy (NPWT) at 125 mmHg reduce the risk of wound infection compared with "
        "NPWT at 75 mmHg?"
    )
    settings = evidence_view(
        "731",
        "Negative pressure wound therapy (NPWT) for dog bite wounds: a randomised trial",
        "Wounds were treated with 125 and 75 mm Hg of continuous negative pressure. Wound infection rates were 4.1% "
        "and 3.9%.",
        "randomized_controlled_trial",
        2,
        251,
    )
    other_setting = evidence_view(
        "732",
        "Negative pressure wound therapy (NPWT) for dog bite wounds: a randomised trial",
        "Wounds were treated with 75 mm Hg of continuous negative pressure or left open. Wound infection rates were "
        "9.1% and 3.9%.",
        "randomized_controlled_trial",
        2,
        251,
    )
    reader = strength_of(question, [settings, other_setting]).reader_for(question)
    assert [view.id for view in direct_to_the_frame([settings, other_setting], reader)] == [settings.id]
