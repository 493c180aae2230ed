"""GRADE certainty of the evidence for an answer, in code: start high for randomised trials and low for
observational studies, then rate down one level (or two) per domain, each with its reason:

- risk of bias: the direct studies' own texts state a high-risk feature (open label, quasi-random allocation,
  heavy attrition: ``appraisal.risk_of_bias``) for most of their weight, or state no protecting feature at all;
- inconsistency: direct studies read opposite ways, or clear effects and no difference each carry a real share;
- indirectness: most of the weight is from people other than the question's;
- imprecision: few participants in all (under ``OPTIMAL_INFORMATION_SIZE``; under ``VERY_FEW`` two levels),
  or one study alone;
- publication bias: judged only with at least ``FUNNEL_STUDIES`` studies (never from abstracts here): said, not
  rated.

The thresholds were chosen by leave-one-review-out cross-validation on MedEvidence's development reviews
(phases/23_cochrane_answer.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from deepcritical.appraisal.answer import AppraisedStudy
from deepcritical.outputs import CERTAINTIES, Certainty, ReviewAnswer
from deepcritical.reading.pooling import StudyEstimate

# GRADE's rule of thumb for a continuous outcome's optimal information size, and a size so small that the
# interval must be wide whatever the effect.
OPTIMAL_INFORMATION_SIZE = 400
VERY_FEW = 100
# Opposite or mixed readings are inconsistent when the minority carries at least this share of the weight.
INCONSISTENT_SHARE = 0.25
# Where two or more studies state a ratio with its interval, inconsistency is judged by I² instead: substantial
# heterogeneity (the Cochrane Handbook's 50% to 90%) rates down.
SUBSTANTIAL_I2 = 0.5
# Whether an interval that includes no effect rates imprecision down (with few participants: two levels). Chosen
# by leave-one-review-out cross-validation (phases/23_cochrane_answer.md).
CROSSING_RATES_DOWN = False
# Whether studies that state none of the features (most abstracts) rate risk of bias down. Chosen by
# leave-one-review-out cross-validation (phases/23_cochrane_answer.md).
SILENT_RATES_DOWN = True
# GRADE's default thresholds of an appreciable benefit or harm on a ratio scale (a relative change of 25%).
APPRECIABLE = (0.75, 1.25)
FUNNEL_STUDIES = 10


@dataclass(frozen=True)
class Downgrade:
    domain: str
    levels: int
    reason: str


@dataclass(frozen=True)
class GradeRating:
    """The certainty, where it started and each domain's rating down (levels 0: judged, not rated down)."""

    certainty: Certainty
    start: Certainty
    domains: tuple[Downgrade, ...]

    @property
    def reasons(self) -> list[str]:
        """Each domain rated down, with its reason ("risk of bias (-1): ...")."""
        return [f"{d.domain} (-{d.levels}): {d.reason}" for d in self.domains if d.levels]


def _share(studies: Sequence[AppraisedStudy], chosen: Sequence[AppraisedStudy]) -> float:
    total = sum(study.weight for study in studies)
    return sum(study.weight for study in chosen) / total if total else 0.0


def _plural(count: int, word: str = "stud") -> str:
    return f"{count} {word}{'y' if count == 1 else 'ies'}" if word == "stud" else f"{count} {word}"


def risk_of_bias_domain(studies: Sequence[AppraisedStudy]) -> Downgrade:
    at_risk = [study for study in studies if study.risk.high]
    silent = [study for study in studies if not study.risk.quotes]
    if _share(studies, at_risk) > 0.5:
        named = "; ".join(f"{', '.join(study.risk.high)} ({study.id})" for study in at_risk[:3])
        return Downgrade("risk of bias", 1, f"{_plural(len(at_risk))} of {len(studies)} at high risk: {named}")
    if SILENT_RATES_DOWN and _share(studies, silent) > 0.5:
        return Downgrade(
            "risk of bias",
            1,
            f"{_plural(len(silent))} of {len(studies)} state no randomisation method, allocation concealment, blinding "
            "or attrition",
        )
    return Downgrade("risk of bias", 0, "most of the weight is from studies stating how bias was guarded against")


