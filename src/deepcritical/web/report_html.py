"""The report as HTML for the page. A run folder has its report as a document (``report.json``), which
``report.html`` writes as HTML beside the Markdown writer: ``run_report_html`` uses it. A run folder written
before documents existed has only ``report.md``: ``report_html`` renders that Markdown with markdown-it, as the
page always did. The Markdown escapes every outside string already (``report.markdown.escape``); this renderer is
the second wall: raw HTML in the source is shown as text,
images are off but the run's own figures, and a link is kept only when it goes to http(s), to a reference of
the same report or to one of the run's figure files. Citation numbers (``[3]``, ``[1, 2]``) become links to
their entry in the reference list. A figure (``prisma.svg``, ``forest-N.svg``) becomes an ``<img>`` with no
source but ``data-run-file``: the page fetches it with its token (app.js). The study-results table is marked
``sortable``."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path

import structlog
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from pydantic import ValidationError

from deepcritical.report.document import REPORT_DOCUMENT_FILE, RUN_FIGURE, ReportDocument
from deepcritical.report.html import http_url, reference_id, to_html

logger = structlog.get_logger(__name__)
REFERENCES_HEADING = "References"
CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
REFERENCE_ANCHOR = re.compile(r"^#ref-\d+$")
SORTABLE_HEADING = "Study results"


class _ReportMarkdown(MarkdownIt):
    def __init__(self) -> None:
        super().__init__("commonmark", {"html": False, "linkify": False, "typographer": False})
        self.enable("table")  # the strength-of-evidence table (GFM pipes), not rows of raw "|" characters
        self.core.ruler.push("references", _link_references)
        self.core.ruler.push("figures", _run_figures)

    def validateLink(self, url: str) -> bool:  # noqa: N802 (markdown-it's name)
        return bool(REFERENCE_ANCHOR.match(url) or RUN_FIGURE.match(url)) or http_url(url)


def _inline_text(tokens: Sequence[Token], index: int) -> str:
    """The text of the inline token following a block opener at ``index``."""
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    return following.content.strip() if following is not None and following.type == "inline" else ""


def _references_range(tokens: list[Token]) -> tuple[int, int] | None:
    """Where the reference list (the ordered list after the "References" heading) starts and ends."""
    heading = next(
        (
            index
            for index, token in enumerate(tokens)
            if token.type == "heading_open" and _inline_text(tokens, index) == REFERENCES_HEADING
        ),
        None,
    )
    if heading is None:
        return None
    start = next((i for i in range(heading, len(tokens)) if tokens[i].type == "ordered_list_open"), None)
    if start is None:
        return None
    depth = 0
    for index in range(start, len(tokens)):
        kind = tokens[index].type
        depth += 1 if kind.endswith("_list_open") else -1 if kind.endswith("_list_close") else 0
        if depth == 0:
            return start, index
    return start, len(tokens) - 1


def _cited(text: str, references: int) -> list[Token]:
    """``text`` split into text tokens and links, each citation number within the list linked."""
    out: list[Token] = []
    cursor = 0

    def add_text(content: str) -> None:
        if content:
            token = Token("text", "", 0)
            token.content = content
            out.append(token)

    for match in CITATION.finditer(text):
        numbers = [int(part) for part in match.group(1).split(",")]
        if not all(1 <= number <= references for number in numbers):
            continue
        add_text(text[cursor : match.start()] + "[")
        for position, number in enumerate(numbers):
            if position:
                add_text(", ")
            opening = Token("link_open", "a", 1)
            opening.attrs = {"href": f"#{reference_id(number)}", "class": "cite"}
            closing = Token("link_close", "a", -1)
            label = Token("text", "", 0)
            label.content = str(number)
            out += [opening, label, closing]
        add_text("]")
        cursor = match.end()
    add_text(text[cursor:])
    return out


def _link_references(state: StateCore) -> None:
    tokens = state.tokens
    span = _references_range(tokens)
    references = 0
    if span is not None:
        start, end = span
        first = int(tokens[start].attrs.get("start", 1))
        for token in tokens[start : end + 1]:
            if token.type == "list_item_open" and token.level == tokens[start].level + 1:
                token.attrs["id"] = reference_id(first + references)
                references += 1
    for index, block in enumerate(tokens):
        if block.type != "inline" or block.children is None:
            continue
        if span is not None and span[0] <= index <= span[1]:
            continue  # the references themselves cite nothing
        children: list[Token] = []
        for child in block.children:
            if child.type == "text" and references:
                children += _cited(child.content, references)
            else:
                if child.type == "link_open" and not str(child.attrs.get("href", "")).startswith("#"):
                    child.attrs.update({"rel": "noopener noreferrer nofollow", "target": "_blank"})
                children.append(child)
        block.children = children
    if span is not None:  # reference links open outside the page too
        for block in tokens[span[0] : span[1] + 1]:
            for child in block.children or ():
                if child.type == "link_open":
                    child.attrs.update({"rel": "noopener noreferrer nofollow", "target": "_blank"})


def _run_figures(state: StateCore) -> None:
    """Images only of the run's figures, loaded by the page (``data-run-file``); a link to a figure file
    downloads it from the run (``files`` in the environment, else it is dropped); the study-results table
    is sortable."""
    files = state.env.get("files")
    tokens = state.tokens
    for index, block in enumerate(tokens):
        if block.type == "table_open" and _heading_before(tokens, index) == SORTABLE_HEADING:
            block.attrs["class"] = "sortable"
        if block.type != "inline" or block.children is None:
            continue
        children: list[Token] = []
        for child in block.children:
            if child.type == "image":
                name = str(child.attrs.get("src", ""))
                if not RUN_FIGURE.match(name):  # an outside image is only a link to it, as before images
                    children += _as_link(child, name)
                    continue
                image = Token("html_inline", "", 0)
                alt = html.escape(child.content, quote=True)
                image.content = f'<img class="figure" data-run-file="{name}" alt="{alt}">'
                children.append(image)
                continue
            if child.type == "link_open" and RUN_FIGURE.match(str(child.attrs.get("href", ""))):
                name = str(child.attrs["href"])
                if files is not None:
                    child.attrs = {"href": f"{files}{name}", "data-run-file": name, "download": name}
                else:
                    child.attrs = {"data-run-file": name}
            children.append(child)
        block.children = children


def _as_link(image: Token, url: str) -> list[Token]:
    opening = Token("link_open", "a", 1)
    opening.attrs = {"href": url, "rel": "noopener noreferrer nofollow", "target": "_blank"}
    label = Token("text", "", 0)
    label.content = image.content
    return [opening, label, Token("link_close", "a", -1)]


def _heading_before(tokens: Sequence[Token], index: int) -> str:
    """The text of the last heading before ``index``."""
    for at in range(index - 1, -1, -1):
        if tokens[at].type == "heading_open":
            return _inline_text(tokens, at)
    return ""


_RENDERER = _ReportMarkdown()


def report_html(markdown: str, files: str | None = None) -> str:
    """A report's Markdown as an HTML fragment, safe to insert into the page; ``files``: where the run's files
    are served (``/api/runs/ID/``), for its figure links. Only for a run folder without ``report.json``."""
    return str(_RENDERER.render(markdown, {"files": files}))


def folder_report_html(folder: Path, files: str | None = None) -> str:
    """The HTML of the report in a finished run's folder: its document written by ``report.html``; the
    fallback for a folder written before report documents (or with one this version cannot read) is its
    ``report.md`` through ``report_html``."""
    path = folder / REPORT_DOCUMENT_FILE
    if path.is_file():
        try:
            return to_html(ReportDocument.model_validate_json(path.read_bytes()), files)
        except ValidationError as error:
            logger.warning("report_document_unreadable", run=folder.name, errors=error.error_count())
    return report_html((folder / "report.md").read_text(encoding="utf-8"), files)
