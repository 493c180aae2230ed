"""JATS (NXML): PubMed Central's article format, as a file, an ``efetch db=pmc`` answer (a
``pmc-articleset``) or Europe PMC's ``fullTextXML``.

Read with lxml (BSD): front matter (identifiers, title, authors, journal, date, article type, keywords),
the abstract, the body's sections with their titles, paragraphs, figure and table captions (and a
table's cells as rows), the back matter's sections and the reference list. A formula inside a
paragraph becomes its TeX or MathML text in place, and a figure or table inside a paragraph becomes its
own caption block after it, so neither breaks the paragraph's text.

The parser is hardened for untrusted input: no DTD is loaded, no entity is resolved, nothing is
fetched from the network, and a document nested too deep is refused by libxml2's own limits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from lxml import etree

from deepcritical.documents.model import (
    Block,
    BlockKind,
    DocumentMeta,
    ParsedDocument,
    clean_doi,
    clean_pmcid,
    clean_pmid,
)
from deepcritical.errors import DocumentError
from deepcritical.text import collapse_whitespace

# JATS article-type values that name a PubMed publication type (grading reads the PubMed names).
ARTICLE_TYPES = {
    "review-article": "Review",
    "systematic-review": "Systematic Review",
    "meta-analysis": "Meta-Analysis",
    "case-report": "Case Reports",
    "letter": "Letter",
    "editorial": "Editorial",
    "correction": "Published Erratum",
    "retraction": "Retraction of Publication",
    "research-article": "Journal Article",
    "brief-report": "Journal Article",
    "rapid-communication": "Journal Article",
    "practice-guideline": "Practice Guideline",
}
FLOATS = frozenset(
    {"fig", "fig-group", "table-wrap", "table-wrap-group", "boxed-text", "chem-struct-wrap", "supplementary-material"}
)
FORMULAS = frozenset({"inline-formula", "disp-formula"})
# Inline elements whose text is not part of the sentence.
SKIPPED_INLINE = frozenset({"fn", "graphic", "inline-graphic", "media", "alternatives"})
PARAGRAPHS = frozenset({"p", "disp-quote", "speech", "statement", "def-list", "list", "verse-group"})
MAX_TABLE_CHARS = 4000
# Abstracts that are not the article's summary.
_OTHER_ABSTRACTS = frozenset({"graphical", "teaser", "toc", "author-highlights", "editor-summary"})
_TEX_BODY = re.compile(r"\\begin\{document\}(.*?)\\end\{document\}", re.DOTALL)


def xml_parser() -> etree.XMLParser:
    """An lxml parser safe for untrusted XML: no DTD, no entities resolved, no network."""
    return etree.XMLParser(
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        dtd_validation=False,
        remove_comments=True,
        remove_pis=True,
        huge_tree=False,
    )


def parse_xml(data: bytes, what: str) -> etree._Element:
    try:
        return etree.fromstring(data, parser=xml_parser())
    except etree.XMLSyntaxError as error:
        raise DocumentError(f"not well-formed {what} XML: {error}") from None


def name(element: etree._Element) -> str:
    """The element's tag without its namespace (mml:math is 'math')."""
    return etree.QName(element).localname if isinstance(element.tag, str) else ""


def words(element: etree._Element | None) -> str:
    """Every text node under ``element``, separated by spaces (for a name, a date, a reference)."""
    if element is None:
        return ""
    return collapse_whitespace(" ".join(element.itertext()))


def child(element: etree._Element | None, *path: str) -> etree._Element | None:
    """The first descendant along ``path`` by local names (namespaces ignored)."""
    current = element
    for step in path:
        if current is None:
            return None
        current = next((c for c in current if name(c) == step), None)
    return current


def children(element: etree._Element | None, tag: str) -> list[etree._Element]:
    return [] if element is None else [c for c in element if name(c) == tag]


def formula_text(element: etree._Element) -> str:
    """A formula as text: its TeX (the body of a full TeX document PMC wraps it in), else MathML's text."""
    for node in element.iter():
        if name(node) == "tex-math":
            tex = "".join(node.itertext())
            body = _TEX_BODY.search(tex)
            return collapse_whitespace((body.group(1) if body else tex).replace("$$", " ").replace("$", " "))
    for node in element.iter():
        if name(node) == "math":
            return node.get("alttext") or words(node)
    return ""


