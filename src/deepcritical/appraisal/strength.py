"""Strength of evidence, in code: which way each on-topic item points (favourable, null, unfavourable),
grouped by study design and weighed by level (OCEBM 2011).

``strength_of`` is the report's one counted set: the answer in brief, the strength-of-evidence table, the
ceilings on the judge's scores (``appraisal.ratings``), the limitations' checks and the retraction warnings all
read the same ``Strength`` built over the items the report was written from, so their counts cannot disagree.

Retracted items are left out of everything; trial registrations are counted apart (they state plans, not
results), and so are web pages and commentary: a news page about a trial reports that trial's result, not a
study of its own, so it is never a second reading of it (one study, one reading); items that do not name the
question's key entities are off topic, retracted or not."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.appraisal.topic import Topic, on_topic, studies_on_topic, topic_of
from deepcritical.vocabulary import (
    DIRECTION_DEFAULT_WEIGHT,
    DIRECTION_LEVEL_WEIGHTS,
    DIRECTION_OUTSIDE_SCALE_WEIGHTS,
    LAB_POPULATIONS,
    NOT_STUDY_DESIGNS,
    REVIEW_DESIGNS,
    TRIAL_DESIGNS,
    Direction,
    is_lab_study,
)
from deepcritical.vocabulary import DIRECTIONS as DIRECTIONS  # read from here by render.py

# Rows of the table, strongest first: (label, designs). Animal and cell studies form one row whatever
# design their text suggests.
DESIGN_GROUPS: tuple[tuple[str, frozenset[str]], ...] = (
    ("systematic reviews and meta-analyses", REVIEW_DESIGNS),
    ("randomised controlled trials", TRIAL_DESIGNS),
    ("non-randomised trials", frozenset({"clinical_trial"})),
    ("observational studies", frozenset({"cohort", "case_control", "cross_sectional", "observational"})),
    ("case reports and series", frozenset({"case_report"})),
    ("animal and cell studies", frozenset({"preclinical"})),
    ("reviews and guidelines", frozenset({"narrative_review", "guideline"})),
    ("preprints", frozenset({"preprint"})),
    ("items of unknown design", frozenset({"unknown"})),
)


def is_lab(item: EvidenceView) -> bool:
    """An animal or cell study, whatever design its text suggests."""
    return is_lab_study(item.population, item.design)


def group_of(item: EvidenceView) -> str:
    design = "preclinical" if is_lab(item) else item.design
    return next((label for label, designs in DESIGN_GROUPS if design in designs), DESIGN_GROUPS[-1][0])


def weight_of(item: EvidenceView) -> float:
    if item.population in LAB_POPULATIONS:
        return DIRECTION_DEFAULT_WEIGHT
    if item.level is not None:
        return DIRECTION_LEVEL_WEIGHTS.get(item.level, DIRECTION_DEFAULT_WEIGHT)
    return DIRECTION_OUTSIDE_SCALE_WEIGHTS.get(item.design, DIRECTION_DEFAULT_WEIGHT)


@dataclass
class Strength:
    """On-topic items by design group and direction (ids, in the order given), and what was set apart."""

    cells: dict[str, dict[Direction | None, list[str]]] = field(default_factory=dict)
    levels: dict[str, set[int | None]] = field(default_factory=dict)
    weights: dict[Direction, float] = field(default_factory=lambda: dict.fromkeys(DIRECTIONS, 0.0))
    best_level: dict[Direction, int] = field(default_factory=dict)
    registrations: list[str] = field(default_factory=list)
    not_studies: list[str] = field(default_factory=list)  # on topic, but web pages or commentary (not counted)
    retracted: list[str] = field(default_factory=list)  # on topic and retracted: listed under a warning
    concern: list[str] = field(default_factory=list)  # on topic, under an expression of concern (and counted)
    off_topic: list[str] = field(default_factory=list)
    # Other passages (or the abstract) of a study already placed: a study is counted once.
    same_study: list[str] = field(default_factory=list)
    directions: dict[str, Direction | None] = field(default_factory=dict)
    # Counted studies whose result is for another outcome than the question's: no reading on the question (not
    # weighed), but not "no clear result" either (a trial's significant result on its own primary outcome is a
    # clear one). Which way that result went for its own outcome is not said: the question's wanted direction
    # ("slow", "reduce") does not carry to another outcome (a higher MoCA is better, more B12 deficiency worse).
    on_another_outcome: set[str] = field(default_factory=set)
    # Counted studies whose people are not the question's, with why ("people without heart failure"): they
    # answer it only indirectly, so a forest plot leaves them out and says so.
    indirect: dict[str, str] = field(default_factory=dict)
    views: dict[str, EvidenceView] = field(default_factory=dict)  # every item placed, by id
    reviewed: int = 0
    # The reader the studies were read with (None only for a table built by hand).
    reader: StudyReader | None = field(default=None, repr=False, compare=False)

    def reader_for(self, question: str) -> StudyReader:
        """The reader this table's studies were read with (the linear one for a table built by hand)."""
        return self.reader if self.reader is not None and self.reader.question == question else StudyReader(question)

    @property
    def counted(self) -> list[str]:
        """The ids in the table, row by row (strongest design first), favourable to no clear result."""
        return [i for _, cells in self.rows for way in (*DIRECTIONS, None) for i in cells.get(way, [])]

    @property
    def stated(self) -> list[str]:
        """Counted items whose result reads favourable, null or unfavourable."""
        return [i for i in self.counted if self.directions.get(i) is not None]

    def in_humans(self) -> list[EvidenceView]:
        """Counted studies in people: graded on the OCEBM scale, or a preprint, not animal or cell work."""
        return [
            view
            for i in self.counted
            if not is_lab(view := self.views[i]) and (view.level is not None or view.design == "preprint")
        ]

    def has_design(self, designs: frozenset[str]) -> bool:
        """Whether a counted study in people has one of ``designs``."""
        return any(view.design in designs for view in self.in_humans())

    def strongest(self) -> list[EvidenceView]:
        """The counted studies in people at the best OCEBM level present (empty when none is graded)."""
        graded = [view for view in self.in_humans() if view.level is not None]
        if not graded:
            return []
        best = min(view.level for view in graded if view.level is not None)
        return [view for view in graded if view.level == best]

    @property
    def rows(self) -> list[tuple[str, dict[Direction | None, list[str]]]]:
        """Design groups that hold at least one item, strongest first."""
        return [(label, self.cells[label]) for label, _ in DESIGN_GROUPS if label in self.cells]

    @property
    def on_topic(self) -> int:
        return sum(len(ids) for cells in self.cells.values() for ids in cells.values())

    def level_text(self, group: str) -> str:
        """The OCEBM levels of a row's items: "2", "3-4", "1, 3", or "outside the scale"."""
        levels = sorted(level for level in self.levels.get(group, set()) if level is not None)
        outside = None in self.levels.get(group, set())
        if not levels:
            return "outside the scale"
        if len(levels) > 1 and levels == list(range(levels[0], levels[-1] + 1)):
            shown = f"{levels[0]}-{levels[-1]}"
        else:
            shown = ", ".join(str(level) for level in levels)
        return f"{shown}, some outside the scale" if outside else shown

    def record_of(self, item_id: str) -> str:
        """The id a counted study is named by: its abstract's, when it was counted by a passage of its full
        text (the reference lists the passage under the abstract's record)."""
        view = self.views[item_id]
        if view.section is None:
            return item_id
        same = (other.id for other in self.views.values() if other.document == view.document and other.section is None)
        return next(same, item_id)

    def ids(self, wanted: Direction) -> list[str]:
        return [i for _, cells in self.rows for i in cells.get(wanted, [])]

    @property
    def lean(self) -> str:
        """The direction the weighed evidence takes: favourable against null and unfavourable together."""
        favourable = self.weights["favourable"]
        against = self.weights["null"] + self.weights["unfavourable"]
        if not favourable and not against:
            return "does not settle the question"
        if against == 0 or favourable >= 2 * against:
            return "leans favourable"
        if favourable == 0 or against >= 2 * favourable:
            return "leans against"
        return "is mixed"


