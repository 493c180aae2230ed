"""GRADE certainty of the evidence for an answer, in code. GRADE rates a body of evidence: the direct studies
the answer rests on, the randomised ones when they carry most of the weight (starting high), else all of them
(starting low: observational evidence). The same body is what the summary of findings counts (participants,
studies). Each domain rates it down one level (or two), with its reason:

- risk of bias: the body's own texts state a high-risk feature (open label, quasi-random allocation, heavy
  attrition: ``appraisal.risk_of_bias``) for most of its weight, or state no protecting feature at all;
- inconsistency: the studies read opposite ways, or clear effects and no difference each carry a real share;
  I² where two or more state one kind of ratio with its interval; two levels when two studies' intervals exclude no
  effect on opposite sides (they cannot overlap: GRADE guidelines 7's very serious inconsistency);
- indirectness: most of the weight is from people other than the question's;
- imprecision (Guyatt et al., GRADE guidelines 6, J Clin Epidemiol 2011;64:1283-93; Zeng et al., GRADE guidance
  34, J Clin Epidemiol 2022;150:216-24): the interval of the pooled estimate (or of the one study's) includes no
  effect when the answer is an effect, or an appreciable effect when the answer is no difference (two levels when
  it holds both appreciable benefit and harm); and the optimal information size is not met: under
  ``OPTIMAL_INFORMATION_SIZE`` participants, two levels under ``VERY_FEW``, a review beside trials it may have
  pooled never counted twice (``participants_in``); at most two levels in all. A single study is rated by the same
  rules (GRADE has no rule rating one study down for being one);
- publication bias: judged only with at least ``FUNNEL_STUDIES`` studies (never from abstracts here): said, not
  rated.

An outcome the on-frame studies name but state no readable result for (``grade_unread``) is still evidence that
exists: it is rated from the same start and domains, with imprecision very serious (no interval was read, so
neither appreciable benefit nor harm is excluded), where a question no study names gets no certainty at all.

The thresholds are GRADE's, not fitted; ``SILENT_RATES_DOWN`` was chosen by leave-one-review-out
cross-validation on MedEvidence's development reviews (phases/23_cochrane_answer.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from deepcritical.appraisal.answer import AppraisedStudy, pooled_ratio
from deepcritical.outputs import CERTAINTIES, Certainty, ReviewAnswer
from deepcritical.reading.pooling import StudyEstimate
from deepcritical.vocabulary import REVIEW_DESIGNS

# GRADE's rule of thumb for the optimal information size (400 participants, a continuous outcome's; the handbook's
# 300 events for a binary one cannot be checked from abstracts, which rarely state events), and a size so small that
# the interval must be wide whatever the effect.
OPTIMAL_INFORMATION_SIZE = 400
VERY_FEW = 100
# Opposite or mixed readings are inconsistent when the minority carries at least this share of the weight.
INCONSISTENT_SHARE = 0.25
# Where two or more studies state a ratio with its interval, inconsistency is judged by I² instead: substantial
# heterogeneity (the Cochrane Handbook's 50% to 90%) rates down.
SUBSTANTIAL_I2 = 0.5
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
    # The studies rated (the body of evidence), as the summary of findings counts them.
    body: tuple[str, ...] = ()

    @property
    def reasons(self) -> list[str]:
        """Each domain rated down, with its reason ("risk of bias (-1): ...")."""
        return [f"{d.domain} (-{d.levels}): {d.reason}" for d in self.domains if d.levels]


def _share(studies: Sequence[AppraisedStudy], chosen: Sequence[AppraisedStudy]) -> float:
    total = sum(study.weight for study in studies)
    return sum(study.weight for study in chosen) / total if total else 0.0


def _plural(count: int, word: str = "stud") -> str:
    return f"{count} {word}{'y' if count == 1 else 'ies'}" if word == "stud" else f"{count} {word}"


def _high_risk(study: AppraisedStudy) -> list[str]:
    """The domains at high risk that rate the study down: not an observational study's lack of randomisation,
    which its low start already counts."""
    return [domain for domain in study.risk.high if study.randomised or domain != "randomisation"]


def risk_of_bias_domain(studies: Sequence[AppraisedStudy]) -> Downgrade:
    at_risk = [study for study in studies if _high_risk(study)]
    silent = [study for study in studies if not study.risk.quotes]
    if _share(studies, at_risk) > 0.5:
        named = "; ".join(f"{', '.join(_high_risk(study))} ({study.id})" for study in at_risk[:3])
        return Downgrade("risk of bias", 1, f"{_plural(len(at_risk))} of {len(studies)} at high risk: {named}")
    if SILENT_RATES_DOWN and _share(studies, silent) > 0.5:
        return Downgrade(
            "risk of bias",
            1,
            f"{_plural(len(silent))} of {len(studies)} state{'s' if len(silent) == 1 else ''} no randomisation method, "
            "allocation concealment, blinding or attrition",
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


def _opposite_intervals(studies: Sequence[AppraisedStudy]) -> tuple[AppraisedStudy, AppraisedStudy] | None:
    """Two studies whose 95% intervals exclude no effect on opposite sides (one wholly above 1, one wholly below),
    each read the way its interval points: intervals that cannot overlap."""
    above = [s for s in studies if s.movement == "higher" and s.estimate and (s.estimate.ci_low or 0) > 1]
    below = [s for s in studies if s.movement == "lower" and s.estimate and 0 < (s.estimate.ci_high or 1) < 1]
    return (above[0], below[0]) if above and below else None


def inconsistency_domain(studies: Sequence[AppraisedStudy]) -> Downgrade:
    if (opposite := _opposite_intervals(studies)) is not None:
        # GRADE guidelines 7 (Guyatt et al., J Clin Epidemiol 2011;64:1294-302): inconsistency is very serious
        # (two levels) when the point estimates lie on opposite sides of no effect and the intervals do not overlap.
        quoted = "; ".join(f"{study.estimate.quote} ({study.id})" for study in opposite if study.estimate)
        return Downgrade("inconsistency", 2, f"intervals on opposite sides of no effect, not overlapping: {quoted}")
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


def imprecision_domain(
    studies: Sequence[AppraisedStudy], answer: ReviewAnswer, pooled: tuple[str, float, float, float] | None = None
) -> Downgrade:
    """GRADE's imprecision for ``studies`` (the body rated) and ``answer``: the interval (``pooled``, the body's
    pooled ratio, else the estimate of its one study; not judged for several studies whose estimates are not
    pooled) against no effect and GRADE's appreciable effect (``APPRECIABLE``), and the optimal information size
    (not judged when no study states its size); at most two levels. A limit stated as 1.00 is no effect: rounded,
    the interval cannot exclude it."""
    stated = [study.participants for study in studies if study.participants]
    participants = participants_in(studies)
    said = f"{participants:,} participants" if stated else "participants not stated"
    levels, why = 0, []
    if stated and participants < VERY_FEW:
        levels, why = 2, [f"very few participants ({said} in {_plural(len(studies))})"]
    elif stated and participants < OPTIMAL_INFORMATION_SIZE:
        size = f"under GRADE's rule of thumb for the optimal information size, {OPTIMAL_INFORMATION_SIZE}"
        levels, why = 1, [f"few participants ({said} in {_plural(len(studies))}, {size})"]
    interval = _interval(studies, pooled)
    if interval is not None:
        low, high, quoted = interval
        no_effect = low <= 1 <= high
        benefit_and_harm = low < APPRECIABLE[0] and high > APPRECIABLE[1]
        appreciable = low < APPRECIABLE[0] or high > APPRECIABLE[1]
        if answer in ("higher", "lower") and no_effect:
            wide = 2 if benefit_and_harm else 1
            holds = "no effect and both appreciable benefit and harm" if benefit_and_harm else "no effect"
            levels, why = levels + wide, [*why, f"the interval includes {holds} ({quoted})"]
        elif answer in ("no difference", "uncertain effect") and appreciable:
            wide = 2 if benefit_and_harm else 1
            holds = "both appreciable benefit and harm" if benefit_and_harm else "an appreciable effect"
            levels, why = levels + wide, [*why, f"the interval includes {holds} ({quoted})"]
    if not levels:
        return Downgrade("imprecision", 0, f"{said} in {_plural(len(studies))}")
    return Downgrade("imprecision", min(levels, 2), "; ".join(why))


def participants_in(studies: Sequence[AppraisedStudy]) -> int:
    """The participants the body holds for the optimal information size, a review beside primary studies it may
    have pooled never added to them (``people_counted``)."""
    return people_counted([(study.participants or 0, study.design in REVIEW_DESIGNS) for study in studies])[0]


def people_counted(sizes: Sequence[tuple[int, bool]]) -> tuple[int, bool]:
    """The people of studies given as (size, is a review), and whether that is a lower bound: the sum, unless a
    review is beside others (another review, or primary studies it may have pooled), when it is the larger of the
    largest review's and the primary studies' sum, "at least" (the summary of findings row counts the same)."""
    reviews = [size for size, review in sizes if review]
    primary = sum(size for size, review in sizes if not review)
    if reviews and (primary or len(reviews) > 1):
        return max(*reviews, primary), True
    return sum(size for size, _ in sizes), False


def _interval(
    studies: Sequence[AppraisedStudy], pooled: tuple[str, float, float, float] | None
) -> tuple[float, float, str] | None:
    """The 95% interval imprecision is judged from, with how it reads: the pooled ratio's, else the one study's."""
    if pooled is not None:
        measure, value, low, high = pooled
        return low, high, f"pooled {measure} {value:.2f}, {low:.2f} to {high:.2f}"
    estimate = studies[0].estimate if len(studies) == 1 else None
    if estimate is not None and estimate.ci_low is not None and estimate.ci_high is not None:
        return estimate.ci_low, estimate.ci_high, estimate.quote
    return None


def publication_bias_domain(studies: Sequence[AppraisedStudy]) -> Downgrade:
    if len(studies) < FUNNEL_STUDIES:
        return Downgrade("publication bias", 0, f"not judged: {_plural(len(studies))}, fewer than {FUNNEL_STUDIES}")
    return Downgrade("publication bias", 0, "not judged from abstracts")


def body_of_evidence(studies: Sequence[AppraisedStudy]) -> tuple[list[AppraisedStudy], Certainty]:
    """The body GRADE rates and where it starts: the direct randomised studies when they carry most of the
    weight (high), else every direct study (low: the body is mostly observational); studies in people only, when
    any carries the answer."""
    return _body([study for study in studies if study.carries])


def _body(studies: Sequence[AppraisedStudy]) -> tuple[list[AppraisedStudy], Certainty]:
    # GRADE rates evidence in people: animal and cell studies only when nothing else is there.
    carrying = [study for study in studies if study.design != "preclinical"] or list(studies)
    randomised = [study for study in carrying if study.randomised]
    if _share(carrying, randomised) > 0.5:
        return randomised, "high"
    return carrying, "low"


def grade(studies: Sequence[AppraisedStudy], answer: ReviewAnswer) -> GradeRating | None:
    """The certainty of the evidence the direct studies give for ``answer``; None when no study carries it."""
    body, start = body_of_evidence(studies)
    if not body:
        return None
    domains = (
        risk_of_bias_domain(body),
        inconsistency_domain(body),
        indirectness_domain(body),
        imprecision_domain(body, answer, pooled_ratio(body)),
        publication_bias_domain(body),
    )
    level = max(0, CERTAINTIES.index(start) - sum(d.levels for d in domains))
    return GradeRating(CERTAINTIES[level], start, domains, tuple(study.id for study in body))


def grade_unread(studies: Sequence[AppraisedStudy]) -> GradeRating | None:
    """The certainty of the evidence for an outcome that ``studies`` (they name the question's intervention with its
    outcome) measured, though no result for it could be read from them: the answer is ``insufficient data``, but
    evidence exists (GRADE rates what exists; only an outcome no study addresses has no rating). The body starts as
    its designs say and is rated in every domain that needs no result (risk of bias, indirectness); its imprecision
    is very serious, two levels: with no interval read, neither appreciable benefit nor harm is excluded (Zeng et
    al., GRADE guidance 34). None when no study is given."""
    body, start = _body(studies)
    if not body:
        return None
    domains = (
        risk_of_bias_domain(body),
        Downgrade("inconsistency", 0, "not judged: no result read"),
        indirectness_domain(body),
        Downgrade(
            "imprecision",
            2,
            f"no result for the outcome could be read from the {_plural(len(body))} naming it: no interval, so "
            "neither appreciable benefit nor harm is excluded",
        ),
        publication_bias_domain(body),
    )
    level = max(0, CERTAINTIES.index(start) - sum(d.levels for d in domains))
    return GradeRating(CERTAINTIES[level], start, domains, tuple(study.id for study in body))


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
