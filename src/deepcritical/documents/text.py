"""Markdown (markdown-it-py, the parser the project renders reports with), plain text and HTML (the main
text by trafilatura, Apache-2.0, the best-scoring open main-text extractor in published comparisons,
then read as its Markdown so headings become sections).
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

from deepcritical.documents.model import Block, DocumentFormat, DocumentMeta, ParsedDocument, doi_in
from deepcritical.errors import DocumentError
from deepcritical.text import collapse_whitespace

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_PARAGRAPH_TOKENS = frozenset({"paragraph_open", "th_open", "td_open"})


def decoded(data: bytes) -> str:
    """UTF-8 text (a byte-order mark dropped); a file in another encoding is read as Latin-1 rather than
    refused, since every byte sequence is valid Latin-1 and most of the text survives."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _inline_text(token: object) -> str:
    """The readable text of an inline token: emphasis and links dropped, line breaks as spaces."""
    parts = []
    for piece in getattr(token, "children", None) or []:
        if piece.type in ("text", "code_inline", "html_inline"):
            parts.append(piece.content)
        elif piece.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return collapse_whitespace("".join(parts))


@cache
def _markdown() -> MarkdownIt:
    """The parser, made with the first Markdown document: a run that reads none does not import it."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def markdown_document(text: str, form: DocumentFormat, meta: DocumentMeta | None = None) -> ParsedDocument:
    """Markdown as blocks: the first level-1 heading (when it opens the text) is the title, the shallowest
    remaining level starts sections, deeper levels subsections."""
    tokens = _markdown().parse(text)
    headings: list[tuple[int, str]] = []  # (level, title) in order, for choosing the section level
    items: list[tuple[str, int, str]] = []  # ("heading", level, text) or ("text", 0, text)
    for position, token in enumerate(tokens):
        if token.type == "heading_open":
            title = _inline_text(tokens[position + 1])
            level = int(token.tag[1:])
            headings.append((level, title))
            items.append(("heading", level, title))
        elif token.type in _PARAGRAPH_TOKENS and position + 1 < len(tokens):
            if content := _inline_text(tokens[position + 1]):
                items.append(("text", 0, content))
        elif token.type in ("fence", "code_block") and token.content.strip():
            items.append(("text", 0, collapse_whitespace(token.content)))
    title = ""
    if items and items[0][0] == "heading" and items[0][1] == 1:
        title = items.pop(0)[2]
        headings.pop(0)
    top = min((level for level, _ in headings), default=0)
    section: str | None = None
    subsection: str | None = None
    blocks = [Block(text=title, section="Title", kind="title")] if title else []
    for kind, level, content in items:
        if kind == "heading":
            if level <= top:
                section, subsection = content, None
            else:
                subsection = content
        else:
            blocks.append(Block(text=content, section=section, subsection=subsection))
    if not any(block.kind != "title" for block in blocks):
        raise DocumentError("no text in the file")
    given = meta or DocumentMeta()
    if not given.title:
        given = given.model_copy(update={"title": title or blocks[0].text[:200]})
    if given.doi is None and (doi := doi_in(text[:5000])):
        given = given.model_copy(update={"doi": doi})
    return ParsedDocument(format=form, meta=given, blocks=tuple(blocks))


def parse_markdown(data: bytes) -> ParsedDocument:
    return markdown_document(decoded(data), "markdown")


def parse_text(data: bytes) -> ParsedDocument:
    """Plain text: paragraphs at blank lines, the first line as the title."""
    text = decoded(data).replace("\r\n", "\n")
    paragraphs = [collapse_whitespace(part) for part in _PARAGRAPH_BREAK.split(text) if part.strip()]
    if not paragraphs:
        raise DocumentError("no text in the file")
    first_line = next(line.strip() for line in text.splitlines() if line.strip())
    meta = DocumentMeta(title=first_line[:200], doi=doi_in(text[:5000]))
    return ParsedDocument(format="text", meta=meta, blocks=tuple(Block(text=part) for part in paragraphs))


def parse_html(data: bytes) -> ParsedDocument:
    """An HTML page's main text (navigation, footers and ads left out) with its headings as sections."""
    import trafilatura  # loaded by the first HTML page, not by every run that might read one

    html = decoded(data)
    extracted = trafilatura.extract(html, output_format="markdown", include_tables=True, include_comments=False)
    if not extracted or not extracted.strip():
        raise DocumentError("no main text found in the HTML page")
    found = trafilatura.extract_metadata(html)
    meta = (
        DocumentMeta()
        if found is None
        else DocumentMeta(
            title=collapse_whitespace(found.title or ""),
            authors=tuple(a.strip() for a in (found.author or "").split(";") if a.strip()),
            date=found.date or "Unknown",
            url=found.url or None,
        )
    )
    return markdown_document(extracted, "html", meta)
