"""The answer a systematic review gives, and the yes/no a question's wording asks of it.

A review states, for one outcome, how it moves under the intervention against the comparator: ``higher``,
``lower``, ``no difference``, ``uncertain effect`` or ``insufficient data``. That answer does not depend on how
the question is worded: "Does A increase X?" and "Does A reduce X?" have one answer and opposite labels. So the
answer is read first, from each counted study's reading of the outcome (``AppraisedStudy.movement``: the trained
result reader's increased, decreased or no difference for the question's comparison), and the label after,
from the answer and the movement the question asks for (``label_of``).

Directness before weight: only a study that names the question's intervention and states its result for the
question's outcome (``direct``) carries the answer; one such study is enough (its GRADE certainty, in
``appraisal.certainty``, says how far to trust it). Among direct studies the readings are weighed by design,
size and people (``stages.verdict.verdict_weight``). A question no counted study addresses directly is
``insufficient data``, and ``appraisal.directness.frame_gaps`` says which part of its frame nothing matched."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Literal

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.question_comparison import favourable_movement
from deepcritical.appraisal.risk_of_bias import RiskOfBias, is_randomised, risk_of_bias
from deepcritical.appraisal.stance import claim_label, is_yes_no
from deepcritical.appraisal.strength import Strength
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.outputs import ReviewAnswer, VerdictLabel
from deepcritical.reading.effects import RATIO_MEASURES, Effect
from deepcritical.reading.frame import frame_question
from deepcritical.reading.outcomes import outcomes_of
from deepcritical.reading.statistics import read_effects
from deepcritical.vocabulary import REVIEW_DESIGNS

Movement = Literal["higher", "lower", "no difference"]
_MOVEMENT: dict[str, Movement] = {"increased": "higher", "decreased": "lower", "no_difference": "no difference"}
_OTHER: dict[Movement, Movement] = {"higher": "lower", "lower": "higher", "no difference": "no difference"}
# Designs whose participants were randomised; a review, and a study a design was not read for, are randomised
# when their title says so, not when it names an observational design ("a meta-analysis of 18 cohort studies", "a
# nationwide cohort study (preprint)", "a target-trial emulation"), else by their text: a review is of trials unless
# it names observational designs and no randomisation; a study randomised when it says so and names no such design
# (a cohort's background on "randomised trials" does not make it one).
_RANDOMISED_DESIGNS = frozenset({"randomized_controlled_trial"})
_UNGRADED = frozenset({"unknown", "preprint", "clinical_trial", "registered_trial"})
_REVIEWS = frozenset({"systematic_review", "meta_analysis"})
_OBSERVATIONAL = re.compile(
    r"\b(?:cohort|case[- ]control|observational|cross[- ]sectional|emulat\w*|propensity)\b", re.IGNORECASE
)
# The share of the direct studies' weight one reading needs to be the answer; below it for every reading the
# effect is uncertain. Chosen by leave-one-review-out cross-validation on MedEvidence's development reviews
# among the values that keep the demo's answers (0.7 and 0.8: at 0.65 or under, the vitamin D and depression
# question, two null prevention trials against a treatment meta-analysis, reads "lower"; unconstrained, 0.5 is
# chosen): phases/23_cochrane_answer.md.
CLEAR_SHARE = 0.7


@dataclass(frozen=True)
class AppraisedStudy:
    """One counted study as the answer and its certainty read it: its design, size and people, whether it
    addresses the question directly, its reading for the question's outcome and the risk-of-bias features its
    text states."""

    id: str
    title: str
    design: str
    level: int | None
    participants: int | None
    randomised: bool
    direct: bool
    movement: Movement | None
    weight: float
    sentence: str | None
    probability: float
    risk: RiskOfBias
    indirect_people: str | None = None
    # The ratio (OR, RR, HR, IRR) with its 95% interval the sentence relied on states, if any: what inconsistency
    # (I²) and imprecision (an interval crossing no effect) are judged from.
    estimate: Effect | None = None

    @property
    def carries(self) -> bool:
        """The study's reading can carry the answer: it is direct, states a result and weighs something."""
        return self.direct and self.movement is not None and self.weight > 0


