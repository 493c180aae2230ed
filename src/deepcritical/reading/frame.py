"""A question's frame: the population, the intervention, what it is compared with and the outcomes, read
in code from the question's shape (PICO). "Does vitamin D supplementation prevent fractures in older
adults?" is vitamin D supplementation / - / fractures / older adults.

The reading is generic: a small vocabulary of English function words, effect verbs ("reduce", "prevent")
and predicate words ("effective", "associated"), and no list of any corpus's drugs or diseases. An entity
is the run of words between such markers, kept whole and as written: "vitamin D", "SGLT2 inhibitors",
"type 2 diabetes", "long COVID" and "HbA1c" are never cut into words, so a query built from the frame never
loses the "D" of "vitamin D". A "what/which" question that names no intervention has an open one."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from deepcritical.reading.frame_tokens import (
    MEASURED_BY,
    TIME_POINT,
    WHICH_IS,
    Token,
    is_content,
    is_word,
    predicate_at,
    tokenize,
)
from deepcritical.reading.frame_words import (
    AIM_HEADS,
    AIM_QUALIFIERS,
    ASPECT_HEADS,
    AUX,
    BE,
    COMPARATIVES,
    DETERMINERS,
    FUNCTION,
    JOINERS,
    OPEN_HEADS,
    OUTCOME_HEADS,
    PEOPLE,
    PREDICATES,
    PREVENTIVE_AIMS,
    SUBJECT_PRONOUNS,
    TO_COMPARATOR,
    TO_OUTCOME,
    TO_POPULATION,
    VERBS,
    WH,
    words,
)
from deepcritical.text import one_line

Role = Literal["intervention", "comparator", "outcome", "population"]


class QuestionFrame(BaseModel):
    """Who (population), what (intervention), against what (comparator) and measured how (outcomes), each
    as the question writes it; ``open_intervention`` when the question asks which intervention ("What
    treatments reduce fatigue in long COVID?")."""

    model_config = ConfigDict(frozen=True)

    population: str | None = Field(default=None, description="Who or which condition, as written")
    intervention: str | None = Field(default=None, description="The intervention or exposure, as written")
    comparator: str | None = Field(default=None, description="What it is compared with, when the question says")
    outcomes: list[str] = Field(default_factory=list, description="What is measured, as written")
    open_intervention: bool = Field(default=False, description="The question asks which intervention")

    @property
    def entities(self) -> list[str]:
        """Every named thing, whole: intervention, comparator, outcomes, population."""
        named = [self.intervention, self.comparator, *self.outcomes, self.population]
        return list(dict.fromkeys(entity for entity in named if entity))

    @property
    def required(self) -> tuple[str, ...]:
        """The entities every search keeps: the intervention and the population; the first outcome stands in
        for a missing one ("Does vitamin D prevent depression?" is about depression), and the outcomes for an
        open intervention."""
        kept: list[str | None] = [self.intervention, self.population]
        if self.open_intervention or self.intervention is None or self.population is None:
            kept += self.outcomes[:1]
        return tuple(dict.fromkeys(entity for entity in kept if entity))

    @property
    def base(self) -> str:
        """The words code-built queries start from: the intervention, the outcomes and the population, each
        whole. Outcomes past the first are left out when the query grows long; a required entity never is."""
        outcomes = self.outcomes[:1] if len(terms_of(self.outcomes)) > MAX_OUTCOME_WORDS else self.outcomes
        parts = [self.intervention, *outcomes, self.population]
        return " ".join(dict.fromkeys(part for part in parts if part))

    def terms(self) -> list[str]:
        """The content words of every entity, as written and without repeats ("vitamin", "D", ...): what a
        text or a query must name to be about the question."""
        return terms_of(self.entities)

    def comparison_line(self) -> str | None:
        """ "SGLT2 inhibitors against the comparator each study used", or against the one the question names."""
        if self.open_intervention or not self.intervention:
            return None
        return f"{self.intervention} against {self.comparator or 'the comparator each study used'}"

    def summary(self) -> str:
        """One line for a report's head: "Population: older adults · Intervention: vitamin D ..."."""
        return self.headline

    @computed_field  # type: ignore[prop-decorator]
    @property
    def headline(self) -> str:
        """``summary()``, kept in the frame's JSON too, so the page shows the report's very words."""
        intervention = "any (the question asks which)" if self.open_intervention else self.intervention
        outcomes = [ANY_CLINICAL_OUTCOME if o.lower() in GENERIC_OUTCOMES else o for o in self.outcomes]
        parts = [
            ("Population", self.population),
            ("Intervention", intervention),
            ("Comparator", self.comparator),
            ("Outcomes", "; ".join(dict.fromkeys(outcomes)) or None),
        ]
        return " · ".join(f"{label}: {value}" for label, value in parts if value)


MAX_OUTCOME_WORDS = 4
# "Do SGLT2 inhibitors improve outcomes in heart failure?" names no outcome of its own: any clinical one answers; nor
# does a vague benefit noun ("does edaravone offer protection?") or the intervention's kind ("a feasible option").
GENERIC_OUTCOMES = frozenset({"clinical outcomes"}) | words(
    "outcome outcomes effect effects results prognosis benefit benefits protection improvement improvements advantage"
    " advantages efficacy value usefulness option options adjuvant alternative alternatives"
)
ANY_CLINICAL_OUTCOME = "any clinical outcome"


def terms_of(entities: Sequence[str]) -> list[str]:
    """The content words of ``entities``, as written, without repeats (case folded)."""
    seen: dict[str, str] = {}
    for entity in entities:
        tokens = tokenize(entity)
        for index, token in enumerate(tokens):
            if is_content(tokens, index) and token.low not in seen:
                seen[token.low] = token.text
    return list(seen.values())


@dataclass
class _Parts:
    phrases: dict[Role, list[str]]

    def add(self, role: Role, text: str) -> None:
        if text and text not in self.phrases.setdefault(role, []):
            self.phrases[role].append(text)

    def first(self, role: Role) -> str | None:
        found = self.phrases.get(role, [])
        return found[0] if found else None


# What joins two parts of one intervention given together.
_COMBINED = frozenset({"and", "plus"})


def _names_an_aim(tokens: Sequence[Token], run: Sequence[int]) -> bool:
    """ "prevention", "primary prevention", "prevention or treatment": an aim, which names no thing."""
    words = [tokens[i].low for i in run]
    return any(w in AIM_HEADS for w in words) and all(w in AIM_HEADS | AIM_QUALIFIERS for w in words)


def _keeps_going(tokens: Sequence[Token], index: int, run: Sequence[int], role: Role) -> bool:
    """Whether a function word inside an entity belongs to it: "at" before a number ("negative pressure wound
    therapy at 125 mmHg": the setting an arm is given at, by which two arms may differ alone, never an outcome of its
    own), "no" opening a comparator ("compared with no closure"), "to" in "moderate to severe anaemia", "time to ulcer
    healing" (the time until an event) and "MVA85A added to BCG" (one intervention, a combination)."""
    low = tokens[index].low
    if not run:
        return low == "no" and role == "comparator"
    before = tokens[run[-1]].low
    if low == "at":
        return index + 1 < len(tokens) and tokens[index + 1].low[:1].isdigit()
    return low == "to" and (before in _DEGREES or before == "time" or (role == "intervention" and before in _ADDED))


def _walk(text: str, tokens: Sequence[Token], role: Role, parts: _Parts, *, after_predicate: bool = False) -> None:
    """Cut ``tokens`` into entities, each filed under the role the marker before it opened: "in" opens the
    population, "versus" the comparator, "on" the outcome; "of" and "with" keep an entity going."""
    run: list[int] = []
    last: str | None = None
    between = False
    opener = ""  # the marker that opened the population being read ("for", "in")

    def aim() -> bool:
        return _names_an_aim(tokens, run)

    def close() -> None:
        while run and not is_content(tokens, run[-1]):
            run.pop()
        filed: Role = role
        if role == "population" and opener == "for" and run and not aim():  # "for primary prevention": an aim
            # "for mortality", "for heart failure hospitalisation": an outcome; "for stroke prevention": what is
            # prevented is the outcome (as in "for the prevention of stroke").
            if tokens[run[-1]].low in PREVENTIVE_AIMS and len(run) > 1:
                run.pop()
                filed = "outcome"
            elif tokens[run[-1]].low in OUTCOME_HEADS:
                filed = "outcome"
        if run and not (filed == "population" and aim()):  # "management" can be an outcome: "change management"
            parts.add(filed, text[tokens[run[0]].start : tokens[run[-1]].end])
        run.clear()

    for index, token in enumerate(tokens):
        low = token.low
        if is_content(tokens, index) and not (after_predicate and role == "outcome" and not run and low in VERBS):
            run.append(index)  # a verb that opens an outcome is not part of it: "in reducing pain"
        elif low in {"or", "and"} and run and aim():
            run.append(index)  # "prevention or treatment of depression": one aim, its object follows
        elif low == "of" and run and aim():
            # "for the prevention of fractures": what is prevented is the outcome, what is treated the
            # population (in a question's subject the aim only opens the intervention: "treatment of X with Y").
            if role == "population" and any(tokens[i].low in PREVENTIVE_AIMS for i in run):
                role = "outcome"
            run.clear()
        elif low in JOINERS | {"between"} and run:
            if low in {"of", "between"} and tokens[run[-1]].low in ASPECT_HEADS | OPEN_HEADS:
                run.clear()  # "the use of aspirin": the entity is what follows
                between = low == "between"
            else:
                run.append(index)
        elif _keeps_going(tokens, index, run, role):
            run.append(index)
        elif low in DETERMINERS and run and tokens[run[-1]].low in JOINERS:
            run.append(index)  # "function of the shoulder"
        elif low in {"a", "an"} and run and role == "intervention" and tokens[run[-1]].low in _COMBINED:
            run.append(index)  # "aspirin plus a statin", "ibandronate and a support programme": one intervention
        elif low == "and" and between and role == "intervention":
            close()  # "an association between coffee and liver cancer"
            role = "outcome"
        elif low == "than" and run and index + 1 < len(tokens) and tokens[index + 1].low[:1].isdigit():
            run.append(index)  # "masses larger than 7 cm", "older than 65 years": a threshold, not a comparator
        elif (low == "to" and last in COMPARATIVES) or (
            low in TO_COMPARATOR and not (low == "over" and last not in COMPARATIVES)
        ):
            close()
            role = "comparator"
        elif low in TO_POPULATION and role != "population":
            close()
            opener = low
            nxt = tokens[index + 1].low if index + 1 < len(tokens) else ""
            # "in reducing pain": a verb after the marker opens an outcome, not a population.
            role = "outcome" if nxt in VERBS and nxt.endswith("ing") else "population"
        elif low in TO_OUTCOME and role == "intervention":
            close()
            role = "outcome"
        elif low in _COMBINED and role == "intervention" and run:
            run.append(index)  # "aspirin and clopidogrel", "aspirin plus clopidogrel" are one intervention
        else:
            close()
            if low in TO_POPULATION:
                opener = low  # "for mortality in sepsis": "in" opens the population
        if is_word(token):
            last = low
    close()


def _strip_people(population: str | None) -> str | None:
    """ "patients with heart failure" -> "heart failure"; "patients" alone names no population."""
    if population is None:
        return None
    tokens = tokenize(population)
    words = [t.low for t in tokens]
    if words and all(word in PEOPLE for word in words):
        return None
    if len(tokens) > 2 and words[0] in PEOPLE and words[1] == "with":
        return population[tokens[2].start :]
    return population


def _clause(question: str) -> tuple[str, str | None]:
    """The question itself and the title before it: "Cigarettes and cinema: does parental ...?" asks the
    part after the colon; a part that only says "is it ..." refers back to the title."""
    for mark in (":", ". ", "--", " - "):
        head, found, tail = question.rpartition(mark)
        if found and head.strip() and (words := tokenize(tail)) and words[0].low in AUX | WH:
            return tail.strip(), head.strip()
    return question, None


_ADDED = frozenset({"added", "adjunct", "adjunctive", "addition"})
_DEGREES = frozenset({"mild", "moderate", "severe", "minor", "major", "low", "high", "minimal", "partial"})


# "Does X help (patients with) heart failure?", "... benefit people with ...": the condition is who is helped, read
# as "help in heart failure" (its population, no outcome of its own; the study reader asks such a question for a
# clinical outcome, as "improve outcomes in" does). Not "benefit from" (the subject is who benefits), "help
# predict", "a benefit of".
_HELPS = re.compile(
    r"\b(?:help|benefit)s?\s+(?:(?:the\s+)?(?:patients|people|adults|children|women|men|those)\s+(?:with|who have)\s+)?"
    r"(?=\w)(?!(?:outcomes?|in|from|of|to|with|predict\w*|the\s+risk)\b)",
    re.IGNORECASE,
)


# "Do older men benefit from curative therapy?": the subject is who benefits and the treatment follows "from"; read
# as "Does curative therapy benefit older men?" (its intervention, and its population as "help" reads one).
_BENEFIT_FROM = re.compile(
    r"(?:^|(?<=[:.?]\s))(?:do|does|did|can|could|will|would|may|might|should)\s+(?P<who>[^:?]+?)\s+"
    r"(?:benefit|profit)\s+from\s+(?P<what>[^:?]+)",
    re.IGNORECASE,
)


def plain_question(question: str) -> str:
    """The question as its frame reads it: without time points, "help heart failure" as "help in heart failure",
    "do older men benefit from X" as "does X benefit older men",
    an outcome's instrument ("measured by ...") as another name of it, a typeset hyphen ("insecticide‐treated",
    U+2010 and U+2011) as the plain one."""
    question = TIME_POINT.sub("", question.translate(_HYPHENS))
    question = MEASURED_BY.sub(", ", WHICH_IS.sub(" ", question))
    question = _BENEFIT_FROM.sub(lambda found: f"does {found['what'].strip()} benefit {found['who']}", question)
    return _HELPS.sub(lambda found: f"{found.group(0).split()[0]} in ", question)


_HYPHENS = str.maketrans({"\u2010": "-", "\u2011": "-"})


def frame_question(question: str) -> QuestionFrame:
    """The frame of ``question``, read from its shape (see the module's docstring)."""
    text, title = _clause(one_line(plain_question(question)))
    tokens = [t for t in tokenize(text) if t.text not in "?!"]
    start = 0
    asks_which = False
    while start < len(tokens) and tokens[start].low in AUX | WH | {"how", "there"}:
        asks_which = asks_which or tokens[start].low in WH
        start += 1
        if asks_which and start < len(tokens) and tokens[start].low in OPEN_HEADS:
            start += 1  # "What treatments ...": the head asks, it names nothing
            break
    parts = _Parts({})
    verb_first = asks_which and start < len(tokens) and tokens[start].low in VERBS  # "What reduces ...?"
    linking = bool(tokens) and tokens[0].low in BE
    found = (start, start + 1) if verb_first else predicate_at(tokens, start, linking=linking)
    if found is None:
        _walk(text, tokens[start:], "intervention", parts)
    else:
        predicate, rest = found
        subject = tokens[start:predicate]
        if subject and all(t.low in SUBJECT_PRONOUNS | FUNCTION for t in subject) and title:
            parts.add("intervention", title)
        else:
            _walk(text, subject, "intervention", parts)
        # Past the predicate's verbs and words: "prevent or treat", "be repurposed", "is associated".
        while rest < len(tokens) and (
            tokens[rest].low in VERBS | AUX | BE | PREDICATES | {"or", "and", "not", "significantly", "more", "less"}
        ):
            rest += 1
        last = tokens[rest - 1].low if rest > 0 else ""
        role: Role = "outcome"
        if rest < len(tokens) and tokens[rest].low in {"to", "with"} and last in PREDICATES | VERBS:
            if last in COMPARATIVES:
                role = "comparator"
            rest += 1
        elif (
            rest < len(tokens) and tokens[rest].low == "as" and last in PREDICATES and tokens[predicate - 1].low == "as"
        ):
            role = "comparator"  # "as effective as open surgery": an equal comparison names the comparator
            rest += 1
        _walk(text, tokens[rest:], role, parts, after_predicate=True)
    return _frame(parts, asks_which)


def _frame(parts: _Parts, asks_which: bool) -> QuestionFrame:
    intervention = parts.first("intervention")
    extra = parts.phrases.get("intervention", [])[1:]
    comparator = parts.first("comparator")
    if intervention and " or " in intervention and comparator is None:
        intervention, comparator = (piece.strip() for piece in intervention.split(" or ", 1))
    outcomes = [*extra, *parts.phrases.get("outcome", [])]
    populations = [p for p in map(_strip_people, parts.phrases.get("population", [])) if p]
    open_intervention = asks_which and (
        intervention is None or tokenize(intervention)[-1].low in OPEN_HEADS | ASPECT_HEADS
    )
    if open_intervention:
        intervention = None
    if intervention is None and not open_intervention:
        # No subject was read ("Is there an increase in X among Y?"): what the question names first.
        if outcomes:
            intervention, outcomes = outcomes[0], outcomes[1:]
        elif populations:
            intervention, populations = populations[0], populations[1:]
    population = populations[0] if populations else None
    outcomes = [o for o in dict.fromkeys(outcomes) if o not in (intervention, population, comparator)]
    if any(o.lower() not in GENERIC_OUTCOMES for o in outcomes):
        # "the effect on neuropathy symptoms": "effect" names no outcome beside one the question names.
        outcomes = [o for o in outcomes if o.lower() not in GENERIC_OUTCOMES]
    return QuestionFrame(
        population=population,
        intervention=intervention,
        comparator=comparator,
        outcomes=outcomes,
        open_intervention=open_intervention,
    )
