"""PDF: real papers (pages kept, sections found, the reference list out of the passages) and files that
must be refused with one clear reason (broken, over the page limit, no text layer)."""

from __future__ import annotations

import io
from pathlib import Path

import pypdfium2
import pytest

from deepcritical.documents.passages import split
from deepcritical.documents.pdf import heading, parse_pdf
from deepcritical.errors import DocumentError


def _page_count(path: Path) -> int:
    document = pypdfium2.PdfDocument(str(path))
    try:
        return len(document)
    finally:
        document.close()


def test_real_pdfs_keep_their_pages_and_offsets(fulltext_data: Path) -> None:
    files = sorted((fulltext_data / "pdf").glob("*.pdf"))
    assert files
    for path in files:
        parsed = parse_pdf(path.read_bytes(), max_pages=1000, max_seconds=60)
        pages = _page_count(path)
        assert parsed.pages == pages
        text, passages = split("doc", parsed.blocks)
        assert passages
        assert {passage.page for passage in passages} <= set(range(1, pages + 1))
        assert [passage.page for passage in passages] == sorted(passage.page or 0 for passage in passages)
        for passage in passages:
            assert text[passage.start : passage.end] == passage.text
            assert passage.place == f"p. {passage.page}"


def test_a_real_paper_has_its_sections_and_its_references_apart(fulltext_data: Path) -> None:
    path = fulltext_data / "pdf" / "pasa.pdf"
    parsed = parse_pdf(path.read_bytes(), max_pages=1000, max_seconds=60)
    _, passages = split("doc", parsed.blocks)
    sections = [passage.section for passage in passages]
    # The usual sections of a paper, in reading order.
    order = [name for name in ("Abstract", "Introduction", "Conclusion") if name in sections]
    assert order == ["Abstract", "Introduction", "Conclusion"]
    assert sections.index("Abstract") < sections.index("Introduction") < sections.index("Conclusion")
    assert "References" not in sections
    assert len(parsed.references) > 10
    assert parsed.meta.title.startswith("PaSa")
    # A word hyphenated at a line end is whole again.
    assert "pa-pers" not in " ".join(passage.text for passage in passages)


@pytest.mark.parametrize(
    ("line", "title", "top"),
    [
        ("2 Methods", "Methods", True),
        ("IV. DISCUSSION", "Discussion", True),
        ("Materials and Methods", "Materials and Methods", True),
        ("3.1 Study population", "Study population", False),
        ("References", "References", True),
    ],
)
def test_heading_lines_are_recognised(line: str, title: str, top: bool) -> None:
    found = heading(line)
    assert found is not None
    assert (found.title, found.top_level) == (title, top)


@pytest.mark.parametrize(
    "line",
    [
        "The results were consistent with earlier work.",
        "2 patients withdrew, 3 were lost to follow-up, and 1 died before the end.",
        "Figure 2: Flow of participants through the trial in each of the eight centres over the years 2010 to 2020",
        "",
    ],
)
def test_ordinary_lines_are_not_headings(line: str) -> None:
    assert heading(line) is None


def _blank_pdf(pages: int) -> bytes:
    document = pypdfium2.PdfDocument.new()
    for _ in range(pages):
        document.new_page(200, 200)
    buffer = io.BytesIO()
    document.save(buffer)
    document.close()
    return buffer.getvalue()


def test_a_pdf_without_text_says_it_needs_ocr() -> None:
    with pytest.raises(DocumentError, match="no text layer"):
        parse_pdf(_blank_pdf(1), max_pages=10, max_seconds=60)


def test_a_pdf_over_the_page_limit_is_refused_before_reading() -> None:
    with pytest.raises(DocumentError, match="3 pages, more than the limit of 2"):
        parse_pdf(_blank_pdf(3), max_pages=2, max_seconds=60)


@pytest.mark.parametrize("data", [b"%PDF-1.7\n garbage", b"not a pdf at all", b"%PDF-1.4\n" + b"\x00" * 100])
def test_a_broken_pdf_is_one_clear_error(data: bytes) -> None:
    with pytest.raises(DocumentError, match="not a readable PDF"):
        parse_pdf(data, max_pages=10, max_seconds=60)