@dataclass
class _Inline:
    """A paragraph's text, and the figures and tables found inside it (they become blocks after it)."""

    parts: list[str] = field(default_factory=list)
    floats: list[etree._Element] = field(default_factory=list)

    def read(self, element: etree._Element) -> None:
        self.parts.append(element.text or "")
        for node in element:
            tag = name(node)
            if tag in FLOATS:
                self.floats.append(node)
            elif tag in FORMULAS:
                self.parts.append(f" {formula_text(node)} ")
            elif tag in PARAGRAPHS or tag in ("list-item", "title"):
                self.parts.append(" ")
                self.read(node)
                self.parts.append(" ")
            elif tag and tag not in SKIPPED_INLINE:
                self.read(node)
            self.parts.append(node.tail or "")

    @property
    def text(self) -> str:
        return collapse_whitespace("".join(self.parts))

    @classmethod
    def of(cls, element: etree._Element) -> _Inline:
        reader = cls()
        reader.read(element)
        return reader


def _caption(element: etree._Element) -> str:
    """'Table 2. Baseline characteristics. Values are means.' from a fig or table-wrap."""
    label = words(child(element, "label"))
    caption = child(element, "caption")
    parts = [label] if label else []
    if caption is not None:
        for node in caption:
            if text := _Inline.of(node).text:
                parts.append(text)
    return collapse_whitespace(". ".join(part.rstrip(".") for part in parts if part) + ("." if parts else ""))


def _table_rows(element: etree._Element) -> str:
    """A table's cells, a row per line ('cell | cell'), cut at ``MAX_TABLE_CHARS``."""
    rows: list[str] = []
    for row in element.iter():
        if name(row) != "tr":
            continue
        cells = []
        for cell in row:
            if name(cell) in ("td", "th"):
                cells.append(_Inline.of(cell).text)
        if any(cells):
            rows.append(" | ".join(cells))
    text = "\n".join(rows)
    return text[:MAX_TABLE_CHARS].rsplit("\n", 1)[0] if len(text) > MAX_TABLE_CHARS else text


@dataclass
class _Body:
    """Blocks in reading order, with the section titles above each."""

    blocks: list[Block] = field(default_factory=list)

    def add(self, text: str, section: str | None, subsection: str | None, kind: BlockKind = "paragraph") -> None:
        if text.strip():
            self.blocks.append(Block(text=text, section=section, subsection=subsection, kind=kind))

    def floats(self, elements: Iterable[etree._Element], section: str | None, subsection: str | None) -> None:
        for element in elements:
            tag = name(element)
            if tag in ("fig-group", "table-wrap-group"):
                self.floats([c for c in element if name(c) in FLOATS], section, subsection)
                continue
            if tag == "boxed-text":
                self.section(element, section, subsection)
                continue
            self.add(_caption(element), section, subsection, "caption")
            if tag == "table-wrap":
                for foot in children(element, "table-wrap-foot"):
                    self.add(words(foot), section, subsection, "caption")
                self.add(_table_rows(element), section, subsection, "caption")

    def section(
        self, element: etree._Element, section: str | None, subsection: str | None, *, top: bool = False
    ) -> None:
        """The paragraphs, floats and subsections of ``element`` (a body, a sec, a boxed text); under
        ``top`` (a body, the back matter, an abstract) a section's title is a top-level section."""
        for node in element:
            tag = name(node)
            if tag == "sec":
                title = words(child(node, "title")) or None
                if top:
                    self.section(node, title or section, None)
                else:
                    self.section(node, section, title or subsection)
            elif tag in PARAGRAPHS:
                reader = _Inline.of(node)
                self.add(reader.text, section, subsection)
                self.floats(reader.floats, section, subsection)
            elif tag in FLOATS:
                self.floats([node], section, subsection)
            elif tag == "disp-formula":
                self.add(formula_text(node), section, subsection)


def _date(meta: etree._Element | None) -> str:
    dates = children(meta, "pub-date")
    order = ("epub", "ppub", "pub", "epub-ppub", "collection")

    def rank(element: etree._Element) -> int:
        kind = element.get("pub-type") or element.get("date-type") or ""
        return order.index(kind) if kind in order else len(order)

    for element in sorted(dates, key=rank):
        year = words(child(element, "year"))
        if not re.fullmatch(r"\d{4}", year):
            continue
        parts = [year]
        for part in ("month", "day"):
            value = words(child(element, part))
            if not value.isdigit():
                break
            parts.append(f"{int(value):02d}")
        return "-".join(parts)
    return "Unknown"