def i_squared(studies: Sequence[AppraisedStudy]) -> tuple[float, int] | None:
    """I² (a share, 0..1) of the ratios the studies state with their intervals, by inverse-variance weights on the
    log scale (Cochran's Q: I² = (Q - df) / Q), and how many; None under two estimates of one measure."""
    estimates = [study.estimate for study in studies if study.estimate is not None]
    if len(estimates) < 2 or len({e.measure for e in estimates}) > 1:
        return None
    logs, weights = [], []
    for e in estimates:
        error = StudyEstimate("", e.measure, e.value or 1.0, e.ci_low or 1.0, e.ci_high or 1.0).standard_error()
        if error is None:
            return None
        logs.append(math.log(e.value or 1.0))
        weights.append(1 / error**2)
    mean = sum(w * x for w, x in zip(weights, logs, strict=True)) / sum(weights)
    q = sum(w * (x - mean) ** 2 for w, x in zip(weights, logs, strict=True))
    return (max(0.0, (q - (len(logs) - 1)) / q) if q > 0 else 0.0), len(logs)


def inconsistency_domain(studies: Sequence[AppraisedStudy]) -> Downgrade:
    if (heterogeneity := i_squared(studies)) is not None:
        share, k = heterogeneity
        said = f"I² = {share:.0%} across {k} estimates"
        if share >= SUBSTANTIAL_I2:
            return Downgrade("inconsistency", 1, f"{said} (substantial heterogeneity)")
        return Downgrade("inconsistency", 0, said)
    shares = {
        movement: _share(studies, [s for s in studies if s.movement == movement])
        for movement in ("higher", "lower", "no difference")
    }
    if min(shares["higher"], shares["lower"]) >= INCONSISTENT_SHARE:
        return Downgrade("inconsistency", 1, "direct studies read opposite ways (higher and lower)")
    clear = max(shares["higher"], shares["lower"])
    if len(studies) > 1 and min(clear, shares["no difference"]) >= INCONSISTENT_SHARE:
        return Downgrade("inconsistency", 1, "some direct studies find an effect and others no difference")
    return Downgrade("inconsistency", 0, "the direct studies' readings agree" if len(studies) > 1 else "one study")


def indirectness_domain(studies: Sequence[AppraisedStudy]) -> Downgrade:
    other = [study for study in studies if study.indirect_people]
    if _share(studies, other) > 0.5:
        return Downgrade("indirectness", 1, f"most of the weight is from {other[0].indirect_people}")
    return Downgrade("indirectness", 0, "the studies match the question's intervention and outcome")


def imprecision_domain(studies: Sequence[AppraisedStudy], answer: ReviewAnswer) -> Downgrade:
    """Rated down for few participants (under the optimal information size, two levels under ``VERY_FEW``; not
    judged when no study states its size) and, with ``CROSSING_RATES_DOWN``, one level more for an interval that
    holds both no effect and an appreciable one (a stated ratio's interval crossing 1 and reaching past
    ``APPRECIABLE``; without a ratio, a finding of no difference or an uncertain effect from fewer participants
    than the optimal information size); at most two levels."""
    stated = [study.participants for study in studies if study.participants]
    participants = sum(stated)
    said = f"{participants:,} participants" if stated else "participants not stated"
    few = bool(stated) and participants < OPTIMAL_INFORMATION_SIZE
    levels, why = 0, []
    if stated and participants < VERY_FEW:
        levels, why = 2, [f"very few participants ({said} in {_plural(len(studies))})"]
    elif few:
        levels, why = 1, [f"few participants ({said}, under {OPTIMAL_INFORMATION_SIZE})"]
    estimates = [study.estimate for study in studies if study.estimate is not None]
    wide = [
        e
        for e in estimates
        if (low := e.ci_low or 1.0) < 1 < (high := e.ci_high or 1.0) and (low < APPRECIABLE[0] or high > APPRECIABLE[1])
    ]
    null = answer in ("no difference", "uncertain effect") and not estimates and (few or not stated)
    if CROSSING_RATES_DOWN and (wide or null):
        holds = f": {wide[0].quote}" if wide else " (a null finding from few participants)"
        levels, why = levels + 1, [*why, f"the interval holds both no effect and an appreciable one{holds}"]
    if not levels:
        return Downgrade("imprecision", 0, f"{said} in {_plural(len(studies))}")
    return Downgrade("imprecision", min(levels, 2), "; ".join(why))


