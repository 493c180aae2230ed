"""A question's checks, the same in every front end (the command line, the API, MCP, batches, watches):
not empty, not too long, something to search for, in English. Part of the foundation and importing nothing
beyond the standard library and ``text``, so a bad question is refused before any model, store or network
client loads: in a few hundredths of a second rather than after seconds of imports (bench/refusal_timing.py).

Also where a question's key terms are read (``key_terms``): the searches, the topic filter and the verdict
are built from them, and a question without one cannot be answered."""

from __future__ import annotations

import re
from collections.abc import Sequence

from deepcritical.text import MAX_QUESTION_CHARS, one_line

_STOPWORD_TEXT = """a an and are as at be been being by can could did do does for from has have how in into is it its
may might of on or repurposed repurposing role should slow the their there these this to treat treating
treatment use used using was were what when whether which who why will with would effect effects help
helps effective efficacy disease diseases patients people"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")

# Words of a question that say what the answer is about (an effect), not what it concerns: "Do statins
# reduce mortality in sepsis?" concerns statins, mortality and sepsis.
_EFFECT_VERBS = ("reduce", "lower", "improve", "prevent", "increase", "slow", "cause", "affect", "benefit", "protect")
EFFECT_WORDS = frozenset(word + suffix for word in (*_EFFECT_VERBS, "work", "change", "delay") for suffix in ("", "s"))

# Function words of the languages a clinician most often asks in besides English, that are neither English
# words nor part of what English questions carry ("in vitro", "de novo", "et al", "per os", "Na"). A question
# in German, French, Spanish, Italian, Portuguese or Dutch names its drug and disease in words a search would
# take ("Wie wirkt Metformin bei Alzheimer?"), so its script alone does not tell.
_FOREIGN_TEXT = """der das den dem des und ist sind wie wirkt wirken bei mit nicht oder eine einer einem einen gegen
durch hilft helfen kann können zur zum beim welche welcher wirksam gibt vom auf für über nach von
le les du une est sont pour avec dans sur quel quelle quels comment chez peut aux contre maladie traitement
el los las del una es para con por que cómo como puede enfermedad tratamiento en la
il gli della delle dei nel nella sono può malattia contro
das dos não uma com doença pode em
het een van bij niet voor tegen ziekte helpt"""
FOREIGN_WORDS = frozenset(_FOREIGN_TEXT.split())
_ENGLISH_TEXT = """a an and are as at be by can could did do does for from has have how in into is it its of on or
should than the their there these this to versus vs was were what when whether which who why will with would
after before during among compared any"""
ENGLISH_WORDS = frozenset(_ENGLISH_TEXT.split())
_LETTERS = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")
EXAMPLE = "(e.g. 'Does aspirin prevent stroke?')"


def stem(term: str) -> str:
    """Lower-case, without a possessive or surrounding punctuation: "Alzheimer's" -> "alzheimer"."""
    term = term.lower().strip("'’-")
    return re.sub(r"['’]s$", "", term)


def key_terms(question: str) -> list[str]:
    """Content words of a question, in order, without repeats: the terms searches are built from."""
    terms: dict[str, str] = {}
    for word in WORD.findall(question):
        key = stem(word)
        if len(key) >= 3 and key not in STOPWORDS and key not in terms:
            terms[key] = word.strip("'’-")
    return list(terms.values())


def entity_terms(stems: Sequence[str]) -> list[str]:
    """The key terms that name things (drugs, diseases, outcomes), without the effect verbs."""
    return [term for term in stems if term not in EFFECT_WORDS] or list(stems)


def foreign_words(question: str) -> list[str]:
    """The question's words that read as another language's function words ("wie", "bei"), when they
    outnumber its English ones; else none. One "de" in an English sentence ("de novo") does not count."""
    words = [word.lower() for word in _LETTERS.findall(question)]
    foreign = [word for word in words if word in FOREIGN_WORDS]
    english = sum(word in ENGLISH_WORDS for word in words)
    return foreign if len(foreign) > english else []


def unsearchable(question: str) -> str | None:
    """Why ``question`` gives a search nothing to look for, or None when it names something. Searches, the
    topic filter and the verdict are built from the question's key terms (``key_terms``, as the planner's code
    half reads them); a question without one that names a thing ("?????", "the of and?", "Does it work?")
    would be answered from whatever unrelated studies a search of nothing returns. Only English is read
    for now: a question in another script yields no key terms, and one in another language written in
    Latin letters is told by its function words."""
    if foreign := foreign_words(question):
        shown = ", ".join(repr(word) for word in dict.fromkeys(foreign[:3]))
        return (
            f"the question reads as a language other than English ({shown}): only English questions are "
            f"supported for now {EXAMPLE}"
        )
    terms = [term for term in key_terms(question) if any(char.isalpha() for char in term)]
    if any(term.lower() not in EFFECT_WORDS for term in terms):
        return None
    if any(char.isalpha() and not char.isascii() for char in question):
        return (
            "the question's words could not be read as search terms: only English questions are supported "
            f"for now {EXAMPLE}"
        )
    only = f" (only {', '.join(repr(term) for term in terms)})" if terms else ""
    return f"the question has no searchable words{only}: name the treatment, condition or outcome it is about {EXAMPLE}"


def question_problem(question: str) -> str | None:
    """Why ``question`` (as a run uses it: one line, control characters removed) cannot be researched, or
    None: empty, longer than ``MAX_QUESTION_CHARS``, nothing to search for, or not English."""
    if not question:
        return "the question is empty: give a non-empty question"
    if len(question) > MAX_QUESTION_CHARS:
        return f"the question is {len(question):,} characters long; the limit is {MAX_QUESTION_CHARS:,}: shorten it"
    return unsearchable(question)


def checked_question(question: str) -> tuple[str, str | None]:
    """The question as a run uses it (one line, control characters and escape sequences removed) and why
    it is refused, or None when it is not."""
    text = one_line(question)
    return text, question_problem(text)
