"""Turns a natural-language question into a PubMed query.

PubMed ANDs every term it is given, so each filler word ("could", "the", "help") that survives
narrows the search to abstracts that happen to contain it. Quoted phrases, field-tagged terms
(``metformin[tiab]``), upper-case Boolean operators and balanced parentheses are PubMed syntax the
caller chose on purpose, so they pass through untouched.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from deepcritical.text import collapse_whitespace

OPERATORS = frozenset({"AND", "OR", "NOT"})

# Question words, auxiliaries, articles, pronouns, prepositions and conversational filler: none of
# them narrows a biomedical search usefully. Lower-case and/or/not are prose, not operators.
_STOP_WORDS_TEXT = """
    a about above actually after again against all also am an and any are as at be because been before being
    between both but by can could did do does doing done during each either else ever for from further had has
    have having help helps helpful her here hers him his how however i if in into is it its itself just know
    known let me might more most much must my no nor not of off on once only or other our ours out over own
    please really regarding same shall she should so some such tell than that the their theirs them then there
    these they this those through to too under until up upon us very was we were what whatever when where
    whether which while who whom whose why will with within would yes you your yours
    what's it's that's there's who's how's isn't aren't wasn't weren't doesn't don't didn't can't cannot won't
    wouldn't couldn't shouldn't i'm i've we're we've they're
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "`": "'"})
_FIELD_TAG = r"(?:\[[^\[\]\"]*\])?"
_TOKEN = re.compile(
    rf"""
    (?P<phrase>"[^"]*"{_FIELD_TAG})
    | (?P<word>\w+(?:['.\-]\w+)*\*?{_FIELD_TAG})
    | (?P<paren>[()])
    """,
    re.VERBOSE,
)


# A capital letter or a Roman numeral after a word is part of a name, not the article or pronoun it spells:
# "vitamin A", "hepatitis A", "type I diabetes"; so is an acronym in capitals ("WHO guidelines").
_LETTER = re.compile(r"[A-Z]|[IVX]{1,4}")


def _tokens(text: str) -> list[str]:
    """Phrases, words and parentheses, in order; every other character is punctuation and goes."""
    kept: list[str] = []
    previous = ""
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if match.group("phrase") is not None:
            if token.strip('"').strip():
                kept.append(token)
        elif (
            match.group("paren") is not None
            or token in OPERATORS
            or "[" in token
            or token.lower().strip("'") not in STOP_WORDS
            or (_LETTER.fullmatch(token) and previous.isalnum() and previous.lower() not in STOP_WORDS)
            or (len(token) > 1 and token.isupper())  # an acronym that spells a filler word: "WHO", "US"
        ):
            kept.append(token)
        previous = token
    return kept


def _balanced(tokens: list[str]) -> bool:
    depth = 0
    for token in tokens:
        depth += {"(": 1, ")": -1}.get(token, 0)
        if depth < 0:
            return False
    return depth == 0


def _tidy(tokens: list[str]) -> list[str]:
    """Drop operators and parentheses that dropping filler left dangling."""
    if not _balanced(tokens):
        tokens = [token for token in tokens if token not in "()"]
    out: list[str] = []
    for token in tokens:
        if token in OPERATORS:
            if out and out[-1] not in OPERATORS and out[-1] != "(":
                out.append(token)
            continue
        if token == ")":
            while out and out[-1] in OPERATORS:
                out.pop()
            if out and out[-1] == "(":
                out.pop()
                continue
        out.append(token)
    while out and out[-1] in OPERATORS:
        out.pop()
    return out


def to_pubmed_query(text: str) -> str:
    """A PubMed query for ``text``: filler and punctuation dropped, PubMed syntax kept.

    Never empty for non-empty input: when nothing but filler is left, the words of the original
    (or, failing that, the original itself) are returned so the search still says what was asked.
    """
    normalized = text.translate(_QUOTES).strip()
    if not normalized:
        return ""
    query = " ".join(_tidy(_tokens(normalized)))
    query = query.replace("( ", "(").replace(" )", ")")
    if query:
        return query
    words = " ".join(re.findall(r"\w+(?:['\-]\w+)*", normalized))
    return words or collapse_whitespace(normalized)  # the original, its whitespace folded (control characters too)


_ANY_FIELD_TAG = re.compile(r"\[[^\]]*\]")


