"""The run's verdict: the report model's when it gave one, else the one the counted studies' readings give
(``counted_verdict``), weighed by design, level, size and directness to the question's frame; a question the
readings cannot answer (an association, a prediction; a yes/no question fewer than two direct studies answer)
is read by the stance model (``appraisal.stance``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from deepcritical.appraisal.answer import answer_from_label, appraise, appraise_unread, asks_no_worse
from deepcritical.appraisal.candidates import open_verdict
from deepcritical.appraisal.directness import direct_to_the_frame, frame_gaps, naming_the_intervention
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.question_comparison import HEALTHY_VOLUNTEERS, asks_direction
from deepcritical.appraisal.review_verdict import graded_verdict, review_verdict
from deepcritical.appraisal.stance import (
    MAX_VERDICT_ITEMS,
    WEAK_LEAN,
    claim_label,
    code_verdict,
    coverage,
    is_yes_no,
)
from deepcritical.appraisal.strength import Strength, is_lab
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.models import DESIGN_LABELS
from deepcritical.outputs import Verdict, VerdictLabel
from deepcritical.reading.frame import frame_question
from deepcritical.text import quantity
from deepcritical.vocabulary import (
    NOT_STUDY_DESIGNS,
    UNWEIGHED_DESIGNS,
    VERDICT_LAB_WEIGHT,
    VERDICT_LEVEL_WEIGHTS,
    VERDICT_OUTSIDE_SCALE_WEIGHT,
    Direction,
)

# What a counted study weighs in the verdict, beyond its level (``vocabulary.VERDICT_LEVEL_WEIGHTS``): an
# item of ``UNWEIGHED_DESIGNS`` nothing; a study of healthy volunteers answers a question about patients only
# indirectly; a larger study weighs more (a tenth more per tenfold size).
INDIRECT_WEIGHT = 0.25
# The share of the weighed readings one side needs for a yes or a no; between the two, maybe.
CLEAR_SHARE = 0.65
# A favourable share this close to a threshold makes a borderline verdict (issue 40: 0.003 from it was not said).
BORDERLINE_MARGIN = 0.02
# The stance model's pooled share a yes or a no needs when the counted studies name the question's outcome
# but state no readable result on it (``unread_outcome_verdict``). Chosen on PubMedQA among 0.55 to 0.8 by
# nested cross-validation (0.7 in every outer fold, in round 4 and again in round 5; 0.7 to 0.8 a plateau):
# phases/16_result_reader.md.
UNREAD_CLEAR_SHARE = 0.7
# The share of a question's key words an item names for ``frameless_verdict`` to read it (a question that
# compares nothing and whose frame no item names). Chosen on PubMedQA by nested cross-validation by item among
# 0.34 (``stance.MIN_COVERAGE``) and 0.5: phases/23_cochrane_answer.md, PubMedQA round.
FRAMELESS_COVERAGE = 0.34
COUNTED_METHOD = (
    "code: each counted study's result read by the trained result reader for the question's comparison, "
    "weighed by design level, size and directness"
)


def verdict_weight(view: EvidenceView, direct: bool) -> float:
    """How much one counted study's reading weighs in the verdict (0: listed, not weighed)."""
    if view.design in UNWEIGHED_DESIGNS or view.retracted:
        return 0.0
    if is_lab(view):
        level_weight = VERDICT_LAB_WEIGHT
    elif view.level is not None:
        level_weight = VERDICT_LEVEL_WEIGHTS.get(view.level, VERDICT_LEVEL_WEIGHTS[5])
    else:
        level_weight = VERDICT_OUTSIDE_SCALE_WEIGHT
    weight = level_weight * (1.0 + math.log10(view.n) / 10 if view.n and view.n > 1 else 1.0)
    indirect = not direct or HEALTHY_VOLUNTEERS.search(view.text)
    return weight * (INDIRECT_WEIGHT if indirect else 1.0)


@dataclass(frozen=True)
class Weighed:
    """One counted study's reading as the verdict weighs it."""

    view: EvidenceView
    way: Direction
    weight: float
    direct: bool


