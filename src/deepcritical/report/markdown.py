"""Markdown that cannot do anything: every piece of text from the web, a paper or a model is escaped so it
renders as plain text (no HTML, no links, no emphasis, no headings), for the Markdown writer
(``report.markdown_writer``); and model text read into a report's runs (``ModelText``), its ids and URLs
turned into reference numbers in the one citation style."""

from __future__ import annotations

import re
from collections.abc import Mapping
from urllib.parse import quote, urlsplit

from deepcritical.models import Evidence
from deepcritical.report.citations import LINK_REMOVED, URL, CitationIndex, remove_urls
from deepcritical.report.document import Inline, cites, runs
from deepcritical.text import collapse_whitespace

# Inline specials (``<`` opens HTML and autolinks; ``&`` only where it would start an entity such as
# ``&lt;``); the block-level ones (#, -, +, >, =, "1.") matter only at the start of a line.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~<]|&(?=#?\w+;))")
# An id written bare in model text (pmid:…, pmcid:…, doi:…), which the renderer turns into a reference number.
CITED_ID = re.compile(r"\b(?:pmid|pmcid|doi):[^\s,;()\[\]]*[^\s,;()\[\].]", re.IGNORECASE)
_LINE_START = re.compile(r"^(?:([#+\-=>])|(\d+)([.)]))")


def defang(text: str) -> str:
    """Make URL-like text unlinkable (``http[:]//``, ``www[.]``) so no renderer turns it into a link."""

    def neutral(match: re.Match[str]) -> str:
        return match.group(0).replace("://", "[:]//", 1).replace("www.", "www[.]", 1)

    return URL.sub(neutral, text)


def escape(text: str) -> str:
    """Plain, inert text on one line, escaped once, for Markdown: its specials backslash-escaped (``<`` as
    ``\\<``, so ``p<0.01`` reads as itself in the file, in MCP text and on the page; no HTML entity, which
    a reader of the Markdown or a model would see as ``p&lt;0.01``). HTML escaping is the HTML renderer's."""
    return escape_line_start(escape_inline(collapse_whitespace(text)))


def escape_inline(text: str) -> str:
    """``escape`` for a run inside a line: its specials escaped, its white space one space (kept at its ends,
    where it separates it from the next run); the start of a line is the block's (``escape_line_start``)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", re.sub(r"\s+", " ", defang(text)))


def escape_line_start(text: str) -> str:
    """A line's opening "#", "-", "+", "=", ">" or "1." escaped, so it starts no block."""
    return _LINE_START.sub(lambda m: f"\\{m.group(1)}" if m.group(1) else f"{m.group(2)}\\{m.group(3)}", text)


def source_error(name: str, error: str) -> str:
    """A source's error without its leading "<name>: ", for where the name is already shown."""
    prefix = f"{name}:"
    return error[len(prefix) :].strip() if error.startswith(prefix) else error


# While model text is read, each citation is a marker; runs of markers become one "[1, 4]" group at the end.
_CITE = "\ue000{}\ue001"
_DROPPED = "\ue002"
_MARKS = r"(?:\ue000\d+\ue001|\ue002)"
_GROUP = re.compile(rf"(\(\s*)?({_MARKS}(?:\s*(?:,|;|and)?\s*{_MARKS})*)(\s*\))?")
_GROUPED = re.compile(r"\ue003(\d+)\ue004")  # a group's place in the text, until the text is split into runs
_SPACE_BEFORE_PUNCTUATION = re.compile(r" +(?=[.,;:])")
_MARKERS = re.compile("[\ue000-\ue004]")  # the characters above, dropped from the text first: they are ours


class ModelText:
    """Reads text written by a model or by code into runs: every id or URL of a numbered item becomes its
    reference number, one citation group per run of citations ("(pmid:1, [2])" -> "[4, 2]"); an id of an item
    the report does not number, or of nothing collected, is removed, as is any other URL. No raw id is left
    beside a number."""

    def __init__(self, evidence: Mapping[str, Evidence], numbers: Mapping[str, int]) -> None:
        self._index = CitationIndex(evidence)
        self._numbers = numbers

    def _mark(self, evidence_id: str | None) -> str:
        if evidence_id is not None and evidence_id in self._numbers:
            return _CITE.format(self._numbers[evidence_id])
        return _DROPPED

    def _url(self, url: str) -> str:
        evidence_id = self._index.resolve(url)
        return LINK_REMOVED if evidence_id is None else self._mark(evidence_id)

    def _id(self, match: re.Match[str]) -> str:
        return self._mark(self._index.resolve(match.group(0)))

    def __call__(self, text: str) -> list[Inline]:
        marked = CITED_ID.sub(self._id, remove_urls(_MARKERS.sub("", text), self._url))
        groups: list[list[Inline]] = []

        def group(match: re.Match[str]) -> str:
            numbers = [int(number) for number in re.findall(r"\ue000(\d+)\ue001", match.group(2))]
            groups.append(cites(numbers))
            cited = f"\ue003{len(groups) - 1}\ue004" if numbers else ""
            opened, closed = match.group(1), match.group(3)
            if opened and closed:  # the brackets held only citations
                return f" {cited}" if cited else ""
            return f"{opened or ''}{cited}{closed or ''}"

        flat = _SPACE_BEFORE_PUNCTUATION.sub("", collapse_whitespace(_GROUP.sub(group, marked)))
        parts: list[str | list[Inline]] = []
        for piece, at in zip(_GROUPED.split(flat)[::2], [*_GROUPED.findall(flat), None], strict=True):
            parts += [piece, groups[int(at)]] if at is not None else [piece]
        return runs(*parts)


def mentioned_ids(text: str, evidence: Mapping[str, Evidence]) -> list[str]:
    """The collected items a text names by id or URL, in order."""
    index = CitationIndex(evidence)
    found: list[str | None] = []

    def on_url(url: str) -> str:
        found.append(index.resolve(url))
        return ""

    found += [index.resolve(match.group(0)) for match in CITED_ID.finditer(remove_urls(text, on_url))]
    return [i for i in dict.fromkeys(found) if i is not None]


def code_span(text: str) -> str:
    """An inline code span that holds ``text`` verbatim, whatever backticks it contains."""
    flat = collapse_whitespace(text)
    runs = [len(run) for run in re.findall(r"`+", flat)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def safe_link(url: str) -> str | None:
    """An http(s) URL percent-encoded so it cannot end a Markdown link early, or None."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return quote(url.strip(), safe=":/?#@!$&'*+,;=%-._~")