def appraise(
    counted: Strength, reader: StudyReader, weight_of: Callable[[EvidenceView, bool], float]
) -> list[AppraisedStudy]:
    """Every counted study, appraised once (``weight_of`` is the verdict's weighing of one study's reading)."""
    appraised = []
    # A question without an outcome of its own ("Does X help in heart failure?", "improve outcomes") is answered
    # by whichever clinical outcome each study reports: their movements add up only as the question asks them
    # (fewer deaths and more remissions both help), so each is the asked movement when favourable.
    by_benefit = not reader.specific_outcome
    lasts = any(_TIME_TO_EVENT.search(outcome) for outcome in frame_question(reader.question).outcomes[:1])
    for i in counted.counted:
        view = counted.views[i]
        reading = reader.read(view)
        text = f"{view.title}. {view.text}"
        randomised = view.design in _RANDOMISED_DESIGNS or _says_randomised(view)
        label = reading.reading.label if reading.direction is not None else None
        movement = _MOVEMENT[label] if label is not None else None
        if by_benefit and reading.direction is not None and movement != "no difference":
            asked = asked_movement(reader.question, reading.sentence or "")
            movement = asked if reading.direction == "favourable" else _OTHER[asked]
        if lasts and movement in ("higher", "lower") and _follows_hazard(movement, reading.sentence or ""):
            # A hazard ratio is the event's rate: more healing events (HR 1.38) is a shorter time to healing, fewer
            # deaths (HR 0.63) a longer survival. A reading that follows the ratio is turned for an outcome that is
            # the time until the event.
            movement = _OTHER[movement]
        appraised.append(
            AppraisedStudy(
                id=counted.record_of(i),
                title=view.title,
                design=view.design,
                level=view.level,
                participants=view.n,
                randomised=randomised,
                direct=reading.direct,
                movement=movement,
                weight=weight_of(view, reading.direct),
                sentence=reading.sentence,
                probability=reading.reading.probabilities.get(label, 0.0) if label is not None else 0.0,
                risk=risk_of_bias(text, randomised=randomised),
                indirect_people=reader.other_people(view),
                estimate=ratio_estimate(reading.sentence or "", partial(reader.on_outcome, item=view)),
            )
        )
    return appraised


def appraise_unread(
    views: Sequence[EvidenceView], reader: StudyReader, weight_of: Callable[[EvidenceView, bool], float]
) -> list[AppraisedStudy]:
    """Studies that name the question's intervention with its outcome (``direct_to_the_frame``) appraised for
    what GRADE can rate without their result (none could be read): design, size, people and the risk-of-bias
    features their text states. Each study once: its abstract before a passage of its full text."""
    appraised = []
    by_study: dict[str, EvidenceView] = {}
    for view in sorted(views, key=lambda view: view.section is not None):
        by_study.setdefault(view.document or view.id, view)
    for view in by_study.values():
        randomised = view.design in _RANDOMISED_DESIGNS or _says_randomised(view)
        appraised.append(
            AppraisedStudy(
                id=view.id,
                title=view.title,
                design=view.design,
                level=view.level,
                participants=view.n,
                randomised=randomised,
                direct=True,
                movement=None,
                weight=weight_of(view, True),
                sentence=None,
                probability=0.0,
                risk=risk_of_bias(f"{view.title}. {view.text}", randomised=randomised),
                indirect_people=reader.other_people(view),
            )
        )
    return appraised


def _says_randomised(view: EvidenceView) -> bool:
    """Whether a review or a study without a design read randomised its participants, by its title first."""
    if view.design not in _REVIEWS and view.design not in _UNGRADED:
        return False
    if is_randomised(view.title) or _OBSERVATIONAL.search(view.title):
        return is_randomised(view.title)
    if view.design in _REVIEWS:
        return is_randomised(view.text) or not _OBSERVATIONAL.search(view.text)
    return is_randomised(view.text) and not _OBSERVATIONAL.search(view.text)