def weighed_readings(question: str, counted: Strength) -> list[Weighed]:
    """The counted studies the verdict weighs: those whose result reads one way, with a weight above 0 (web
    pages and commentary are not studies: they are not counted, nor weighed). The brief counts these too."""
    reader = counted.reader_for(question)
    weighed = []
    for i in counted.stated:
        view, way = counted.views[i], counted.directions[i]
        direct = reader.read(view).direct
        weight = verdict_weight(view, direct)
        if way is not None and weight > 0:
            weighed.append(Weighed(view, way, weight, direct))
    return weighed


def counted_verdict(question: str, counted: Strength, pool: Sequence[EvidenceView] = ()) -> Verdict:
    """``read_verdict``'s verdict, with the answer a review would state (``verdict.answer``): the one the
    studies' readings give, else the one its label gives the question as worded."""
    verdict = read_verdict(question, counted, pool)
    # An association, a prediction or a test's accuracy compares no intervention with a comparator: no answer
    # a review would state follows from its yes or no ("Is obesity associated with worse outcomes?": yes is
    # neither higher nor lower of anything the question treats), so it states none rather than a wrong one.
    if verdict.answer is not None or verdict.label == "open":
        return verdict
    if verdict.label != "insufficient" and not counted.reader_for(question).asks_effect:
        return verdict
    return verdict.model_copy(update={"answer": answer_from_label(question, verdict.label)})


def read_verdict(question: str, counted: Strength, pool: Sequence[EvidenceView] = ()) -> Verdict:
    """The verdict the counted studies' readings give (``appraisal.review_verdict``): the outcome's movement
    read by the direct studies, weighed (``verdict_weight``), resting only on counted studies whose result names
    the question's outcome and which name its intervention; one such study is enough.

    When counted studies state results, but none for the question's outcome, the verdict is insufficient
    and says so. When no counted study's result could be read at all (a question that is no comparison:
    "Is X associated with Y?"), the items of ``pool`` are read whole by the stance model (``code_verdict``,
    which has its own test of what is on the question)."""
    frame = frame_question(question)
    if frame.open_intervention:
        return open_verdict(question, counted, frame)
    reader = counted.reader_for(question)
    # The stance model reads studies only: web pages and commentary carry no verdict (as in the counted
    # readings), and a retracted item supports nothing.
    pool = [view for view in pool if view.design not in NOT_STUDY_DESIGNS and not view.retracted]
    if not reader.asks_effect and (exposed := naming_the_intervention(pool, reader)):
        # An association, a prediction or a test's accuracy: its "yes" is any effect, and the stance model
        # reads those better (PubMedQA, phases/16_result_reader.md), from the items that name its exposure only
        # (obesity in heart failure is not answered by SGLT2 inhibitor trials: with none, the question is
        # insufficient data below, naming what nothing collected names). Its outcome is not required: such
        # questions' outcomes are read poorly ("is resting heart rate also relevant?"); requiring them cost 0.09
        # of PubMedQA accuracy on its first 150 development items, the exposure alone 0.02 (for 0.025 of
        # macro-F1): phases/23_cochrane_answer.md, round 3 (lead).
        stated = code_verdict(question, exposed, reader=reader)
        if stated.label != "insufficient":  # else said below, with what nothing collected names
            return reconciled(stated, question, counted)
    weighed = weighed_readings(question, counted)
    appraised = appraise(counted, reader, verdict_weight)
    if any(study.carries for study in appraised):
        # Directness before weight, and one direct study can answer: the counted studies' readings give the
        # answer a review would (``appraisal.answer``); the stance model never overrides them. A question that
        # asks which way its outcome moves ("increase", "reduce", "prevent") gets the movement; one that asks
        # whether a treatment helps ("improve outcomes", "be repurposed for") is answered by the benefit the
        # studies read, whatever outcome each reports (fewer deaths, better memory), with its GRADE certainty.
        if asks_direction(question):
            return review_verdict(question, appraised, reader.named_in(COUNTED_METHOD))
        return graded_verdict(benefit_verdict(question, counted, weighed, reader), appraised)
    views = [counted.views[i] for i in counted.counted] + list(pool)
    other_outcomes = any(reader.read(counted.views[i]).other_outcome for i in counted.counted)
    why = (
        "the counted studies report results for other outcomes than the question's"
        if weighed or other_outcomes
        else "no counted study states a result for the question's comparison"
        if counted.counted
        else f"none of the {quantity(counted.reviewed, 'item')} reviewed is a study on the question's topic"
    )
    gaps = frame_gaps(views, reader)
    if gaps and (fallback := frameless_verdict(question, pool, reader)) is not None:
        return reconciled(fallback, question, counted)
    # The studies that name the question's intervention with its outcome though no result for it was read: the
    # evidence exists (its certainty is stated with the insufficient answer); none when a part of the frame is
    # named by nothing.
    studies = [view for view in views if view.design not in NOT_STUDY_DESIGNS and not view.retracted]
    unread = appraise_unread(direct_to_the_frame(studies, reader), reader, verdict_weight) if not gaps else []
    if gaps or reader.comparison.written[1].strip() or not pool:
        # Directness before weight: a question no counted study addresses directly is insufficient data, saying
        # which part of its frame nothing collected names (no stance on unrelated studies: colchicine answered
        # from empagliflozin trials) or what the counted studies state instead. A question naming its comparator
        # asks which way the outcome moves, which the stance model (a yes for "an effect") cannot say.
        return review_verdict(question, appraised, reader.named_in(COUNTED_METHOD), gaps, why, unread)
    # Else the stance model reads the studies whole (a yes/no question without a comparator: PubMedQA's), only
    # when no counted study's result could be read at all (a study read for another outcome than the question's
    # states nothing on it: a muscle-injury study on mortality), and only those that name the question's
    # intervention with its outcome: a study of another treatment never carries the answer.
    direct = direct_to_the_frame(pool, reader)
    if not weighed and not other_outcomes:
        stated = code_verdict(question, direct, reader=reader)
        if stated.label == "insufficient" and (fallback := frameless_verdict(question, pool, reader)) is not None:
            stated = fallback
        return reconciled(stated, question, counted)
    pool = direct
    # A yes/no question whose counted study names its outcome, though no sentence of it could be read for it
    # (a trial of hyperfibrinolysis that reports drainage): the stance model reads the whole abstract, and
    # answers yes or no only when it leans clearly.
    if is_yes_no(question) and any(reader.names_outcome(counted.views[i]) for i in counted.counted):
        return unread_outcome_verdict(code_verdict(question, pool, reader=reader), question, counted)
    return review_verdict(question, appraised, reader.named_in(COUNTED_METHOD), gaps, why, unread)


