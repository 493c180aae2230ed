"""The report's HTML: outside text stays text, links go to http(s) or to a reference, citations link; the
page's HTML (written from the report's document) says what report.md says; a folder of an earlier version says
how to upgrade it."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from deepcritical.config import load_settings
from deepcritical.demo.records import load_corpus
from deepcritical.models import Citation, Evidence
from deepcritical.outputs import Finding, ResearchReport
from deepcritical.report.html import to_html
from deepcritical.report.render import RenderContext, build_document
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.setup import assemble, http_client
from deepcritical.run.upgrade import upgrade_folder
from deepcritical.web.report_html import folder_report_html
from helpers.parsed_html import Page

# How a Markdown reader (GitHub, an editor) shows report.md.
MARKDOWN = MarkdownIt("commonmark", {"html": False}).enable("table")
HOSTILE = "<script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3))"


class Elements(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def hostile_report() -> str:
    """A report's HTML written by the real writers from evidence whose every field is hostile."""
    items = [
        Evidence(
            # It names the question's intervention, so that it is on the topic and cited in the table.
            content=f"Metformin {HOSTILE}",
            citation=Citation(
                source="web", title=f"Study {HOSTILE}", url="javascript:alert(4)", authors=("<b onmouseover=x>",)
            ),
        ),
        Evidence(
            content="Metformin users had less dementia.",
            citation=Citation(source="web", title="Cohort", url='https://example.org/a"onmouseover="alert(5)'),
        ),
    ]
    ids = [item.id for item in items]
    report = ResearchReport(
        question=f"Does metformin help? {HOSTILE}",
        answer_brief=f"Perhaps {HOSTILE} https://evil.example/x",
        key_findings=[Finding(statement=f"Finding {HOSTILE}", evidence_ids=ids)],
        references=ids,
    )
    context = RenderContext(demo=True, stop_reason="sufficient", run_id="research-x")
    return to_html(build_document(report, {item.id: item for item in items}, context))


def test_hostile_evidence_renders_as_text_with_no_active_markup() -> None:
    html = hostile_report()
    tags = Elements(html).tags
    table = {"table", "thead", "tbody", "tr", "th", "td", "span"}  # the strength-of-evidence table, a span a cell
    assert {tag for tag, _ in tags} <= {
        "h1",
        "h2",
        "p",
        "ul",
        "ol",
        "li",
        "a",
        "code",
        "em",
        "strong",
        "blockquote",
        "img",  # the run's own flow diagram, below
        "div",  # the boxes a table and a figure scroll sideways in, on a narrow page
    } | table
    assert [attrs for tag, attrs in tags if tag == "img"] == [
        {"class": "figure", "data-run-file": "prisma.svg", "alt": attrs["alt"]} for tag, attrs in tags if tag == "img"
    ]
    assert len([tag for tag, _ in tags if tag == "img"]) == 1
    assert not [attrs for _, attrs in tags if any(name.startswith("on") for name in attrs)]
    hrefs = [attrs["href"] or "" for tag, attrs in tags if tag == "a" and "href" in attrs]
    assert hrefs
    assert all(href.startswith(("#ref-", "https://", "http://")) for href in hrefs)
    assert '"' not in "".join(hrefs)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown, as text


def test_the_strength_of_evidence_table_is_a_table_not_raw_pipes() -> None:
    """The page showed the strength table as rows of ``|`` characters."""
    from helpers.web_fakes import outcome_for

    document = outcome_for("Does metformin help?", "research-20240101-000000-abcdef").document
    assert document is not None
    html = to_html(document)
    assert "<table>" in html
    assert "<th>Design</th>" in html
    assert "|---|" not in html
    assert "style=" not in html  # the page's CSP allows no inline style


def page_of(html: str) -> tuple[list[str], list[str], str]:
    """The headings, the citation groups ("[1, 3]") and the whole text of a report's HTML."""
    page = Page(html)
    headings = [data for tag, data in page.texts if tag in ("h1", "h2", "h3")]
    text = page.text()
    return headings, re.findall(r"\[\d+(?:, [^\]\[]*)?(?:; \d+[^\]\[]*)*\]", text), text


SORTABLE = re.compile(r'<table class="sortable">.*?</table>', re.S)
STUDY_TABLE_MD = re.compile(r"(<h2>Study results</h2>.*?)(<table>.*?</table>)", re.S)
ROW = re.compile(r"<tr>(.*?)</tr>", re.S)