def ratio_estimate(sentence: str, on_outcome: Callable[[str], bool] | None = None) -> Effect | None:
    """The ratio between the arms with a two-sided 95% interval that ``sentence`` states for the question's
    outcome (its value inside it, all positive): of several ("15% more falls (rate ratio 1.15, 1.02 to 1.30) and 26%
    more fractures (1.26, 1.00 to 1.59)"), the first whose words name it (``on_outcome``), else the first; None
    when it states none."""
    ratios = [
        effect
        for effect in read_effects(sentence)
        if effect.measure in RATIO_MEASURES
        and effect.compares_arms
        and effect.ci_low is not None
        and effect.ci_high is not None
        and effect.value is not None
        and 0 < effect.ci_low <= effect.value <= effect.ci_high
        and (effect.ci_level in (None, 95, 0.95))
        and effect.ci_sides != 1
    ]
    if len(ratios) > 1 and on_outcome is not None:
        named = outcomes_of(sentence, [effect.start for effect in ratios])
        for effect, outcome in zip(ratios, named, strict=True):
            if outcome and on_outcome(outcome):
                return effect
    return ratios[0] if ratios else None


@dataclass(frozen=True)
class ReviewReading:
    """The answer, with the weight of each direct reading behind it and why."""

    answer: ReviewAnswer
    shares: dict[str, float] = field(default_factory=dict)
    resting_on: tuple[AppraisedStudy, ...] = ()
    why: str = ""


def review_answer(studies: Sequence[AppraisedStudy], gaps: Sequence[str] = (), why_not: str = "") -> ReviewReading:
    """The outcome's movement the direct studies' weighed readings give: the reading with ``CLEAR_SHARE`` of
    the weight, else an uncertain effect; ``insufficient data`` when no study addresses the question directly
    (``gaps``: which part of the frame nothing matched)."""
    carrying = [study for study in studies if study.carries]
    if not carrying:
        why = "Insufficient: no counted study states a result for the question's outcome under its intervention"
        why += f"; nothing collected names the question's {' or its '.join(gaps)}." if gaps else "."
        return ReviewReading("insufficient data", why=f"{why} {why_not[:1].upper()}{why_not[1:]}." if why_not else why)
    if (pooled := pooled_ratio(carrying)) is not None:
        # Every direct study states one kind of ratio with its interval: the answer is the pooled estimate's, as a
        # review's meta-analysis states it (a pooled null over one significant trial, or the reverse).
        measure, value, low, high = pooled
        answer_pooled: ReviewAnswer = "lower" if high < 1 else "higher" if low > 1 else "no difference"
        why = (
            f"{len(carrying)} direct studies state a {measure} with its interval; pooled (inverse variance, fixed "
            f"effect) {measure} {value:.2f} ({low:.2f} to {high:.2f})."
        )
        resting = tuple(sorted(carrying, key=lambda study: -study.weight))
        total = sum(study.weight for study in carrying)
        shares = {
            movement: sum(study.weight for study in carrying if study.movement == movement) / total
            for movement in ("higher", "lower", "no difference")
        }
        return ReviewReading(answer_pooled, {k: round(v, 3) for k, v in shares.items()}, resting, why)
    total = sum(study.weight for study in carrying)
    shares = {
        movement: sum(study.weight for study in carrying if study.movement == movement) / total
        for movement in ("higher", "lower", "no difference")
    }
    leading = max(shares, key=shares.__getitem__)
    answer: ReviewAnswer = leading if shares[leading] >= CLEAR_SHARE else "uncertain effect"  # type: ignore[assignment]
    resting = tuple(
        sorted(
            (study for study in carrying if answer == "uncertain effect" or study.movement == answer),
            key=lambda study: -study.weight,
        )
    )
    counts = ", ".join(
        f"{sum(study.movement == movement for study in carrying)} {movement}"
        for movement in ("higher", "lower", "no difference")
    )
    why = (
        f"{len(carrying)} direct stud{'y' if len(carrying) == 1 else 'ies'} ({counts}); the share of the weight "
        f"reading {leading} is {shares[leading]:.2f} ({CLEAR_SHARE:.2f} needed for an answer)."
    )
    return ReviewReading(answer, {k: round(v, 3) for k, v in shares.items()}, resting, why)