def frameless_verdict(question: str, pool: Sequence[EvidenceView], reader: StudyReader) -> Verdict | None:
    """The stance model's verdict on a yes/no question that compares nothing (an association, a prediction, a
    test's use, a need: "Is it always necessary?") when no item names its frame's parts: such a frame is often
    unreadable ("always", "getting", "clinicians" read as the exposure), and the question's own key words then
    decide what is on it, as ``code_verdict`` reads them (items naming at least ``FRAMELESS_COVERAGE`` of them).
    None for a question that asks an intervention's effect or names a comparator: there directness to the frame
    holds, and a study of another treatment or outcome never carries the answer (vitamin D in sepsis is not
    answered by a vitamin D trial in depression)."""
    if reader.asks_effect or reader.comparison.written[1].strip() or not is_yes_no(question):
        return None
    close = [view for view in pool if coverage(question, f"{view.title} {view.text}") >= FRAMELESS_COVERAGE]
    stated = code_verdict(question, close, reader=reader) if close else None
    return None if stated is None or stated.label == "insufficient" else stated


def benefit_verdict(question: str, counted: Strength, readings: Sequence[Weighed], reader: StudyReader) -> Verdict:
    """The verdict on whether a treatment helps: the favourable share of the weighed readings (favourable
    against null and unfavourable, ``verdict_weight``), a yes from ``CLEAR_SHARE`` and a no up to its
    complement."""
    # A question asking whether the treatment is no worse (safe, feasible, as good as) is answered yes by a null
    # reading too: what counts against it is an unfavourable one only.
    no_worse = asks_no_worse(question)
    kept = ("favourable", "null") if no_worse else ("favourable",)
    weighed = [(w.view, w.way, w.weight, w.direct) for w in readings]
    favourable = sum(weight for _, way, weight, _ in weighed if way in kept)
    null = sum(weight for _, way, weight, _ in weighed if way == "null")
    total = sum(weight for _, _, weight, _ in weighed)
    share = favourable / total
    stance = "yes" if share >= CLEAR_SHARE else "no" if share <= 1 - CLEAR_SHARE else "maybe"
    agreeing = [
        (view, weight) for view, way, weight, _ in weighed if stance == "maybe" or (way in kept) == (stance == "yes")
    ]
    agreeing.sort(key=lambda pair: (-pair[1], pair[0].level or 6))
    chosen = [view for view, _ in agreeing[:MAX_VERDICT_ITEMS]]
    strongest = min(chosen, key=lambda view: view.level or 6)
    # A yes or a no names the weighed studies that read the other way (heaviest first); a maybe rests on both.
    against = sorted(
        (
            (view, weight)
            for view, way, weight, _ in weighed
            if stance != "maybe" and (way in kept) != (stance == "yes")
        ),
        key=lambda pair: (-pair[1], pair[0].level or 6),
    )
    label: VerdictLabel = stance if is_yes_no(question) else claim_label(question, stance)  # type: ignore[assignment]
    sure = max(share, 1 - share) if stance != "maybe" else 1 - abs(share - 0.5) * 2
    counts = {way: sum(1 for _, w, _, _ in weighed if w == way) for way in ("favourable", "null", "unfavourable")}
    # Cut, not rounded, so that what is shown never crosses a threshold the label did not: 0.6499 is "maybe"
    # and shows 0.649, not 0.65.
    shown = math.floor(share * 1000) / 1000
    # Within a small margin of a threshold, the label hangs on one study's reading: said, not left to the number.
    margin = threshold_margin(share)
    nulls_count = "; a null reading counts as favourable: the question asks whether it is no worse" if no_worse else ""
    borderline = margin < BORDERLINE_MARGIN
    close = (
        f" Borderline: the share is {margin:.3f} from a threshold, so one study read otherwise could change the answer."
        if borderline
        else ""
    )
    return Verdict(
        label=label,
        confidence=round(sure, 3),
        evidence_ids=[counted.record_of(view.id) for view in chosen],
        against_ids=[counted.record_of(view.id) for view, _ in against[:MAX_VERDICT_ITEMS]],
        strongest_design=DESIGN_LABELS.get(strongest.design, strongest.design),  # type: ignore[call-overload]
        strongest_level=strongest.level,
        by="code",
        method=reader.named_in(COUNTED_METHOD),
        probabilities={"yes": shown, "no": round(1 - shown, 3)},
        confidence_is_split=stance == "maybe",
        rationale=f"Weighed by design level, size and directness (web pages and commentary are not weighed): "
        f"{quantity(len(weighed), 'counted study', 'counted studies')}, {counts['favourable']} favourable, "
        f"{counts['null']} null, "
        f"{counts['unfavourable']} unfavourable; the favourable share of the weight is {shown:.3f} (yes from "
        f"{CLEAR_SHARE:.2f}, no up to {1 - CLEAR_SHARE:.2f}){nulls_count}.{close}",
        borderline=borderline,
        # A yes to "is it no worse?" resting mostly on null readings states no difference, not a better outcome.
        answer="no difference" if no_worse and stance == "yes" and null > favourable - null else None,
    )