def publication_bias_domain(studies: Sequence[AppraisedStudy]) -> Downgrade:
    if len(studies) < FUNNEL_STUDIES:
        return Downgrade("publication bias", 0, f"not judged: {_plural(len(studies))}, fewer than {FUNNEL_STUDIES}")
    return Downgrade("publication bias", 0, "not judged from abstracts")


def grade(studies: Sequence[AppraisedStudy], answer: ReviewAnswer) -> GradeRating | None:
    """The certainty of the evidence the direct studies give for ``answer``; None when no study carries it."""
    carrying = [study for study in studies if study.carries]
    if not carrying:
        return None
    start: Certainty = "high" if _share(carrying, [s for s in carrying if s.randomised]) > 0.5 else "low"
    domains = (
        risk_of_bias_domain(carrying),
        inconsistency_domain(carrying),
        indirectness_domain(carrying),
        imprecision_domain(carrying, answer),
        publication_bias_domain(carrying),
    )
    level = max(0, CERTAINTIES.index(start) - sum(d.levels for d in domains))
    return GradeRating(CERTAINTIES[level], start, domains)


# GRADE's plain-language statements (Santesso et al., J Clin Epidemiol 2020), by certainty and effect: the
# words a Cochrane summary of findings uses.
_STATED: dict[Certainty, dict[str, str]] = {
    "high": {"higher": "increases", "lower": "reduces", "no difference": "results in little or no difference to"},
    "moderate": {
        "higher": "probably increases",
        "lower": "probably reduces",
        "no difference": "probably makes little or no difference to",
    },
    "low": {"higher": "may increase", "lower": "may reduce", "no difference": "may make little or no difference to"},
}


def plain_language(answer: ReviewAnswer, certainty: Certainty | None, intervention: str, outcome: str) -> str:
    """The statement GRADE prescribes for ``answer`` at ``certainty``: "X probably reduces mortality", "X may
    make little or no difference to pain", "We are uncertain whether X changes delirium"."""
    if answer == "insufficient data":
        return f"No included study reports a result for {outcome} with {intervention} that could be read."
    # "Statins probably make", "vitamin D probably makes": the verb agrees with a plural intervention.
    plural = intervention.lower().endswith("s") and not intervention.lower().endswith(("ss", "us", "is"))
    if certainty is None or certainty == "very low" or answer == "uncertain effect":
        verb = _agreeing({"higher": "increases", "lower": "reduces"}.get(answer, "changes"), plural=plural)
        very = "the evidence is very uncertain" if certainty == "very low" else "the studies' results differ"
        return f"We are uncertain whether {intervention} {verb} {outcome} ({very})."
    statement = _agreeing(_STATED[certainty][answer], plural=plural)
    return f"{intervention[:1].upper()}{intervention[1:]} {statement} {outcome}."


def _agreeing(words: str, *, plural: bool) -> str:
    """ "probably reduces" as a plural subject says it: "probably reduce"."""
    if not plural:
        return words
    return " ".join(word[:-1] if word in _THIRD_PERSON else word for word in words.split())


_THIRD_PERSON = frozenset({"increases", "reduces", "results", "makes", "changes"})