def study_rows(table: str) -> list[dict[str, str]]:
    """Each body row of a study-results table as column name -> text: the page's (each cell names its column, the
    folded ones under "More") or report.md's (by its header)."""
    rows = ROW.findall(table)
    header = [Page(cell).text() for cell in re.findall(r"<th>(.*?)</th>", rows[0], re.S)]
    found = []
    for row in rows[1:]:
        named = re.findall(r'<td data-label="([^"]*)"><span>(.*?)</span></td>|<dt>(.*?)</dt><dd>(.*?)</dd>', row, re.S)
        if named:
            found.append({unescape(label or term): Page(cell or value).text() for label, cell, term, value in named})
        else:
            cells = [Page(cell).text() for cell in re.findall(r"<td>(.*?)</td>", row, re.S)]
            found.append(dict(zip(header, cells, strict=True)))
    return found


@pytest.mark.parametrize("question", [topic.question for topic in load_corpus().topics])
async def test_each_demo_report_says_the_same_on_the_page_as_in_report_md(question: str, tmp_path: Path) -> None:
    """Parity: the page's HTML (the document's) and report.md (as a Markdown reader renders it) have the same
    sections in the same order, the same citations and the same text; the page links every citation, also those
    that name a passage's place ("[8, Results]")."""
    settings = load_settings(demo_mode=True, home=tmp_path / "home")
    async with http_client(settings) as client:
        outcome = await Orchestrator(assemble(settings, client)).research(question)
    assert outcome.document is not None
    html = to_html(outcome.document)
    markdown_html = MARKDOWN.render(outcome.markdown)
    # The study-results table says the same cells, but the page folds two columns into each row's "More".
    page_table, markdown_table = SORTABLE.search(html), STUDY_TABLE_MD.search(markdown_html)
    assert (page_table is None) == (markdown_table is None)
    if page_table is not None and markdown_table is not None:
        assert study_rows(page_table.group()) == study_rows(markdown_table.group(2))
        html = html.replace(page_table.group(), "")
        markdown_html = markdown_html.replace(markdown_table.group(2), "")
    headings, citations, text = page_of(html)
    assert (headings, citations, text) == page_of(markdown_html)
    assert headings[0] == question
    assert headings[1] in ("Verdict", "Candidate interventions")  # an open question has candidates, no yes or no
    assert headings[-1] == "References"
    assert len(citations) >= 5
    references = len([tag for tag, attrs in Elements(html).tags if tag == "li" and "id" in attrs])
    cited = re.findall(r"\d+", " ".join(citations))
    linked = [attrs["href"] for tag, attrs in Elements(html).tags if tag == "a" and attrs.get("class") == "cite"]
    assert linked == [f"#ref-{number}" for number in cited if 1 <= int(number) <= references]


async def test_a_folder_of_an_earlier_version_says_how_to_upgrade_and_the_upgrade_rebuilds_its_report(
    tmp_path: Path,
) -> None:
    settings = load_settings(demo_mode=True, home=tmp_path / "home")
    async with http_client(settings) as client:
        outcome = await Orchestrator(assemble(settings, client)).research("Do statins reduce mortality in sepsis?")
    from deepcritical.run.store import RunStore

    folder = tmp_path / outcome.run_id
    RunStore(folder).write_outputs(outcome)
    (folder / "report.json").unlink()  # as an earlier version left it
    page = folder_report_html(folder)
    assert "deepcritical runs upgrade" in page
    assert "<h1>" not in page
    assert upgrade_folder(folder).result == "upgraded"
    assert (folder / "report.md").read_text(encoding="utf-8") == outcome.markdown  # the record holds all it needs
    assert "<h1>Do statins reduce mortality in sepsis?</h1>" in folder_report_html(folder)
    assert upgrade_folder(folder).result == "current"


def test_an_unreadable_record_is_reported_not_upgraded(tmp_path: Path) -> None:
    folder = tmp_path / "research-20240101-000000-abcdef"
    folder.mkdir()
    (folder / "run.json").write_text("{not json", encoding="utf-8")
    upgraded = upgrade_folder(folder)
    assert upgraded.result == "unreadable"
    assert upgraded.why
    assert not (folder / "report.json").exists()