def threshold_margin(share: float) -> float:
    """How far a favourable share lies from the nearer of the two thresholds (yes from ``CLEAR_SHARE``, no up to
    1 - ``CLEAR_SHARE``): under ``BORDERLINE_MARGIN``, the verdict is borderline."""
    return min(abs(share - CLEAR_SHARE), abs(share - (1 - CLEAR_SHARE)))


def unread_outcome_verdict(verdict: Verdict, question: str, counted: Strength) -> Verdict:
    """The stance model's verdict on a yes/no question whose counted studies name its outcome but state no
    result on it that the reader can read: weaker evidence than a read result, so a yes or a no needs a
    clear lean (``UNREAD_CLEAR_SHARE``, above the counted verdict's ``CLEAR_SHARE``); a weaker one is maybe. (PubMedQA,
    cross-validated: phases/16_result_reader.md, round 4.)"""
    stance = max(verdict.probabilities, key=verdict.probabilities.__getitem__) if verdict.probabilities else None
    if stance not in ("yes", "no") or verdict.confidence >= UNREAD_CLEAR_SHARE:
        return reconciled(verdict, question, counted)
    sure = round(1.0 - max(verdict.probabilities.get("yes", 0.0), verdict.probabilities.get("no", 0.0)), 3)
    rationale = (
        f"{verdict.rationale} Stated as maybe: the counted studies name the question's outcome but state no "
        f"result on it that could be read, and the pooled stance ({stance} {verdict.confidence:.2f}) is under "
        f"the {UNREAD_CLEAR_SHARE:.2f} a yes or a no needs; its confidence is 1 minus the stronger of yes and no."
    )
    return verdict.model_copy(update={"label": "maybe", "confidence": sure, "rationale": rationale})


