"""Strength of evidence, in code: which way each on-topic item points (favourable, null, unfavourable),
grouped by study design and weighed by level (OCEBM 2011). The extractive report's answer in brief (over the
items it reviewed) and the rendered report's strength-of-evidence table (over every item collected) both
read the evidence with these rules.

Retracted items are left out of everything; trial registrations are counted apart (they state plans, not
results)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from deepcritical.stages.framing import EvidenceView
from deepcritical.stages.reading import Direction, direction, key_terms, on_topic, stem

DIRECTIONS: tuple[Direction, ...] = ("favourable", "null", "unfavourable")

# Rows of the table, strongest first: (label, designs). Animal and cell studies form one row whatever
# design their text suggests.
DESIGN_GROUPS: tuple[tuple[str, frozenset[str]], ...] = (
    ("systematic reviews and meta-analyses", frozenset({"meta_analysis", "systematic_review"})),
    ("randomised controlled trials", frozenset({"randomized_controlled_trial"})),
    ("non-randomised trials", frozenset({"clinical_trial"})),
    ("observational studies", frozenset({"cohort", "case_control", "cross_sectional", "observational"})),
    ("case reports and series", frozenset({"case_report"})),
    ("animal and cell studies", frozenset({"preclinical"})),
    ("reviews, guidelines and commentary", frozenset({"narrative_review", "guideline", "editorial_or_letter"})),
    ("preprints", frozenset({"preprint"})),
    ("web pages and items of unknown design", frozenset({"web", "unknown"})),
)
# How much one item counts towards the direction of the answer, by OCEBM level; items outside the scale
# count a little (a preprint more than a web page, as it reports a study of its own).
LEVEL_WEIGHTS: dict[int, float] = {1: 4.0, 2: 3.0, 3: 2.0, 4: 1.0, 5: 0.5}
OUTSIDE_SCALE_WEIGHTS: dict[str, float] = {"preprint": 1.0, "guideline": 1.0}
DEFAULT_WEIGHT = 0.5


def group_of(item: EvidenceView) -> str:
    design = "preclinical" if item.population in ("animals", "in_vitro") else item.design
    return next((label for label, designs in DESIGN_GROUPS if design in designs), DESIGN_GROUPS[-1][0])


def weight_of(item: EvidenceView) -> float:
    if item.population in ("animals", "in_vitro"):
        return DEFAULT_WEIGHT
    if item.level is not None:
        return LEVEL_WEIGHTS.get(item.level, DEFAULT_WEIGHT)
    return OUTSIDE_SCALE_WEIGHTS.get(item.design, DEFAULT_WEIGHT)


@dataclass
class Strength:
    """On-topic items by design group and direction (ids, in the order given), and what was set apart."""

    cells: dict[str, dict[Direction | None, list[str]]] = field(default_factory=dict)
    levels: dict[str, set[int | None]] = field(default_factory=dict)
    weights: dict[Direction, float] = field(default_factory=lambda: dict.fromkeys(DIRECTIONS, 0.0))
    best_level: dict[Direction, int] = field(default_factory=dict)
    registrations: list[str] = field(default_factory=list)
    retracted: list[str] = field(default_factory=list)
    off_topic: list[str] = field(default_factory=list)

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


def strength_of(question: str, items: Sequence[EvidenceView]) -> Strength:
    """Every item placed: retracted, a registration, off topic, or in its design group under its direction."""
    stems = [stem(term) for term in key_terms(question)]
    strength = Strength()
    for item in items:
        if item.retracted:
            strength.retracted.append(item.id)
        elif item.design == "registered_trial":
            strength.registrations.append(item.id)
        elif not on_topic(item, stems):
            strength.off_topic.append(item.id)
        else:
            way = direction(item, stems)
            group = group_of(item)
            strength.cells.setdefault(group, {}).setdefault(way, []).append(item.id)
            preclinical = item.population in ("animals", "in_vitro")
            strength.levels.setdefault(group, set()).add(None if preclinical else item.level)
            if way is not None:
                strength.weights[way] += weight_of(item)
                if item.level is not None and item.population not in ("animals", "in_vitro"):
                    strength.best_level[way] = min(strength.best_level.get(way, 6), item.level)
    return strength
