"""Whether an item is about the question: it names the question frame's intervention and, softly, one of its
outcomes or its population, in its title, text or MeSH index terms.
Only such items may point the answer one way or the other: a snippet about metformin alone says nothing
about metformin for Alzheimer's disease.

The frame (``reading.frame``) says which of a question's words are things and which only say how the
question is put: "Does vitamin D supplementation prevent fractures in older adults?" is about vitamin D and
fractures in older people, so an RCT of "annual high-dose oral vitamin D and falls, fractures and mood in
older women" is on topic, although it never writes "supplementation", "prevent" or "adults"; a trial that
reports deaths answers a question about mortality. Whether a study's result is for the question's outcome
and people is then the study reader's to say (``study_reading``). An open question ("Which drugs reduce
hospitalisation in heart failure?") asks about any intervention: an item names its outcome, and its people or
two thirds of its key words. A question the frame cannot read otherwise (a claim, no intervention or nothing
besides it) falls back on its key words: an item names at least two thirds of them."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from deepcritical.appraisal.framing import EvidenceView
from deepcritical.appraisal.other_names import named_otherwise
from deepcritical.appraisal.passages import mentions_stem
from deepcritical.appraisal.question_comparison import ANY_OUTCOME, SAME_OUTCOME
from deepcritical.appraisal.stance import is_yes_no
from deepcritical.questions import entity_terms, key_terms, stem
from deepcritical.reading.abbreviations import defined_abbreviations, expands
from deepcritical.reading.comparison import stems as outcome_stems
from deepcritical.reading.frame import GENERIC_OUTCOMES, frame_question, terms_of
from deepcritical.reading.frame_words import ASPECT_HEADS, OPEN_HEADS, OUTCOME_MEASURES, PEOPLE

# Words that say how an intervention is given or an outcome measured, not what it is: "vitamin D
# supplementation" is named by a trial of "oral vitamin D", "the risk of fractures" by one of "fractures".
_MANNER = frozenset(
    {
        *OPEN_HEADS,
        *ASPECT_HEADS,
        "supplementation",
        # A plan's generic head, and how one thing is given with another: "house modifications" is named by "house
        # screening", "MVA85A added to BCG" by a trial of MVA85A in BCG-vaccinated adults.
        "modification",
        "modifications",
        "procedure",
        "procedures",
        "added",
        "using",
        "intake",
        "consumption",
        "exposure",
        "prophylaxis",
        "dosing",
        "dose",
        "doses",
        "prescription",
        *OUTCOME_MEASURES,
    }
)
# How much, how often, for how long and by which route an intervention is given: "100 mg thalidomide daily",
# "6 months of free access", "80 mg of intramuscular Depo-Medrone". A trial's results passage names the drug, not
# the dose the question copied from its methods; what dose a study gave is the reader's to weigh, not the topic's.
_UNITS = (
    "mg|g|kg|mcg|µg|ug|ng|ml|l|iu|units?|mmol|mg/day|mg/d|g/d|g/day|mg/kg|mg/kg/day|ng/kg|mg/m2|ml/kg|gy|%|x|×"
    "|min|minutes?|hours?|hr|h|days?|weeks?|months?|years?|sessions?|times|doses?"
)
_UNIT = re.compile(rf"^(?:{_UNITS})$", re.IGNORECASE)
# A number with its unit ("30g", "0.5%", "30-minute"); a bare number is a dose only before a unit ("100 mg"): the
# "9" of "station 9 lymph nodes" and the "1" of "protein 1" name what they follow.
_DOSE = re.compile(rf"^\d[\d.,]*-?(?:{_UNITS})$", re.IGNORECASE)
_NUMBER = re.compile(r"^\d[\d.,]*$")
_REGIMEN = frozenset(
    {
        "daily", "twice", "once", "thrice", "weekly", "monthly", "nightly", "oral", "orally", "intravenous",
        "intravenously", "intramuscular", "subcutaneous", "intralesional", "topical", "inhaled",
    }
)  # fmt: skip
# A number written as a word, on its own, is a number: "six months of metformin", "one year of trastuzumab" (whose
# "one" the frame's terms leave out as a function word); not "one-stage" nor "Two-Week Wait".
_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
_NUMBER_WORD = re.compile(rf"(?<![\w-])({'|'.join(_NUMBER_WORDS)})(?![\w-])", re.IGNORECASE)
_CONDITION_HEADS = frozenset({"disease", "syndrome", "disorder"})
# The heads of a population that is a group of people rather than a condition; such a population is named
# by any of its words or by a word of its age group ("older women" and "aged" for "older adults").
_GROUP_HEADS = PEOPLE | {"women", "men", "children", "infants", "adolescents", "elderly", "neonates", "girls", "boys"}
# (A text's "aged 18 to 65" or "7 days old" names no age group: "aged" counts only as the MeSH heading.)
_AGE_GROUPS = (
    frozenset({"older", "elderly", "geriatric", "senior", "seniors"}),
    frozenset({"children", "child", "paediatric", "pediatric", "infants", "infant", "adolescents", "adolescent"}),
)
_AGE_HEADINGS = (frozenset({"aged"}), frozenset({"child", "infant", "adolescent"}))
# An abbreviation long enough to be spelt out reliably by an index term ("SGLT2"; not "AF").
_MIN_ABBREVIATION = 3


@dataclass(frozen=True)
class Topic:
    """What an item must name to be about a question: the frame's intervention (its words), its outcomes
    (each as its stemmed words, each word with the other words for it: "mortal" with "death", "surviv"...;
    none when the question names only a generic one: "outcomes") and its population (its words); or, when the
    frame cannot be read, the question's key words (``stems``). ``short_names`` are the abbreviations the question
    defines for its intervention ("goal-directed fluid restriction (GDFR)"), which name it too."""

    stems: tuple[str, ...]
    intervention: tuple[str, ...] = ()
    outcomes: tuple[tuple[frozenset[str], ...], ...] = ()
    population: tuple[str, ...] = ()
    group: bool = False
    short_names: tuple[str, ...] = ()

    @property
    def framed(self) -> bool:
        return bool(self.intervention) and bool(self.outcomes or self.population)


def _words(entity: str | None, *, given: bool = False) -> tuple[str, ...]:
    """The words of an entity that name it, without those that only say how it is given or measured (and, for
    an intervention, ``given``, its dose, schedule and route), nor the head of an eponym ("Alzheimer's" names
    Alzheimer's disease)."""
    if not entity:
        return ()
    if given:
        entity = _NUMBER_WORD.sub(lambda word: str(_NUMBER_WORDS.index(word.group(1).lower()) + 1), entity)
    words = terms_of([entity])
    named = [
        word
        for position, word in enumerate(words)
        if word.lower() not in _MANNER and not (given and _regimen(words[max(position - 1, 0) : position + 2], word))
    ]
    if len(named) >= 2 and named[-1].lower() in _CONDITION_HEADS and named[-2].lower().endswith(("'s", "’s")):
        named.pop()
    return tuple(named or words)


def _regimen(around: Sequence[str], word: str) -> bool:
    """A word of how much, how often, how long or by which route an intervention is given: a route or schedule,
    a dose ("30g"), a number before its unit ("100" of "100 mg") or a unit after its number ("mg"); ``around`` is
    the word with its neighbours (the "year" of "year of radical prostatectomy" is no unit)."""
    low = word.lower()
    if low in _REGIMEN or _DOSE.match(low):
        return True
    neighbours = [other.lower() for other in around if other is not word]
    if _NUMBER.match(low):
        return any(_UNIT.match(other) or other in _REGIMEN for other in neighbours)
    return bool(_UNIT.match(low)) and any(_NUMBER.match(other) for other in neighbours)


@lru_cache(maxsize=256)
def topic_of(question: str) -> Topic:
    """The ``Topic`` of ``question``, from its frame."""
    stems = tuple(stem(term) for term in key_terms(question))
    frame = frame_question(question)
    if frame.open_intervention and frame.population:
        # "Which drugs reduce hospitalisation in heart failure?": any intervention, so a study is about the question
        # when it names its people and (softly) its outcome; a metformin safety review that mentions "decompensated
        # heart failure" once, and no hospitalisation, is not.
        population = _words(frame.population)
        return Topic(stems, (), _outcomes(frame.outcomes), population, population[-1].lower() in _GROUP_HEADS)
    if frame.open_intervention or not frame.intervention or not is_yes_no(question):
        # The frame is read from a question's shape; a claim's subject is often no intervention ("Women with
        # a lower birth weight", "76-85% of people with severe mental disorder"): SciFact, phases/16_frame.md.
        return Topic(stems)
    outcomes = _outcomes(frame.outcomes)
    population = _words(frame.population)
    group = bool(population) and population[-1].lower() in _GROUP_HEADS
    # A question that names only a generic outcome ("improve outcomes") is answered by any clinical one.
    intervention = _words(frame.intervention, given=True)
    topic = Topic(stems, intervention, outcomes, population, group, _short_names(question, intervention))
    return topic if topic.framed else Topic(stems)


def _short_names(question: str, intervention: Sequence[str]) -> tuple[str, ...]:
    """The abbreviations the question defines for its intervention: the long form spells out at least half of the
    intervention's words ("intraoperative goal-directed fluid restriction (GDFR) strategy": GDFR; "chloroquine
    (CQ) and sulphadoxine-pyrimethamine (SP)": both). A trial's results write "the GDFR group"."""
    wanted = {word.lower() for word in intervention}
    return tuple(
        short
        for short, long in defined_abbreviations(question).items()
        if len(short) >= 2 and 2 * len(wanted & {word.lower() for word in terms_of([long])}) >= len(wanted)
    )


def _outcomes(outcomes: Sequence[str]) -> tuple[tuple[frozenset[str], ...], ...]:
    """Each specific outcome's stemmed words, each with the other words for it; none for a generic one."""
    return tuple(
        families
        for outcome in outcomes
        if outcome.lower() not in GENERIC_OUTCOMES
        and (families := tuple(SAME_OUTCOME.get(word, frozenset({word})) for word in _outcome_words(outcome)))
    )


def _outcome_words(outcome: str) -> list[str]:
    """An outcome's stemmed words, without those that say how it is counted ("the risk of fractures")."""
    manner = set(outcome_stems(" ".join(_MANNER)))
    return [word for word in dict.fromkeys(outcome_stems(outcome)) if word not in ANY_OUTCOME | manner]


def _phrase(words: Sequence[str]) -> re.Pattern[str]:
    # "vitamin D3" is vitamin D; "statins" a statin.
    body = r"[\s-]+".join(re.escape(word.lower()) for word in words)
    return re.compile(rf"(?<![\w-]){body}(?:s|\d{{1,2}})?(?![\w])")


def _names(words: Sequence[str], haystack: str, mesh: Sequence[str]) -> bool:
    """Whether the lower-cased ``haystack`` (or an index term) names every word of an entity. A word of one
    or two letters ("vitamin D", "type 2 diabetes") only counts in the entity's own phrase; an abbreviation
    is also named by an index term that spells it out ("Sodium-Glucose Transporter 2 Inhibitors" for SGLT2)."""
    if any(len(word) < 3 for word in words):
        phrase = _phrase(words)
        return bool(phrase.search(haystack)) or any(phrase.search(term.lower()) for term in mesh)
    index = " ".join(term.lower() for term in mesh)
    otherwise = named_otherwise(words, haystack)
    missing = 0
    for word in words:
        key = stem(word)
        if mentions_stem(key, haystack) or mentions_stem(key, index) or word in otherwise:
            continue
        if _spelled_alike(word, haystack):
            continue
        abbreviation = sum(char.isupper() or char.isdigit() for char in word) >= 2 and len(word) >= _MIN_ABBREVIATION
        if not (abbreviation and any(expands(word, term) for term in mesh)):
            missing += 1
    # A long entity ("screening with a combination of mammography and ultrasonography", a review's wording) is
    # named by most of its words: a study writes "ultrasound" or leaves out "combination".
    return missing == 0 or (len(words) >= _LONG_ENTITY and 3 * (len(words) - missing) >= 2 * len(words))


# An entity of at least this many words is named by two thirds of them (``_names``).
_LONG_ENTITY = 3
# A long word is spelled alike by a word with its first and last letters ("pancreatojejunostomy",
# "pancreaticojejunostomy"; "haemorrhage", "hemorrhage" are another matter, left to the stems).
_SPELLING_WORD = 10
_SPELLING_ENDS = 6


def _spelled_alike(word: str, haystack: str) -> bool:
    """Whether a long word is in ``haystack`` (lower-cased) in another spelling: same first and last letters."""
    low = word.lower()
    if len(low) < _SPELLING_WORD or not low.isalpha():
        return False
    head, tail = re.escape(low[:_SPELLING_ENDS]), re.escape(low[-_SPELLING_ENDS:])
    return bool(re.search(rf"\b{head}[a-z]{{0,{len(low)}}}{tail}\b", haystack))


def _names_group(words: Sequence[str], haystack: str, mesh: Sequence[str]) -> bool:
    """A group of people named softly: by a word that qualifies it ("older", or the head when nothing does:
    "children") or another word of the same age group ("elderly"; the MeSH heading "Aged"); "adults" alone
    is anyone."""
    wanted = {word.lower() for word in words[:-1]} or {words[-1].lower()}
    headings: set[str] = set()
    for ages, ages_indexed in zip(_AGE_GROUPS, _AGE_HEADINGS, strict=True):
        if wanted & ages:
            wanted |= ages
            headings |= ages_indexed
    if any(term.split(",")[0].lower() in headings for term in mesh):
        return True
    # Whole words: "older" is not in "shoulder".
    return any(re.search(rf"\b{re.escape(word)}\b", haystack) for word in wanted)


def on_topic(item: EvidenceView, topic: Topic) -> bool:
    """The item names the question's intervention (every word of it) and the rest of its frame: one of its
    outcomes or its population, softly (a word of it, or another word for it: "died" for mortality; a group
    of people by its qualifier or age group), in its title, text or MeSH terms, as the study reader names an
    outcome. For an open question ("Which drugs ..."): its outcome, and its people or two thirds of its key words.
    For a question without a frame: at least two thirds of its key words (and never fewer than two)."""
    haystack = f"{item.title} {item.text}".lower()
    mesh = item.mesh
    if not topic.intervention and topic.population:
        # An open question: its outcome, when it names one (a metformin review that mentions "decompensated heart
        # failure" once says nothing on hospitalisation), and its people by their whole name or, as a question
        # without a frame, by two thirds of its key words ("septic shock" and "drug" for "drugs ... in sepsis").
        if topic.outcomes and not _names_outcome(item, topic):
            return False
        phrase = _phrase(topic.population)
        return (
            bool(phrase.search(haystack))
            or any(phrase.search(term.lower()) for term in mesh)
            or (topic.group and _names_group(topic.population, haystack, mesh))
            or _two_thirds(haystack, topic.stems)
        )
    if not topic.intervention:
        return _two_thirds(haystack, topic.stems)
    if not _names(topic.intervention, haystack, mesh) and not any(
        re.search(rf"\b{re.escape(short)}\b", f"{item.title} {item.text}") for short in topic.short_names
    ):
        return False
    if _names_outcome(item, topic):
        return True
    if not topic.population:
        return False
    if topic.group:
        return _names_group(topic.population, haystack, mesh)
    return any(_names([word], haystack, mesh) for word in topic.population if len(word) >= 3)


def studies_on_topic(items: Sequence[EvidenceView], topic: Topic) -> set[str]:
    """The studies (``EvidenceView.document``, else the item's id) on the topic by what was collected of each
    together: a full text's Results passage says "the PHSO diet" or "the ibandronate group" where its abstract,
    collected beside it, names the whole intervention; one study is about the question or not, whichever of its
    passages is read for its result."""
    parts: dict[str, list[EvidenceView]] = {}
    for item in items:
        parts.setdefault(item.document or item.id, []).append(item)
    on = set()
    for key, views in parts.items():
        whole = views[0] if len(views) == 1 else replace(views[0], text="\n".join(view.text for view in views))
        if on_topic(whole, topic):
            on.add(key)
    return on


def on_outcome(item: EvidenceView, topic: Topic) -> bool:
    """The item is on the topic and names one of the question's own outcomes (any, when it names none): it
    may answer the question, not only concern its people ("vitamin D and depression in older adults" does
    not answer one on fractures)."""
    return on_topic(item, topic) and (not topic.intervention or not topic.outcomes or _names_outcome(item, topic))


def _names_outcome(item: EvidenceView, topic: Topic) -> bool:
    if not topic.outcomes:
        return False
    named = set(outcome_stems(" ".join((item.title, item.text, *item.mesh)).lower()))
    return any(any(family & named for family in outcome) for outcome in topic.outcomes)


def _two_thirds(haystack: str, stems: Sequence[str]) -> bool:
    entities = entity_terms(stems)
    if not entities:
        return True
    hits = sum(mentions_stem(term, haystack) for term in entities)
    return hits >= max(min(2, len(entities)), math.ceil(2 * len(entities) / 3))