def reconciled(verdict: Verdict, question: str, counted: Strength) -> Verdict:
    """The verdict as the report can state it beside its brief, which reads the same counted items.

    A weak yes or no (under ``WEAK_LEAN``) over counted results the brief calls mixed is stated as mixed
    (``maybe`` for a yes/no question). A verdict never rests on an item whose result the report reads the
    other way; when the studies at the report's best OCEBM level all do, they are named as reading against
    it (``against_ids``). Its strongest design is that of the items it does rest on. (Turning such a verdict
    into ``maybe`` as well cost 1.8 points of PubMedQA accuracy for 0.6 of macro-F1; see
    phases/11_measured_answers.md.)"""
    if verdict.label in ("insufficient", "maybe", "mixed") or not verdict.probabilities:
        return verdict
    if counted.lean == "is mixed" and verdict.confidence < WEAK_LEAN:
        label: VerdictLabel = "maybe" if is_yes_no(question) else "mixed"
        why = f"the counted results are mixed and the pooled stance is weak ({verdict.confidence:.2f})"
        # How far the pooled stance is from a clear yes or no: one minus the stronger of the two.
        sure = round(1.0 - max(verdict.probabilities.get("yes", 0.0), verdict.probabilities.get("no", 0.0)), 3)
        rationale = (
            f"{verdict.rationale} Stated as {label}: {why}; its confidence is 1 minus the stronger of yes and no."
        )
        return verdict.model_copy(update={"label": label, "confidence": sure, "rationale": rationale})
    stance = max(verdict.probabilities, key=verdict.probabilities.__getitem__)
    # A null result is contrary to a yes, except to a question asking whether the treatment is no worse.
    nulls = "no" if asks_no_worse(question) else "yes"
    contrary = {"yes": {"unfavourable"}, "no": {"favourable"}}.get(stance, set())
    if stance == nulls:
        contrary = contrary | {"null"}
    strongest = counted.strongest()
    against = [view.id for view in strongest if counted.directions.get(view.id) in contrary]
    if len(against) < len([view for view in strongest if counted.directions.get(view.id) is not None]):
        against = []  # named only when every best-level study that states a result reads the other way
    # Nor does it rest on any item whose result the report reads the other way.
    resting = [i for i in verdict.evidence_ids if i not in against and counted.directions.get(i) not in contrary]
    if not against and resting == verdict.evidence_ids:
        return verdict
    views = [counted.views[i] for i in resting if i in counted.views]
    best = min(views, key=lambda view: view.level or 6, default=None)
    return verdict.model_copy(
        update={
            "evidence_ids": resting,
            "against_ids": against[:MAX_VERDICT_ITEMS],
            "strongest_design": DESIGN_LABELS.get(best.design, best.design) if best else None,  # type: ignore[call-overload]
            "strongest_level": best.level if best else None,
        }
    )