def without_field_tags(query: str) -> str:
    """The PubMed query of ``query`` without its field tags, for services with a field syntax of their own or
    none (Europe PMC, ClinicalTrials.gov, OpenAlex)."""
    return collapse_whitespace(_ANY_FIELD_TAG.sub(" ", to_pubmed_query(query)))


_WORD = re.compile(r"\w+(?:['’\-]\w+)*")


def _key(word: str) -> str:
    return re.sub(r"['’]s$", "", word.lower().strip("'’-"))


def query_names(term: str, query: str) -> bool:
    """Whether ``query`` names ``term``: every word of it that is not filler ("of", "with"), case folded, a
    possessive or a plural s folded. A short word must stand as a word: the "D" of "vitamin D" is not named
    by the d of "disease"."""
    words = [w for w in _WORD.findall(term) if _LETTER.fullmatch(w) or w.lower() not in STOP_WORDS]
    lowered = query.lower()
    query_words = {_key(word) for word in _WORD.findall(query)}
    for word in words or [term]:
        key = _key(word)
        if len(key) < 4:
            if key not in query_words:
                return False
        elif key not in lowered and not (len(key) > 4 and key.endswith("s") and key[:-1] in lowered):
            return False
    return True


def with_terms(query: str, terms: Sequence[str]) -> str:
    """``query`` with each of ``terms`` it does not name added whole, so a search cannot drift off the question
    (a query about the drug that lost the disease, or "vitamin" that lost its "D"). A query written with
    Boolean operators or parentheses is kept whole and ANDed with the missing terms."""
    query = collapse_whitespace(query)
    missing = [term for term in dict.fromkeys(terms) if term.strip() and not query_names(term, query)]
    if not missing:
        return query
    if not query:
        return " ".join(missing)
    if "(" in query or any(token in OPERATORS for token in query.split()):
        return f"({query}) AND {' '.join(missing)}"
    return f"{query} {' '.join(missing)}"


# A search query is a few terms, perhaps with PubMed syntax. A weak model sometimes writes code, markup or
# a paragraph where a query belongs; sent on, such text only searches for its own noise.
MAX_QUERY_WORDS = 32
# Code and markup by their syntax, not by keywords or symbols: "cognitive function (MMSE)", "return to work",
# "HbA1c <7%", "fever <3 days and >38C" and "BMI>=30" are biomedical queries.
_NOT_A_QUERY = re.compile(
    r"```|\bdef\s+\w+\s*\(|\bfunction\s+\w+\s*\(|\bfunction\s*\([^)]*\)\s*\{|\bprint\s*\("
    r"|\bfrom\s+[\w.]+\s+import\s|^\s*(?:const|let|var)\s+\w+\s*=|\b\w+\s*=\s*[\w.]+\(|[{}]|=="
    r"|</?[a-z][a-z0-9]*(?:\s+[\w:-]+\s*=\s*(?:\"[^\"]*\"|'[^']*'))*\s*/?>|https?://|\w\(\)|\b\w+\.\w+\(",
    re.IGNORECASE | re.MULTILINE,
)


# A word of a query holds a letter or digit; a bracket may group Boolean terms, a comparison sign a number. A
# small model writes stray punctuation around its queries ("][ metformin Alzheimer's disease"), which was sent on.
_STRAY_START = re.compile(r"^[^\w\"(]+")
# At its end a query keeps what is PubMed syntax or part of a term: a field tag's "]" (``dementia[tiab]``), a
# truncation's "*" (``diabet*``), "7%", "HER2+".
_STRAY_END = re.compile(r"[^\w\"')\]*%+]+$")
_ENDS_TAGGED = re.compile(r"\[[^\[\]\"]*\]$")


def tidy_query(text: str) -> str:
    """``text`` without the tokens that are only punctuation (a bracket or comparison sign kept) and the stray
    punctuation at its edges: "][ metformin Alzheimer's disease," is "metformin Alzheimer's disease"."""
    tokens = [token for token in text.split() if re.search(r"[\w()<>=≤≥]", token)]
    tidied = _STRAY_END.sub("", _STRAY_START.sub("", " ".join(tokens)))
    while tidied.endswith("]") and not _ENDS_TAGGED.search(tidied):  # a "]" that closes no field tag
        tidied = _STRAY_END.sub("", tidied[:-1])
    return tidied


def is_search_query(text: str) -> bool:
    """Whether ``text`` reads as a search query rather than code, markup, a URL or a paragraph."""
    words = text.split()
    return 0 < len(words) <= MAX_QUERY_WORDS and not _NOT_A_QUERY.search(text)
