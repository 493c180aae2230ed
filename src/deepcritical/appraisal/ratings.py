"""Ceilings on the judge's scores, computed from the counted evidence: a score may not claim more than the
evidence behind it can support, whatever a model (or the code-built assessment) says.

A study in people supports at most ``LEVEL_CEILINGS[level]`` (OCEBM 2011: 10 for a systematic review of
trials, 8 for a randomised trial, 6 for a cohort or non-randomised study, 4 for case-control and
cross-sectional work, 3 for expert opinion); a small study supports less (at most 5 below 100
participants, 7 below 1,000, for levels 1-3 when the number is stated); a preprint, a guideline or a web
page at most 3. Animal and cell studies are mechanism evidence, never clinical evidence.

- **clinical** <= the highest ceiling among the counted studies in people (2 when there is none); and
  at most 6 when the studies at the best level present point different ways.
- **safety** (safety and contrary evidence) <= the highest ceiling among counted studies in people that
  report harms or null results or address safety (3 when there is none).
- **mechanism** <= 2 when no counted item at all; otherwise not capped (cell and animal work is what
  mechanism evidence is).
- **sufficient** becomes false when a capped score falls below the sufficiency threshold, and
  **confidence** is then at most the mean of the capped scores / 10.

Every cap is recorded on the assessment (``Assessment.caps``, in run.json) with its reason.

A statement that a kind of study is missing ("no systematic review", "no randomised controlled trial", "no
study in humans") is ``untrue`` when the evidence holds one: the renderer drops such limitations, the Judge
stage such gaps."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from deepcritical.appraisal.aspects import SUFFICIENT_SCORE, aspects_of
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.passages import informative
from deepcritical.appraisal.strength import DIRECTIONS, Strength, is_lab
from deepcritical.models import DESIGN_LABELS
from deepcritical.outputs import AspectScore, Assessment, ScoreCap
from deepcritical.vocabulary import HUMAN_DESIGNS, REVIEW_DESIGNS, TRIAL_DESIGNS

LEVEL_CEILINGS: dict[int, int] = {1: 10, 2: 8, 3: 6, 4: 4, 5: 3}
OUTSIDE_SCALE_CEILING = 3
# Participants, for studies at levels 1-3 whose number is stated: (below this many, ceiling).
SMALL_STUDY_CEILINGS: tuple[tuple[int, int], ...] = ((100, 5), (1000, 7))
DISAGREEING_CEILING = 6
NO_HUMAN_CLINICAL_CEILING = 2
NO_HUMAN_SAFETY_CEILING = 3
NOTHING_COUNTED_CEILING = 2


def study_ceiling(view: EvidenceView) -> int:
    """The most one study in people can support, from its level and its number of participants."""
    if view.level is None:
        return OUTSIDE_SCALE_CEILING
    ceiling = LEVEL_CEILINGS.get(view.level, OUTSIDE_SCALE_CEILING)
    if view.n is not None and view.level <= 3:
        for below, most in SMALL_STUDY_CEILINGS:
            if view.n < below:
                ceiling = min(ceiling, most)
                break
    return ceiling


def describe(view: EvidenceView) -> str:
    """'randomised controlled trial (OCEBM level 2, n = 40) pmid:1': the id is rendered as a reference number."""
    design = DESIGN_LABELS.get(view.design, view.design)  # type: ignore[call-overload]
    facts = [f"OCEBM level {view.level}" if view.level is not None else "outside the OCEBM scale"]
    if view.n is not None:
        facts.append(f"n = {view.n:,}")
    return f"{design} ({', '.join(facts)}) {view.id}"


def _best(views: Sequence[EvidenceView]) -> tuple[int, EvidenceView | None]:
    best = max(views, key=study_ceiling, default=None)
    return (study_ceiling(best), best) if best is not None else (0, None)


def _small(view: EvidenceView) -> str:
    """Why a study supports less than its level does: "at most 5: fewer than 100 participants", or ""."""
    if view.level is None or view.n is None:
        return ""
    below = next((below for below, most in SMALL_STUDY_CEILINGS if view.n < below), None)
    if below is None or study_ceiling(view) >= LEVEL_CEILINGS.get(view.level, OUTSIDE_SCALE_CEILING):
        return ""
    return f"at most {study_ceiling(view)}: fewer than {below:,} participants"


def ceiling_reason(views: Sequence[EvidenceView], what: str) -> str:
    """Why the studies ``views`` support no higher score than the best of them does, naming the study that sets
    the ceiling and, when it is not at the best OCEBM level present, why the better-graded studies support less
    (a level-2 trial of 80 people supports at most 5: a level-3 meta-analysis then sets the ceiling at 6)."""
    ceiling, best = _best(views)
    assert best is not None
    graded = [view for view in views if view.level is not None]
    top = min((view.level for view in graded if view.level is not None), default=None)
    if top is None or best.level == top:
        small = _small(best)
        return f"the strongest {what} is a {describe(best)}" + (f" ({small})" if small else "")
    better = [view for view in graded if view.level == top]
    smaller = "; ".join(f"{describe(view)}, {_small(view) or f'at most {study_ceiling(view)}'}" for view in better)
    return (
        f"no {what} supports more than {ceiling}: the best-graded (OCEBM level {top}) support less ({smaller}), "
        f"and the most any supports comes from a {describe(best)}"
    )


def ceilings(strength: Strength, scope: str = "counted") -> dict[str, tuple[int, str]]:
    """The highest score each aspect may have given the counted items, and why (an aspect not limited is
    absent). ``scope`` names the items in the reasons: "counted" (the report's) or "judged" (the judge's)."""
    if not strength.counted:
        reason = f"no item {scope} is on the question's topic"
        return {aspect: (NOTHING_COUNTED_CEILING, reason) for aspect in ("mechanism", "clinical", "safety")}
    found: dict[str, tuple[int, str]] = {}
    people = strength.in_humans()
    ceiling, best = _best(people)
    if best is None:
        found["clinical"] = (NO_HUMAN_CLINICAL_CEILING, f"no study in people is among the items {scope}")
    else:
        found["clinical"] = (ceiling, ceiling_reason(people, f"study in people among the items {scope}"))
        strongest = strength.strongest()
        ways = {way for view in strongest if (way := strength.directions.get(view.id)) is not None}
        if len(ways) > 1 and found["clinical"][0] > DISAGREEING_CEILING:
            cited = ", ".join(view.id for view in strongest)
            found["clinical"] = (
                DISAGREEING_CEILING,
                f"the strongest studies in people among the items {scope} (OCEBM level {strongest[0].level}: {cited}) "
                "point different ways "
                f"({' and '.join(way for way in DIRECTIONS if way in ways)})",
            )
    contrary = [
        view
        for view in people
        if strength.directions.get(view.id) in ("null", "unfavourable")
        or "safety" in aspects_of(informative(f"{view.title}. {view.text}"))
    ]
    ceiling, best = _best(contrary)
    if best is None:
        found["safety"] = (
            NO_HUMAN_SAFETY_CEILING,
            f"no study in people among the items {scope} reports harms or null results",
        )
    else:
        found["safety"] = (
            ceiling,
            ceiling_reason(contrary, f"study in people on harms or null results among the items {scope}"),
        )
    return found


def cap_assessment(assessment: Assessment, strength: Strength, scope: str = "counted") -> Assessment:
    """``assessment`` with each score no higher than the counted evidence supports; each cap recorded with
    its reason in ``caps`` (added to any recorded before)."""
    limits = ceilings(strength, scope)
    aspects = {"mechanism": assessment.mechanism, "clinical": assessment.clinical, "safety": assessment.safety}
    caps = list(assessment.caps)
    capped: dict[str, AspectScore] = {}
    for name, aspect in aspects.items():
        ceiling, reason = limits.get(name, (10, ""))
        if aspect.score > ceiling:
            caps.append(ScoreCap(aspect=name, given=aspect.score, capped_to=ceiling, reason=reason))
            aspect = aspect.model_copy(update={"score": ceiling})
        capped[name] = aspect
    update: dict[str, object] = {**capped, "caps": caps}
    if len(caps) > len(assessment.caps):
        low = [name for name, aspect in capped.items() if aspect.score < SUFFICIENT_SCORE]
        if assessment.sufficient and low:
            reason = f"{' and '.join(low)} capped below {SUFFICIENT_SCORE}"
            caps.append(ScoreCap(aspect="sufficient", given=1, capped_to=0, reason=reason))
            update["sufficient"] = False
        most = math.floor(sum(aspect.score for aspect in capped.values()) * 100 / 30) / 100  # never rounded up
        if assessment.confidence > most:
            reason = "at most the mean of the capped scores"
            caps.append(ScoreCap(aspect="confidence", given=assessment.confidence, capped_to=most, reason=reason))
            update["confidence"] = most
    return assessment.model_copy(update=update)


# A limitation that says a kind of study is missing, and the designs that make it untrue.
_QUALIFIERS = r"(?:(?:published|recent|large|adequately powered|placebo-controlled|double-blind|human|cochrane) )*"
ABSENCE_CLAIMS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(rf"\bno {_QUALIFIERS}(?:systematic reviews?|meta-analys[ie]s)\b", re.IGNORECASE), REVIEW_DESIGNS),
    (re.compile(rf"\bno {_QUALIFIERS}randomi[sz]ed (?:controlled )?trials?\b", re.IGNORECASE), TRIAL_DESIGNS),
    (
        re.compile(
            r"\bno (?:published )?(?:stud(?:y|ies)|evidence|data|trials?) in (?:humans|people|patients)\b"
            r"|\bno human (?:stud|evidence|data)|\b(?:in|from) (?:mice|animals|cells) only\b",
            re.IGNORECASE,
        ),
        HUMAN_DESIGNS,
    ),
)


def untrue(limitation: str, designs: set[str]) -> bool:
    """Whether a limitation claims that a kind of study is missing when the report counts or cites one."""
    return any(pattern.search(limitation) and designs & kinds for pattern, kinds in ABSENCE_CLAIMS)


# A count of a kind of study stated in model text, and the designs it counts ("three randomised trials").
_NUMBER_WORDS = {"one": 1, "a single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_NUMBER_WORDS |= {"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_COUNT = r"\b(?P<count>\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")\s+(?:(?:[\w-]+\s+){0,2}?)"
COUNT_CLAIMS: tuple[tuple[re.Pattern[str], frozenset[str] | None], ...] = (
    (re.compile(_COUNT + r"(?:randomi[sz]ed (?:controlled )?trials?|RCTs?)\b", re.IGNORECASE), TRIAL_DESIGNS),
    (re.compile(_COUNT + r"(?:systematic reviews?|meta-analys[ie]s)\b", re.IGNORECASE), REVIEW_DESIGNS),
    (re.compile(_COUNT + r"cohort stud(?:y|ies)\b", re.IGNORECASE), frozenset({"cohort"})),
    # None: animal or cell studies, whatever their design.
    (
        re.compile(_COUNT + r"(?:animal|mouse|rodent|cell|in vitro|preclinical)(?: or cell)? stud(?:y|ies)\b", re.I),
        None,
    ),
)


def _counted_kind(strength: Strength, designs: frozenset[str] | None) -> int:
    views = [strength.views[i] for i in strength.counted]
    if designs is None:
        return sum(is_lab(view) for view in views)
    return sum(view.design in designs and not is_lab(view) for view in views)


def overcounts(text: str, strength: Strength) -> bool:
    """Whether ``text`` states more studies of a kind than the report counts (it may state fewer: "two of
    the trials")."""
    for pattern, designs in COUNT_CLAIMS:
        for match in pattern.finditer(text):
            word = match.group("count").lower()
            stated = int(word) if word.isdigit() else _NUMBER_WORDS[word]
            if stated > _counted_kind(strength, designs):
                return True
    return False
