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

from deepcritical.sources.query import STOP_WORDS
from deepcritical.text import one_line

Role = Literal["intervention", "comparator", "outcome", "population"]


def _words(text: str) -> frozenset[str]:
    """A vocabulary written as words separated by white space."""
    return frozenset(text.split())


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
# "Do SGLT2 inhibitors improve outcomes in heart failure?" names no outcome of its own: any clinical one answers.
GENERIC_OUTCOMES = frozenset(
    {"outcome", "outcomes", "clinical outcomes", "effects", "benefits", "results", "prognosis"}
)
ANY_CLINICAL_OUTCOME = "any clinical outcome"

# Function words: never part of an entity's edges, and (except "of", "with" and "'s") the end of one.
_FUNCTION = _words(
    """
    a an the any some this these that those their its his her our your my such each every all both
    either neither no not nor and or but if then than as at by from into onto to up down out over under
    about above below between through during after before without within upon via per whether who whom
    whose which what when where why how there here it they them he she we you i me us one ones more most
    less least very much many also still really actually significantly truly ever just only even further
    again already be been being is are was were am do does did done doing can could should would will
    shall may might must has have had having get gets got of with in on for among amongst against versus
    vs compared true false evidence likely
    """
) | {word for word in STOP_WORDS if word.isalpha() or "'" in word}  # what a PubMed query drops ("know", "it's")
_AUX = _words(
    """
    do does did is are was were can could should would will may might must has have had shall
    """
)
_BE = frozenset({"be", "been", "being", "is", "are", "was", "were", "am"})
_WH = frozenset({"what", "which", "who", "whom"})
_SUBJECT_PRONOUNS = frozenset({"it", "they", "this", "these", "them"})
# Heads that ask for an intervention rather than name one: "What treatments ...", "the best therapy for".
_OPEN_HEADS = _words(
    """
    treatment treatments therapy therapies drug drugs medication medications medicine medicines
    intervention interventions supplement supplements option options agent agents approach approaches
    strategy strategies factor factors management
    """
)
# Heads that say how an intervention is looked at, not what it is: "the use of aspirin" is about aspirin.
_ASPECT_HEADS = _words(
    """
    use effect effects impact role influence efficacy effectiveness safety benefit benefits
    administration addition value usefulness contribution association associations relationship link
    """
)
# People in general: "patients with heart failure" is about heart failure.
_PEOPLE = frozenset(
    ["patients", "people", "persons", "individuals", "subjects", "participants", "those", "cases", "adults"]
)
# Verbs that link an intervention to an outcome; their -s, -es, -d, -ed and -ing forms are built below.
_VERB_ROOTS = _words(
    """
    reduce lower decrease improve increase prevent treat cure slow delay affect influence alter change cause
    protect benefit help raise worsen shorten prolong extend predict modify attenuate enhance promote induce
    inhibit restore relieve alleviate mitigate contribute lead work confer impact control boost suppress stop
    reverse harm trigger lessen lengthen impair impede accelerate regulate mediate correlate limit block halt
    ameliorate normalize normalise counteract aggravate exacerbate diminish elevate damage lack show play offer
    provide decline result relate associate link predispose protect reduce require need remain stay exist occur
    """
)


def _forms(root: str) -> set[str]:
    stem = root[:-1] if root.endswith("e") else root
    return {root, root + "s", root + "es", root + "d", stem + "ed", stem + "ing", root + "ing"}


_VERBS = frozenset(form for root in _VERB_ROOTS for form in _forms(root)) | {"led", "shown", "worked"}
# Words after "is/are/be" that say what the question asks of its subject.
_PREDICATES = _words(
    """
    effective efficacious safe beneficial superior inferior better worse useful helpful harmful
    protective appropriate feasible predictive able sufficient necessary noninferior non-inferior
    equivalent comparable similar preferable associated linked related correlated repurposed used given
    prescribed recommended indicated needed required considered involved implicated responsible critical
    important essential
    """
)
_COMPARATIVES = frozenset({"superior", "inferior", "better", "worse", "noninferior", "non-inferior", "equivalent"})
_COMPARATIVES |= {"comparable", "similar", "preferable", "preferred"}
# Role markers: the word that opens a part of the question, by the part it opens.
_TO_POPULATION = frozenset({"in", "among", "amongst", "within", "for", "during", "after"})
_TO_COMPARATOR = frozenset({"versus", "vs", "than", "compared", "over"})
_TO_OUTCOME = frozenset({"on"})
# Words that keep an entity going across them: "quality of life", "patients with heart failure".
_JOINERS = frozenset({"of", "with"})
_DETERMINERS = frozenset({"the", "a", "an", "their", "its", "his", "her", "our", "any"})

