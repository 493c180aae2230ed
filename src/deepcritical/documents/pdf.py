"""PDF through pypdfium2 (PDFium, Google's PDF engine, under Apache-2.0/BSD-3): text page by page, pages
kept, paragraphs and section headings recovered from the lines.

PDFium was chosen over pypdf for its text quality and speed (it is the engine of Chrome's viewer) and
over PyMuPDF for its licence (PyMuPDF is AGPL, which would bind every deployment of DeepCritical).

A PDF carries no structure a reader can trust, so headings are recognised from the lines themselves: a
line that is a usual section name ("Methods", "2. Results", "IV. DISCUSSION") or a short numbered
title ("3.1 Study population") starts a section; a numbered sub-heading ("3.1 …") a subsection. The
reference list (after "References") goes to the document's references, not its passages.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from deepcritical.documents.model import Block, DocumentMeta, ParsedDocument, doi_in
from deepcritical.errors import DocumentError
from deepcritical.text import collapse_whitespace

if TYPE_CHECKING:  # PDFium loads when a PDF is read, not with every run that might read one
    import pypdfium2

_SECTION_NAMES = (
    r"abstract|summary|introduction|background|methods?|materials and methods|methods and materials"
    r"|patients and methods|subjects and methods|methodology|study design|statistical analysis|results"
    r"|results and discussion|discussion|conclusions?|limitations|related work|experiments?"
    r"|experimental setup|evaluation|outcomes|references|bibliography|literature cited|acknowledge?ments?"
    r"|funding|conflicts? of interests?|competing interests|declarations|appendix(?: [a-z0-9]+)?"
    r"|supplementary (?:material|information)|author contributions|data availability"
)
_NUMBER = r"(?:(?P<number>\d{1,2}(?:\.\d{1,2}){0,3})\.?|(?P<roman>[IVX]{1,5})\.)"
# "Methods", "2 Methods", "2. Methods:", "IV. DISCUSSION", "Appendix A"
_NAMED_HEADING = re.compile(rf"^(?:{_NUMBER}\s+)?(?P<title>{_SECTION_NAMES})\s*:?$", re.IGNORECASE)
# "3.1 Study population": a number, then a capitalised title of at most 8 words without digits or a full stop.
_NUMBERED_HEADING = re.compile(rf"^{_NUMBER}\s+(?P<title>[A-Z][A-Za-z'’,:&/()\- ]{{1,70}})$")
_REFERENCES = re.compile(r"^(?:references|bibliography|literature cited)$", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?:]['\")\]]?$")
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Heading:
    title: str
    top_level: bool


def heading(line: str) -> Heading | None:
    """The section heading ``line`` is, or None for an ordinary line."""
    text = line.strip()
    if not text or len(text) > 80:
        return None
    if match := _NAMED_HEADING.match(text):
        number = match.group("number")
        return Heading(_titled(match.group("title")), top_level=number is None or "." not in number)
    match = _NUMBERED_HEADING.match(text)
    if match and len(match.group("title").split()) <= 8 and not match.group("title").rstrip().endswith(","):
        number = match.group("number")
        return Heading(match.group("title").strip(), top_level=number is None or "." not in number)
    return None


def _titled(title: str) -> str:
    """'DISCUSSION' as 'Discussion'; a title in mixed case as written."""
    return title.capitalize() if title.isupper() or title.islower() else title


def _joined_lines(lines: list[str]) -> str:
    """Lines of one paragraph as one text: a hyphen that breaks a word at a line end is removed."""
    text = ""
    for line in lines:
        line = line.strip()
        if not text:
            text = line
        elif text.endswith("-") and line[:1].islower():
            text = text[:-1] + line
        else:
            text += " " + line
    return text


@dataclass
class _Reader:
    """Lines in reading order into blocks, the current section carried across pages."""

    section: str | None = None
    subsection: str | None = None
    in_references: bool = False
    blocks: list[Block] = field(default_factory=list)
    references: list[str] = field(default_factory=list)

    def page(self, number: int, text: str) -> None:
        # PDFium marks a word hyphenated at a line end with U+FFFE (U+0002 in older builds) and no line break.
        lines = [line.replace("\ufffe", "").replace("\x02", "") for line in _LINE_BREAKS.split(text)]
        lines = [line for line in lines if line.strip()]
        if not lines:
            return
        typical = statistics.median(len(line.strip()) for line in lines)
        paragraph: list[str] = []
        for line in lines:
            found = heading(line)
            if found is not None:
                self._flush(paragraph, number)
                paragraph = []
                self._enter(found)
                continue
            paragraph.append(line)
            stripped = line.strip()
            if _SENTENCE_END.search(stripped) and len(stripped) < 0.8 * typical:
                self._flush(paragraph, number)
                paragraph = []
        self._flush(paragraph, number)

    def _enter(self, found: Heading) -> None:
        if found.top_level:
            self.in_references = bool(_REFERENCES.match(found.title))
            self.section, self.subsection = found.title, None
        else:
            self.subsection = found.title

    def _flush(self, lines: list[str], page: int) -> None:
        text = _joined_lines(lines)
        if not text:
            return
        if self.in_references:
            self.references.append(text)
        else:
            self.blocks.append(Block(text=text, section=self.section, subsection=self.subsection, page=page))


def _pages(document: pypdfium2.PdfDocument, deadline: float) -> Iterator[tuple[int, str]]:
    for index in range(len(document)):
        if time.monotonic() > deadline:
            raise DocumentError(f"reading took longer than the parse limit (stopped at page {index + 1})")
        page = document[index]
        try:
            textpage = page.get_textpage()
            try:
                yield index + 1, textpage.get_text_range()
            finally:
                textpage.close()
        finally:
            page.close()


def _title(metadata: dict[str, str], first_page: str) -> str:
    """The document's title: the PDF's own when it reads as one (two words or more), else its first line."""
    own = collapse_whitespace(metadata.get("Title", ""))
    if len(own.split()) >= 2:
        return own
    first = next((line.strip() for line in _LINE_BREAKS.split(first_page) if line.strip()), "")
    return first[:300]


def parse_pdf(data: bytes, *, max_pages: int, max_seconds: float) -> ParsedDocument:
    """A PDF's text with its pages, sections and paragraphs; raises DocumentError for a PDF that cannot be
    read (broken, encrypted, over ``max_pages``, slower than ``max_seconds``, or without a text layer)."""
    import pypdfium2

    deadline = time.monotonic() + max_seconds
    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as error:
        raise DocumentError(f"not a readable PDF ({error})") from None
    try:
        pages = len(document)
        if pages > max_pages:
            raise DocumentError(f"{pages} pages, more than the limit of {max_pages} (DEEPCRITICAL_LIBRARY_MAX_PAGES)")
        metadata = document.get_metadata_dict(skip_empty=True)
        reader = _Reader()
        first_pages = []
        for number, text in _pages(document, deadline):
            if number <= 2:
                first_pages.append(text)
            reader.page(number, text)
    finally:
        document.close()
    if not reader.blocks:
        raise DocumentError("no text layer (a scanned PDF needs OCR first)")
    meta = DocumentMeta(
        title=_title(metadata, first_pages[0] if first_pages else ""),
        authors=tuple(part.strip() for part in re.split(r"[;,]| and ", metadata.get("Author", "")) if part.strip()),
        doi=doi_in(" ".join(first_pages)),
        keywords=tuple(part.strip() for part in metadata.get("Keywords", "").split(",") if part.strip()),
    )
    return ParsedDocument(
        format="pdf", meta=meta, blocks=tuple(reader.blocks), references=tuple(reader.references), pages=pages
    )