def strength_of(question: str, items: Sequence[EvidenceView], reader: StudyReader | None = None) -> Strength:
    """Every item placed: off topic, retracted, a registration, or in its design group under its direction.
    ``reader``: the run's reader of the question's studies (else the linear one); the counted set keeps it, so
    that the verdict and the report read each study as the table did."""
    topic = topic_of(question)
    reader = reader or StudyReader(question)
    strength = Strength(reviewed=len(items), reader=reader)
    topical = studies_on_topic(items, topic)
    placed = _one_per_study(items, topic, reader, topical)
    for item in items:
        strength.views[item.id] = item
        if item.id not in placed:
            strength.same_study.append(item.id)
        elif (item.document or item.id) not in topical:
            strength.off_topic.append(item.id)
        elif item.retracted:
            strength.retracted.append(item.id)
        elif item.design == "registered_trial":
            strength.registrations.append(item.id)
        elif item.design in NOT_STUDY_DESIGNS:
            strength.not_studies.append(item.id)
        else:
            if item.expression_of_concern:
                strength.concern.append(item.id)
            reading = reader.read(item)
            way = reading.direction
            strength.directions[item.id] = way
            if reading.other_outcome is not None:
                strength.on_another_outcome.add(item.id)
            if (why := reader.other_people(item)) is not None:
                strength.indirect[item.id] = why
            group = group_of(item)
            strength.cells.setdefault(group, {}).setdefault(way, []).append(item.id)
            preclinical = item.population in LAB_POPULATIONS
            strength.levels.setdefault(group, set()).add(None if preclinical else item.level)
            if way is not None:
                strength.weights[way] += weight_of(item)
                if item.level is not None and item.population not in LAB_POPULATIONS:
                    strength.best_level[way] = min(strength.best_level.get(way, 6), item.level)
    return strength