def pooled_ratio(studies: Sequence[AppraisedStudy]) -> tuple[str, float, float, float] | None:
    """The inverse-variance (fixed-effect) pooled ratio with its 95% interval of two or more studies that each
    state one measure (OR, RR, HR or IRR) with its interval, each read the way its estimate points (a study read
    lower whose ratio is above 1 states it the other way round: not pooled); None otherwise. A review is never
    pooled: beside the trials it may have pooled it would count them twice (as a forest plot never draws it
    beside them)."""
    if len(studies) < 2 or len({study.estimate.measure if study.estimate else None for study in studies}) != 1:
        return None
    if any(study.design in REVIEW_DESIGNS for study in studies):
        return None
    logs, weights = [], []
    for study in studies:
        e = study.estimate
        if e is None or e.value is None or e.ci_low is None or e.ci_high is None or e.ci_high <= e.ci_low:
            return None
        if (study.movement == "lower" and e.value > 1) or (study.movement == "higher" and e.value < 1):
            return None
        logs.append(math.log(e.value))
        weights.append((2 * _Z95 / (math.log(e.ci_high) - math.log(e.ci_low))) ** 2)
    mean = sum(w * x for w, x in zip(weights, logs, strict=True)) / sum(weights)
    error = 1 / math.sqrt(sum(weights))
    measure = studies[0].estimate.measure if studies[0].estimate else ""
    return measure, math.exp(mean), math.exp(mean - _Z95 * error), math.exp(mean + _Z95 * error)


_Z95 = 1.959964


def asked_movement(question: str, sentence: str = "") -> Movement:
    """The movement of the outcome a "yes" asks for: the question's own verb ("increase": higher; "reduce",
    "prevent": lower), else the outcome's polarity ("improve survival": higher; "help heart failure": its
    events lower), as ``favourable_movement`` reads them."""
    return "higher" if favourable_movement(question, sentence) == "increased" else "lower"


# A question that asks whether a treatment is no worse than what it replaces: safe, feasible, non-inferior, as
# good as, an alternative, without harm, or whether a condition can be managed without an operation ("Is
# laparoscopic adrenalectomy safe for large masses?", "Can some fractures be treated nonoperatively?"). Its yes is
# an outcome that is not worse: no difference answers it as well as a better one.
_ASKS_NO_WORSE = re.compile(
    r"\b(?:safe|safely|safety|feasib\w*|non-?inferior\w*|equivalent|alternatives?|"
    r"as\s+(?:\w+\s+){1,2}as|without\s+(?:increas\w*|compromis\w*|worsen\w*|affect\w*|harm\w*|loss\b)|"
    r"non-?operative(?:ly)?|non-?surgical(?:ly)?|conservative(?:ly)?)\b",
    re.IGNORECASE,
)


def asks_no_worse(question: str) -> bool:
    """Whether the question asks if the treatment is no worse (``_ASKS_NO_WORSE``), not whether it is better."""
    return bool(_ASKS_NO_WORSE.search(question))


def label_of(question: str, answer: ReviewAnswer, sentence: str = "") -> VerdictLabel:
    """The yes/no/maybe/insufficient label the answer gives the question as worded (a claim's supported,
    refuted or mixed for a statement); no difference is a yes to a question asking whether it is no worse."""
    if answer == "insufficient data":
        return "insufficient"
    if answer == "uncertain effect":
        stance = "maybe"
    elif answer == "no difference":
        stance = "yes" if asks_no_worse(question) else "no"
    else:
        stance = "yes" if answer == asked_movement(question, sentence) else "no"
    return stance if is_yes_no(question) else claim_label(question, stance)  # type: ignore[return-value]


def answer_from_label(question: str, label: VerdictLabel, sentence: str = "") -> ReviewAnswer:
    """The answer a verdict's label gives when no study's reading carried it (the stance model's, a model's):
    a yes is the movement the question asks for, a no no difference, a maybe an uncertain effect."""
    if label in ("yes", "supported"):
        return asked_movement(question, sentence)
    if label in ("no", "refuted"):
        return "no difference"
    if label in ("maybe", "mixed"):
        return "uncertain effect"
    return "insufficient data"


# An outcome that is the time until an event, or the time without it: "time to ulcer healing", "overall survival".
_TIME_TO_EVENT = re.compile(r"\b(?:time\s+(?:to|until)|survival|duration\s+of)\b", re.IGNORECASE)


def _follows_hazard(movement: Movement, sentence: str) -> bool:
    """The movement is the one the sentence's hazard ratio gives the event's rate (higher above 1)."""
    estimate = ratio_estimate(sentence)
    if estimate is None or estimate.measure != "HR" or estimate.value is None or estimate.value == 1:
        return False
    return (movement == "higher") == (estimate.value > 1)
