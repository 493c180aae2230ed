"""The vocabulary of evidence: study designs (their labels, OCEBM levels and whether each is by definition
a study of people), populations and what a grade rests on. The classifier is ``sources/grading/``; the
scale is in phases/. Imports nothing from the project: every layer reads it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

StudyDesign = Literal[
    "meta_analysis",
    "systematic_review",
    "randomized_controlled_trial",
    "clinical_trial",
    "cohort",
    "case_control",
    "cross_sectional",
    "observational",
    "case_report",
    "guideline",
    "narrative_review",
    "preclinical",
    "editorial_or_letter",
    "registered_trial",
    "preprint",
    "web",
    "unknown",
]
Population = Literal["humans", "animals", "in_vitro", "unknown"]
GradeBasis = Literal["publication_type", "mesh", "text", "source"]


@dataclass(frozen=True)
class Design:
    """What the project knows of one study design: how it is named in a report, its level on the OCEBM
    2011 scale ("Does this intervention help?"; None: outside the scale, shown as such rather than ranked),
    and whether it is by definition a study of people."""

    label: str
    level: int | None
    in_humans: bool = False


# The one list of designs (the ``StudyDesign`` names, checked against it by a test); the grader, the
# report and the assessment read their labels, levels and populations from here.
DESIGNS: dict[StudyDesign, Design] = {
    "meta_analysis": Design("meta-analysis", 1, in_humans=True),
    "systematic_review": Design("systematic review", 1, in_humans=True),
    "randomized_controlled_trial": Design("randomised controlled trial", 2, in_humans=True),
    "clinical_trial": Design("non-randomised clinical trial", 3, in_humans=True),
    "cohort": Design("cohort study", 3, in_humans=True),
    "case_control": Design("case-control study", 4, in_humans=True),
    "cross_sectional": Design("cross-sectional study", 4, in_humans=True),
    "observational": Design("observational study", 3, in_humans=True),
    "case_report": Design("case report or series", 4, in_humans=True),
    "guideline": Design("guideline", None),
    "narrative_review": Design("narrative review", 5),
    "preclinical": Design("preclinical study", None),
    "editorial_or_letter": Design("editorial, comment or letter", 5),
    "registered_trial": Design("trial registration", None),
    "preprint": Design("preprint", None),
    "web": Design("web page", None),
    "unknown": Design("design unknown", None),
}
DESIGN_LABELS: dict[StudyDesign, str] = {name: design.label for name, design in DESIGNS.items()}
POPULATION_LABELS: dict[Population, str] = {
    "humans": "humans",
    "animals": "animals",
    "in_vitro": "cells or tissue in vitro",
    "unknown": "population unknown",
}

# --- Design sets, the lab-study test and the level weights (one copy; stages read them from here) ---

REVIEW_DESIGNS: frozenset[StudyDesign] = frozenset({"meta_analysis", "systematic_review"})
TRIAL_DESIGNS: frozenset[StudyDesign] = frozenset({"randomized_controlled_trial"})
LAB_POPULATIONS: frozenset[Population] = frozenset({"animals", "in_vitro"})
# The designs that are by definition studies of people.
HUMAN_DESIGNS: frozenset[StudyDesign] = frozenset(name for name, design in DESIGNS.items() if design.in_humans)
# Which design wins when a record carries several types ("Meta-Analysis" and "Systematic Review"): preprint
# first (whatever its design, it has not been peer reviewed), then the designs in the scale's order; a
# registration, a web page and an unknown design are never read from a record's types.
DESIGN_PRECEDENCE: tuple[StudyDesign, ...] = (
    "preprint",
    *(name for name in DESIGNS if name not in ("preprint", "registered_trial", "web", "unknown")),
)


# Web pages (news, encyclopaedias, shops) and commentary report no study of their own: listed apart, never counted.
NOT_STUDY_DESIGNS: frozenset[StudyDesign] = frozenset({"web", "editorial_or_letter"})
# Counted items whose reading weighs nothing in a verdict and names no candidate of an open question: those
# above, and narrative reviews and items of unknown design (no study of their own known).
UNWEIGHED_DESIGNS: frozenset[StudyDesign] = NOT_STUDY_DESIGNS | {"unknown", "narrative_review"}


def is_lab_study(population: str, design: str) -> bool:
    """An animal or cell study, whatever design its text suggests."""
    return population in LAB_POPULATIONS or design == "preclinical"


# Four weightings by OCEBM level, side by side: each names what it weighs.
# How much one item counts towards the direction of the answer (the strength table's tally); items outside the
# scale count a little (a preprint more than a web page, as it reports a study of its own).
DIRECTION_LEVEL_WEIGHTS: dict[int, float] = {1: 4.0, 2: 3.0, 3: 2.0, 4: 1.0, 5: 0.5}
DIRECTION_OUTSIDE_SCALE_WEIGHTS: dict[str, float] = {"preprint": 1.0, "guideline": 1.0}
DIRECTION_DEFAULT_WEIGHT = 0.5
# What one item in humans adds to the clinical-evidence score of the assessment; an item outside the scale adds
# less (a preprint reports a study of its own, a web page only reports one); an item of unknown design counts
# as one, as every item did before items were graded.
CLINICAL_SCORE_LEVEL_WEIGHTS: dict[int, float] = {1: 3.0, 2: 2.0, 3: 1.0, 4: 0.6, 5: 0.3}
CLINICAL_SCORE_OUTSIDE_SCALE_WEIGHTS: dict[str, float] = {"preprint": 0.5, "guideline": 0.5, "unknown": 1.0}
CLINICAL_SCORE_UNGRADED_WEIGHT = 0.3
# How much one item's stance counts in the stance model's pooled answer; outside the scale or ungraded, as a
# level-4 item.
STANCE_LEVEL_WEIGHTS: dict[int, float] = {1: 2.0, 2: 1.6, 3: 1.2, 4: 1.0, 5: 0.6}
STANCE_UNGRADED_WEIGHT = 1.0
# How much one counted study's reading weighs in the verdict, before its size and directness: one level up the
# scale doubles it (the direction weights are flatter: they say how the items lean, not what they establish).
VERDICT_LEVEL_WEIGHTS: dict[int, float] = {1: 8.0, 2: 4.0, 3: 1.0, 4: 0.5, 5: 0.25}
VERDICT_OUTSIDE_SCALE_WEIGHT = 0.5  # a preprint or a guideline
VERDICT_LAB_WEIGHT = 0.25

# --- Direction: which way a study's result points, for the question asked ---

Direction = Literal["favourable", "null", "unfavourable"]
DIRECTIONS: tuple[Direction, ...] = ("favourable", "null", "unfavourable")
# How a report words each direction.
DIRECTION_WORDS: dict[Direction, str] = {
    "favourable": "favourable",
    "null": "null (no effect)",
    "unfavourable": "unfavourable",
}
