"""BM25 search over the demo corpus, one index per source kind, so each stand-in ranks its own records.

The indexes are built on first use and shared by the whole process: the corpus is read-only data, and
the web stand-in runs in worker threads, hence the lock.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import bm25s
from bm25s.stopwords import STOPWORDS_EN

from deepcritical.demo import clock
from deepcritical.demo.records import Record, RecordKind, as_of, load_corpus, strip_markup

# Single characters are kept ("vitamin D", "type 2") except the leftovers of English apostrophes.
_TOKEN_PATTERN = r"(?u)\b\w+\b"
_QUESTION_WORDS = ("can", "could", "does", "do", "did", "what", "which", "who", "how", "why", "when", "should")
STOPWORDS: tuple[str, ...] = (*STOPWORDS_EN, *_QUESTION_WORDS, "s", "t")

# A hit scoring below this share of the best hit is noise (it shares only a common word such as
# "disease"); real engines would not return it, so neither do the stand-ins.
RELATIVE_FLOOR = 0.25


def _s_stem(word: str) -> str:
    """Harman's S-stemmer: folds English plurals only, so "statins" meets "statin" without over-stemming."""
    if len(word) > 4 and word.endswith("ies") and not word.endswith(("eies", "aies")):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and not word.endswith(("aes", "ees", "oes")):
        return word[:-1]
    if len(word) > 2 and word.endswith("s") and not word.endswith(("us", "ss")):
        return word[:-1]
    return word


# The corpus is written in British English and queries often arrive in American English; both sides
# are folded to one spelling. A rule may merge a rare unrelated pair; consistency is what matters.
_SUFFIX_SPELLINGS = (
    ("isation", "ization"),
    ("ising", "izing"),
    ("ised", "ized"),
    ("ise", "ize"),
    ("our", "or"),
    ("tre", "ter"),
    ("lling", "ling"),
    ("lled", "led"),
)
_INFIX_SPELLINGS = (("aem", "em"), ("aed", "ed"), ("hoea", "hea"), ("sulph", "sulf"), ("ageing", "aging"))


def fold_spelling(word: str) -> str:
    """One spelling for British and American variants (randomised/randomized, signalling/signaling)."""
    for old, new in _INFIX_SPELLINGS:
        word = word.replace(old, new)
    if word.startswith("oe") and len(word) > 4:  # oedema, oestrogen, oesophagus
        word = word[1:]
    for old, new in _SUFFIX_SPELLINGS:
        if word.endswith(old) and len(word) > len(old) + 2:
            return word[: -len(old)] + new
    return word


def _stem_all(words: list[str]) -> list[str]:
    return [fold_spelling(_s_stem(word)) for word in words]


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased, stop-word-free, plural-folded tokens: the same pipeline for documents and queries."""
    if not texts:
        return []
    tokens: Any = bm25s.tokenize(
        [strip_markup(text) for text in texts],
        token_pattern=_TOKEN_PATTERN,
        stopwords=list(STOPWORDS),
        stemmer=_stem_all,
        return_ids=False,
        show_progress=False,
    )
    return [[str(token) for token in doc] for doc in tokens]


def document_text(record: Record) -> str:
    """What the index sees: the title without the demo marker, then the body text."""
    return f"{record.title.removeprefix('[DEMO] ')} {record.text}"


@dataclass(frozen=True)
class Hit:
    record: Record
    score: float


@dataclass(frozen=True)
class _KindIndex:
    records: tuple[Record, ...]
    retriever: Any  # bm25s.BM25 (untyped)


_indexes: dict[RecordKind, _KindIndex] = {}
_lock = threading.Lock()


def _index(kind: RecordKind) -> _KindIndex:
    with _lock:
        if kind not in _indexes:
            records = tuple(load_corpus().of_kind(kind))
            retriever = bm25s.BM25()
            retriever.index(tokenize([document_text(record) for record in records]), show_progress=False)
            _indexes[kind] = _KindIndex(records, retriever)
        return _indexes[kind]


def hits(kind: RecordKind, query: str) -> list[Hit]:
    """Every relevant record of ``kind`` for ``query``, best first; ties keep corpus order (deterministic).

    Relevant means: it contains at least half of the query's known terms (PubMed ANDs terms; web engines
    reward matching most of them), and its score is at least ``RELATIVE_FLOOR`` of the best score. Records
    are as the source shows them on the demo clock's today (``clock``): a later record is not there yet.
    """
    index = _index(kind)
    today = clock.today()
    shown = [as_of(record, today) for record in index.records]
    term_ids = list(dict.fromkeys(index.retriever.get_tokens_ids(tokenize([query])[0])))
    if not term_ids:
        return []
    per_term = [[float(s) for s in index.retriever.get_scores_from_ids([term_id])] for term_id in term_ids]
    required = (len(term_ids) + 1) // 2
    scores: list[float] = []
    for doc in range(len(index.records)):
        matched = [column[doc] for column in per_term if column[doc] > 0.0]
        scores.append(sum(matched) if len(matched) >= required and shown[doc] is not None else 0.0)
    best = max(scores)
    if best <= 0.0:
        return []
    ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return [
        Hit(record, scores[i])
        for i in ranked
        if scores[i] > 0.0 and scores[i] >= best * RELATIVE_FLOOR and (record := shown[i]) is not None
    ]


def page_token(offset: int) -> str:
    """An opaque token for the page that starts at ``offset`` (ClinicalTrials.gov's ``pageToken``, Europe PMC's
    ``cursorMark``)."""
    return base64.urlsafe_b64encode(f"demo:{offset}".encode()).decode().rstrip("=")


def page_offset(token: str) -> int | None:
    """The offset a ``page_token`` stands for; None for a token the stand-ins did not give."""
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    prefix, _, number = text.partition(":")
    return int(number) if prefix == "demo" and number.isdigit() else None


def search(kind: RecordKind, query: str, k: int = 10) -> list[Record]:
    """The ``k`` best records of ``kind`` for ``query``."""
    return [hit.record for hit in hits(kind, query)[: max(k, 0)]]