_TOKEN = re.compile(r"\w+(?:['’.\-+/]\w+)*|[,;:?!()\[\]]")


@dataclass(frozen=True)
class _Token:
    text: str
    start: int
    end: int

    @property
    def low(self) -> str:
        return self.text.lower()


def _tokens(text: str) -> list[_Token]:
    return [_Token(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _is_word(token: _Token) -> bool:
    return token.text[0].isalnum() or token.text[0] == "_"


def _content(tokens: Sequence[_Token], index: int) -> bool:
    """Whether the token at ``index`` can be part of an entity. A capital letter or a Roman numeral after a
    word is ("vitamin A", "type I diabetes", "hepatitis B"), although "a" and "I" are function words."""
    token = tokens[index]
    if not _is_word(token):
        return False
    after_word = index > 0 and _content(tokens, index - 1)  # "hepatitis A", and "A" after it again
    if after_word and re.fullmatch(r"[A-Z]|[IVX]{1,4}", token.text):
        return True
    return token.low not in _FUNCTION


def terms_of(entities: Sequence[str]) -> list[str]:
    """The content words of ``entities``, as written, without repeats (case folded)."""
    seen: dict[str, str] = {}
    for entity in entities:
        tokens = _tokens(entity)
        for index, token in enumerate(tokens):
            if _content(tokens, index) and token.low not in seen:
                seen[token.low] = token.text
    return list(seen.values())


def _not_a_verb(tokens: Sequence[_Token], index: int) -> bool:
    """A verb's form right after a determiner is a noun ("the changes", "an increase"), and an -ed or -ing
    form right after a function word modifies one ("with reduced ejection fraction")."""
    if index == 0 or _content(tokens, index - 1):  # "vitamin A reduces": A names, it is no article
        return False
    before = tokens[index - 1].low
    return before in _DETERMINERS or (tokens[index].low.endswith(("ed", "ing")) and before in _FUNCTION)


def _predicate_at(tokens: Sequence[_Token], start: int, *, linking: bool) -> tuple[int, int] | None:
    """Where the question's predicate begins (its first verb, auxiliary or predicate word after a subject)
    and where what follows it begins. With no known verb, a determiner after the subject marks it: in a
    question led by "is" it opens the complement ("Is the advanced age a contraindication to ..."), else
    the word before it is the verb ("Do patients know their goal?")."""
    for index in range(start + 1, len(tokens)):
        low = tokens[index].low
        if low in _AUX or low in _BE or low in _PREDICATES:
            return index, index + 1
        if low in _VERBS and not _not_a_verb(tokens, index):
            return index, index + 1
    for index in range(start + (1 if linking else 2), len(tokens)):
        if tokens[index].low in _DETERMINERS and not _content(tokens, index):
            before = tokens[index - 1]
            if linking:
                return index, index
            if _is_word(before) and before.low not in _FUNCTION:
                return index - 1, index
    return None


@dataclass
class _Parts:
    phrases: dict[Role, list[str]]

    def add(self, role: Role, text: str) -> None:
        if text and text not in self.phrases.setdefault(role, []):
            self.phrases[role].append(text)

    def first(self, role: Role) -> str | None:
        found = self.phrases.get(role, [])
        return found[0] if found else None


def _walk(text: str, tokens: Sequence[_Token], role: Role, parts: _Parts, *, after_predicate: bool = False) -> None:
    """Cut ``tokens`` into entities, each filed under the role the marker before it opened: "in" opens the
    population, "versus" the comparator, "on" the outcome; "of" and "with" keep an entity going."""
    run: list[int] = []
    last: str | None = None
    between = False

    def close() -> None:
        while run and not _content(tokens, run[-1]):
            run.pop()
        if run:
            parts.add(role, text[tokens[run[0]].start : tokens[run[-1]].end])
        run.clear()

    for index, token in enumerate(tokens):
        low = token.low
        if _content(tokens, index) and not (after_predicate and role == "outcome" and not run and low in _VERBS):
            run.append(index)  # a verb that opens an outcome is not part of it: "in reducing pain"
        elif low in _JOINERS | {"between"} and run:
            if low in {"of", "between"} and tokens[run[-1]].low in _ASPECT_HEADS | _OPEN_HEADS:
                run.clear()  # "the use of aspirin": the entity is what follows
                between = low == "between"
            else:
                run.append(index)
        elif low in _DETERMINERS and run and tokens[run[-1]].low in _JOINERS:
            run.append(index)  # "function of the shoulder"
        elif low == "and" and between and role == "intervention":
            close()  # "an association between coffee and liver cancer"
            role = "outcome"
        elif (low == "to" and last in _COMPARATIVES) or (
            low in _TO_COMPARATOR and not (low == "over" and last not in _COMPARATIVES)
        ):
            close()
            role = "comparator"
        elif low in _TO_POPULATION and role != "population":
            close()
            nxt = tokens[index + 1].low if index + 1 < len(tokens) else ""
            # "in reducing pain": a verb after the marker opens an outcome, not a population.
            role = "outcome" if nxt in _VERBS and nxt.endswith("ing") else "population"
        elif low in _TO_OUTCOME and role == "intervention":
            close()
            role = "outcome"
        elif low == "and" and role == "intervention" and run:
            run.append(index)  # "aspirin and clopidogrel" is one intervention
        else:
            close()
        if _is_word(token):
            last = low
    close()


def _strip_people(population: str | None) -> str | None:
    """ "patients with heart failure" -> "heart failure"; "patients" alone names no population."""
    if population is None:
        return None
    tokens = _tokens(population)
    words = [t.low for t in tokens]
    if words and all(word in _PEOPLE for word in words):
        return None
    if len(tokens) > 2 and words[0] in _PEOPLE and words[1] == "with":
        return population[tokens[2].start :]
    return population


def _clause(question: str) -> tuple[str, str | None]:
    """The question itself and the title before it: "Cigarettes and cinema: does parental ...?" asks the
    part after the colon; a part that only says "is it ..." refers back to the title."""
    for mark in (":", ". ", "--", " - "):
        head, found, tail = question.rpartition(mark)
        if found and head.strip() and (words := _tokens(tail)) and words[0].low in _AUX | _WH:
            return tail.strip(), head.strip()
    return question, None


def frame_question(question: str) -> QuestionFrame:
    """The frame of ``question``, read from its shape (see the module's docstring)."""
    text, title = _clause(one_line(question))
    tokens = [t for t in _tokens(text) if t.text not in "?!"]
    start = 0
    asks_which = False
    while start < len(tokens) and tokens[start].low in _AUX | _WH | {"how", "there"}:
        asks_which = asks_which or tokens[start].low in _WH
        start += 1
        if asks_which and start < len(tokens) and tokens[start].low in _OPEN_HEADS:
            start += 1  # "What treatments ...": the head asks, it names nothing
            break
    parts = _Parts({})
    verb_first = asks_which and start < len(tokens) and tokens[start].low in _VERBS  # "What reduces ...?"
    linking = bool(tokens) and tokens[0].low in _BE
    found = (start, start + 1) if verb_first else _predicate_at(tokens, start, linking=linking)
    if found is None:
        _walk(text, tokens[start:], "intervention", parts)
    else:
        predicate, rest = found
        subject = tokens[start:predicate]
        if subject and all(t.low in _SUBJECT_PRONOUNS | _FUNCTION for t in subject) and title:
            parts.add("intervention", title)
        else:
            _walk(text, subject, "intervention", parts)
        # Past the predicate's verbs and words: "prevent or treat", "be repurposed", "is associated".
        while rest < len(tokens) and (
            tokens[rest].low
            in _VERBS | _AUX | _BE | _PREDICATES | {"or", "and", "not", "significantly", "more", "less"}
        ):
            rest += 1
        last = tokens[rest - 1].low if rest > 0 else ""
        role: Role = "outcome"
        if rest < len(tokens) and tokens[rest].low in {"to", "with"} and last in _PREDICATES | _VERBS:
            if last in _COMPARATIVES:
                role = "comparator"
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
        intervention is None or _tokens(intervention)[-1].low in _OPEN_HEADS | _ASPECT_HEADS
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
    return QuestionFrame(
        population=population,
        intervention=intervention,
        comparator=comparator,
        outcomes=outcomes,
        open_intervention=open_intervention,
    )
