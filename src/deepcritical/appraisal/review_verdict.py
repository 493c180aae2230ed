"""The verdict stated as a review states it: the answer (``appraisal.answer``) with its GRADE certainty
(``appraisal.certainty``), the question's label derived from both, resting on the direct studies that read the
answer's way."""

from __future__ import annotations

from collections.abc import Sequence

from deepcritical.appraisal.answer import AppraisedStudy, asked_movement, label_of, review_answer
from deepcritical.appraisal.certainty import GradeRating, grade, grade_unread
from deepcritical.models import DESIGN_LABELS
from deepcritical.outputs import ReviewAnswer, Verdict

# At most this many studies named as the verdict's evidence, or as reading against it.
MAX_IDS = 5
# GRADE: "we are uncertain whether ..." is what very low certainty evidence says of any effect. Whether a very
# low certainty turns a clear reading into an uncertain effect: not, by leave-one-review-out cross-validation on
# MedEvidence's development reviews (phases/23_cochrane_answer.md); the summary of findings says it in words.
VERY_LOW_IS_UNCERTAIN = False


def review_verdict(
    question: str,
    studies: Sequence[AppraisedStudy],
    method: str,
    gaps: Sequence[str] = (),
    why_not: str = "",
    unread: Sequence[AppraisedStudy] = (),
) -> Verdict:
    """The verdict from the appraised counted studies: ``insufficient`` (answer ``insufficient data``) when none
    addresses the question directly (``gaps``: the parts of the frame nothing names; ``why_not``: what the
    counted studies state instead). An insufficient answer states a certainty when ``unread`` holds studies that
    name the question's intervention with its outcome though no result of theirs could be read (GRADE's
    ``grade_unread``: the evidence exists, very uncertain); with none, it states no certainty."""
    reading = review_answer(studies, gaps, why_not)
    rating = grade(studies, reading.answer)
    answer: ReviewAnswer = reading.answer
    why = reading.why
    if VERY_LOW_IS_UNCERTAIN and rating is not None and rating.certainty == "very low" and answer != "uncertain effect":
        why += f" Read {answer}, but at very low certainty: we are uncertain whether it changes the outcome."
        answer = "uncertain effect"
    sentence = reading.resting_on[0].sentence or "" if reading.resting_on else ""
    label = label_of(question, answer, sentence)
    if answer == "insufficient data" or rating is None:
        unread_rating = grade_unread(unread) if answer == "insufficient data" else None
        insufficient = Verdict(
            label="insufficient", confidence=0.0, by="code", method=method, rationale=why, answer="insufficient data"
        )
        if unread_rating is None:
            return insufficient
        return insufficient.model_copy(
            update={
                "certainty": unread_rating.certainty,
                "certainty_reasons": [*_started(unread_rating, unread), *unread_rating.reasons],
                "certainty_ids": list(unread_rating.body),
            }
        )
    resting = [study for study in reading.resting_on if answer == "uncertain effect" or study.movement == answer]
    resting = resting or list(reading.resting_on)
    against = sorted(
        (s for s in studies if s.carries and answer in ("higher", "lower", "no difference") and s.movement != answer),
        key=lambda s: -s.weight,
    )
    strongest = min(resting, key=lambda study: study.level or 6)
    asked = asked_movement(question, sentence)
    yes_share = reading.shares.get(asked, 0.0)
    leading, second = [*sorted(reading.shares.values(), reverse=True), 0.0, 0.0][:2]
    reasons = [*_started(rating, studies), *(rating.reasons or ["not rated down in any domain"])]
    return Verdict(
        label=label,
        # An uncertain effect's number is how evenly the readings split (1 when the two largest are even).
        confidence=round(leading if answer != "uncertain effect" else 1 - (leading - second), 3),
        evidence_ids=[study.id for study in resting[:MAX_IDS]],
        against_ids=[study.id for study in against[:MAX_IDS]],
        strongest_design=DESIGN_LABELS.get(strongest.design, strongest.design),  # type: ignore[call-overload]
        strongest_level=strongest.level,
        by="code",
        method=method,
        probabilities={"yes": round(yes_share, 3), "no": round(1 - yes_share, 3)},
        confidence_is_split=answer == "uncertain effect",
        rationale=f"The outcome is {answer} under the intervention against the comparator: {why}",
        answer=answer,
        certainty=rating.certainty,
        certainty_reasons=reasons,
        certainty_ids=list(rating.body),
    )


def graded_verdict(verdict: Verdict, studies: Sequence[AppraisedStudy]) -> Verdict:
    """A verdict on a treatment's benefit with the GRADE certainty of the direct studies behind it, and the answer
    its label gives (a yes: the movement asked for), or the one it states."""
    rating = grade(studies, verdict.answer or _LABEL_ANSWERS.get(verdict.label, "higher"))
    if rating is None:
        return verdict
    reasons = [*_started(rating, studies), *(rating.reasons or ["not rated down"])]
    return verdict.model_copy(
        update={"certainty": rating.certainty, "certainty_reasons": reasons, "certainty_ids": list(rating.body)}
    )


# The answer a benefit verdict's label stands for, as imprecision judges it (a yes is an effect either way).
_LABEL_ANSWERS: dict[str, ReviewAnswer] = {
    "no": "no difference",
    "refuted": "no difference",
    "maybe": "uncertain effect",
    "mixed": "uncertain effect",
}


def _started(rating: GradeRating, studies: Sequence[AppraisedStudy]) -> list[str]:
    """Where GRADE started, and how many studies the body it rated holds."""
    body = [study for study in studies if study.id in rating.body]
    kind = (
        "randomised trials"
        if rating.start == "high"
        else "mostly observational studies"
        if any(study.randomised for study in body)
        else "observational studies"
    )
    return [f"GRADE starts {rating.start} ({kind}, {len(body)} stud{'y' if len(body) == 1 else 'ies'} rated)"]