def _one_per_study(items: Sequence[EvidenceView], topic: Topic, reader: StudyReader, topical: set[str]) -> set[str]:
    """The item that stands for each study, among an abstract and its article's passages: never an
    introduction or methods passage when another is there; first one whose result is for the question's
    outcome and intervention, then one that states a result on the question, then one that names the whole topic
    (a full-text passage before the abstract: it is the more detailed, and is cited with its section); of those
    alike, the one whose sentence most surely states the result; else the first passage, else the abstract."""
    studies: dict[str, list[EvidenceView]] = {}
    for item in items:
        studies.setdefault(item.document or item.id, []).append(item)

    def rank(item: EvidenceView) -> tuple[bool, bool, bool, bool, bool, float]:
        # Read when its study is on the topic (``topical``: by all its collected parts together).
        study = (item.document or item.id) in topical
        reading = reader.read(item) if not item.states_no_result and study else None
        states = reading is not None and reading.direction is not None
        return (
            item.states_no_result,
            not (states and reading is not None and reading.direct),
            not states,
            not on_topic(item, topic),  # a passage that names the whole topic before one of it that names less
            item.section is None,  # a full-text passage before the abstract record: the more detailed
            # Of the passages that read alike, the one whose sentence most surely states the result, as the result
            # reader ranks a whole article's sentences: "The need for additional uterotonics was significantly
            # lower with carbetocin (p = 0.011)" before a subgroup's "did not differ among the subgroups".
            -(reading.reading.evidence_probability if reading is not None and states else 0.0),
        )

    return {min(group, key=rank).id for group in studies.values()}
