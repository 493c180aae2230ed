"""The question's intervention and outcome matched to a study's words as a review's trials write them (issue 38):
another name of the drug, a member of the class, a misspelling, a generic head; the sentence that names the most
of the outcome; and GRADE's inconsistency (I²) and imprecision judged from the stated intervals."""

from __future__ import annotations

import dataclasses

from deepcritical.appraisal.answer import AppraisedStudy, pooled_ratio, ratio_estimate
from deepcritical.appraisal.certainty import i_squared, imprecision_domain, inconsistency_domain
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.other_names import named_otherwise
from deepcritical.appraisal.risk_of_bias import risk_of_bias
from deepcritical.appraisal.strength import strength_of
from deepcritical.appraisal.topic import on_topic, topic_of
from deepcritical.appraisal.verdict import counted_verdict
from helpers.builders import evidence_view


def trial(pmid: str, title: str, text: str, n: int | None = 200) -> EvidenceView:
    return evidence_view(pmid, title, text, "randomized_controlled_trial", 2, n)


def test_an_intervention_is_named_by_its_other_name_a_class_member_or_a_misspelling() -> None:
    assert named_otherwise(["paracetamol"], "Ibuprofen versus acetaminophen and placebo") == {"paracetamol"}
    assert named_otherwise(["SSRIs"], "Sertraline for depression in COPD") == {"SSRIs"}
    assert named_otherwise(["grehlin"], "Ghrelin increases energy intake") == {"grehlin"}
    assert named_otherwise(["Ppost-mastectomy"], "the benefit of postmastectomy irradiation") == {"Ppost-mastectomy"}
    # Short words are too alike: inulin is no insulin; nor is a drug named by an unrelated one.
    assert named_otherwise(["insulin"], "inulin supplements") == set()
    assert named_otherwise(["paracetamol"], "ibuprofen and placebo") == set()


def test_a_review_question_is_on_topic_for_its_trials_wording() -> None:
    acetaminophen = trial(
        "11", "Ibuprofen versus acetaminophen and placebo in otitis media", "Pain relief was better at 48 hours."
    )
    assert on_topic(acetaminophen, topic_of("Does paracetamol increase pain relief compared with placebo?"))
    screening = trial("12", "House screening and anaemia in children", "Anaemia was less prevalent with screening.")
    assert on_topic(screening, topic_of("Does house modifications increase anaemia compared with no modifications?"))
    assert not on_topic(screening, topic_of("Does bed net use increase anaemia compared with no nets?"))


STAR = trial(
    "21",
    "Update of the Study of Tamoxifen and Raloxifene (STAR) P-2 trial",
    "Women were randomly assigned to tamoxifen or raloxifene for 5 years. The risk ratio (RR; raloxifene:tamoxifen) "
    "for invasive breast cancer was 1.24 (95% confidence interval [CI], 1.05-1.47). Toxicity RRs "
    "(raloxifene:tamoxifen) were 0.55 (95% CI, 0.36-0.83; P = 0.003) for endometrial cancer.",
    n=19747,
)


def test_the_sentence_naming_the_whole_outcome_answers_not_one_naming_a_word_of_it() -> None:
    question = "Does raloxifene increase the risk of developing invasive breast cancer compared with tamoxifen?"
    verdict = counted_verdict(question, strength_of(question, [STAR]), [STAR])
    assert verdict.answer == "higher"  # before: "cancer" in the endometrial sentence, read as no result at all


def _study(pmid: str, sentence: str, n: int | None = 500) -> AppraisedStudy:
    return AppraisedStudy(
        id=pmid,
        title="",
        design="randomized_controlled_trial",
        level=2,
        participants=n,
        randomised=True,
        direct=True,
        movement="lower",
        weight=1.0,
        sentence=sentence,
        probability=0.9,
        risk=risk_of_bias(sentence, randomised=True),
        estimate=ratio_estimate(sentence),
    )


def test_inconsistency_is_judged_by_i_squared_of_the_stated_ratios() -> None:
    apart = [_study("a", "The odds ratio was 0.50 (95% CI 0.40 to 0.62)."), _study("b", "OR 0.95 (95% CI 0.85-1.06)")]
    share, k = i_squared(apart) or (0.0, 0)
    assert k == 2
    assert share > 0.9
    assert inconsistency_domain(apart).levels == 1
    alike = [_study("a", "The odds ratio was 0.50 (95% CI 0.40 to 0.62)."), _study("b", "OR 0.52 (95% CI 0.41-0.66)")]
    assert inconsistency_domain(alike).levels == 0
    assert "I² = 0%" in inconsistency_domain(alike).reason


def test_imprecision_is_not_rated_for_a_size_no_study_states() -> None:
    unstated = [_study("a", "The risk ratio was 1.24 (95% CI 1.05 to 1.47).", n=None)]
    assert imprecision_domain(unstated, "higher").levels == 0
    assert imprecision_domain([_study("a", "RR 1.24 (95% CI 1.05 to 1.47)", n=60)], "higher").levels == 2


def test_direct_studies_stating_one_kind_of_ratio_are_pooled_as_a_review_pools_them() -> None:
    question = "Does apixaban reduce stroke compared with placebo?"
    studies = [
        trial(
            "31",
            "Apixaban in atrial fibrillation: a randomised trial",
            "RESULTS: Stroke occurred less often with apixaban than with placebo, although not significantly "
            "(hazard ratio 0.78, 95% CI 0.58 to 1.04).",
            n=3000,
        ),
        trial(
            "32",
            "Apixaban after ischaemic stroke: a randomised trial",
            "RESULTS: Apixaban reduced stroke compared with placebo (hazard ratio 0.66, 95% CI 0.54 to 0.81).",
            n=3000,
        ),
    ]
    verdict = counted_verdict(question, strength_of(question, studies), studies)
    assert verdict.answer == "lower"  # counted one by one: one no difference, one lower, an uncertain effect
    assert "pooled (inverse variance, fixed effect) HR 0.70" in verdict.rationale


def test_a_typeset_hyphen_keeps_an_intervention_whole() -> None:
    from deepcritical.reading.frame import frame_question

    typeset = frame_question("Does IRS plus insecticide\u2010treated nets increase anaemia compared with nets alone?")
    plain = frame_question("Does IRS plus insecticide-treated nets increase anaemia compared with nets alone?")
    assert typeset.intervention == plain.intervention
    assert typeset.outcomes == plain.outcomes


def test_a_hyphenated_word_holds_no_effect_verb() -> None:
    from deepcritical.appraisal.question_comparison import question_comparison

    comparison = question_comparison(
        "Does IRS plus insecticide-treated nets increase anaemia prevalence compared with nets alone?"
    )
    assert comparison.written[0].strip() == "IRS plus insecticide-treated nets"
    assert comparison.written[2] == "anaemia prevalence"


def test_a_review_is_never_pooled_with_the_trials_it_may_have_pooled() -> None:
    trials = [_study("a", "HR 0.74 (95% CI 0.65 to 0.85)."), _study("b", "HR 0.80 (95% CI 0.70 to 0.91).")]
    assert pooled_ratio(trials) is not None
    review = dataclasses.replace(_study("c", "HR 0.77 (95% CI 0.72 to 0.82)."), design="meta_analysis", level=1)
    assert pooled_ratio([review, *trials]) is None