def _authors(meta: etree._Element | None) -> tuple[str, ...]:
    names: list[str] = []
    for group in children(meta, "contrib-group"):
        for contrib in children(group, "contrib"):
            if contrib.get("contrib-type", "author") != "author":
                continue
            person = child(contrib, "name")
            if person is not None:
                surname, given = words(child(person, "surname")), words(child(person, "given-names"))
                if surname:
                    names.append(f"{surname} {given}".strip())
            elif collab := words(child(contrib, "collab")):
                names.append(collab)
    return tuple(names)


def _ids(meta: etree._Element | None) -> dict[str, str]:
    return {
        (element.get("pub-id-type") or "").lower(): words(element)
        for element in children(meta, "article-id")
        if element.get("pub-id-type")
    }


def _metadata(article: etree._Element) -> DocumentMeta:
    front = child(article, "front")
    meta = child(front, "article-meta")
    journal_meta = child(front, "journal-meta")
    journal = words(child(journal_meta, "journal-title-group", "journal-title")) or words(
        child(journal_meta, "journal-title")
    )
    ids = _ids(meta)
    article_type = (article.get("article-type") or "").lower()
    keywords = tuple(words(kwd) for group in children(meta, "kwd-group") for kwd in children(group, "kwd"))
    return DocumentMeta(
        title=words(child(meta, "title-group", "article-title")),
        authors=_authors(meta),
        date=_date(meta),
        journal=journal or None,
        doi=clean_doi(ids.get("doi")),
        pmid=clean_pmid(ids.get("pmid")),
        pmcid=clean_pmcid(ids.get("pmcid") or ids.get("pmc")),
        publication_types=(ARTICLE_TYPES[article_type],) if article_type in ARTICLE_TYPES else (),
        keywords=tuple(word for word in keywords if word),
    )


def _abstract_blocks(meta: etree._Element | None) -> Iterator[Block]:
    for abstract in children(meta, "abstract"):
        if (abstract.get("abstract-type") or "").lower() in _OTHER_ABSTRACTS:
            continue
        body = _Body()
        body.section(abstract, "Abstract", None)
        for block in body.blocks:
            yield block.model_copy(update={"kind": "abstract"})


def _references(back: etree._Element | None) -> tuple[str, ...]:
    found: list[str] = []
    for ref_list in (node for node in (back.iter() if back is not None else ()) if name(node) == "ref-list"):
        for ref in children(ref_list, "ref"):
            label = words(child(ref, "label"))
            text = " ".join(words(node) for node in ref if name(node) != "label")
            if text:
                found.append(f"{label} {text}".strip() if label else text)
    return tuple(found)


def article_element(root: etree._Element) -> etree._Element:
    """The ``article`` of a JATS file, an efetch ``pmc-articleset`` or a Europe PMC answer."""
    if name(root) == "article":
        return root
    found = next((node for node in root.iter() if name(node) == "article"), None)
    if found is None:
        raise DocumentError(f"no <article> in this XML (root element <{name(root)}>): not JATS")
    return found


def parse_jats(data: bytes) -> ParsedDocument:
    """One JATS article as a parsed document; raises DocumentError for XML that is not a JATS article."""
    article = article_element(parse_xml(data, "JATS"))
    meta = _metadata(article)
    article_meta = child(child(article, "front"), "article-meta")
    blocks = [Block(text=meta.title, section="Title", kind="title")] if meta.title else []
    blocks.extend(_abstract_blocks(article_meta))
    body = _Body()
    if (body_element := child(article, "body")) is not None:
        # Paragraphs before the first titled section are, by JATS convention, the untitled introduction.
        body.section(body_element, "Introduction", None, top=True)
    has_body = bool(body.blocks)
    back = child(article, "back")
    if back is not None:
        body.section(back, "Back matter", None, top=True)
    if (floats := child(article, "floats-group")) is not None:
        body.floats([node for node in floats if name(node) in FLOATS], "Figures and tables", None)
    blocks.extend(body.blocks)
    if not blocks:
        raise DocumentError("the JATS article has no title, abstract or body text")
    return ParsedDocument(
        format="jats",
        meta=meta,
        blocks=tuple(blocks),
        references=_references(back),
        full_text=has_body,
    )
