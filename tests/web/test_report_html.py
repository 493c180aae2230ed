"""The report's HTML: outside text stays text, links go to http(s) or to a reference, citations link; the
page's HTML (written from the report's document) says what report.md says."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from deepcritical.config import load_settings
from deepcritical.demo.records import load_corpus
from deepcritical.models import Citation, Evidence
from deepcritical.outputs import Finding, ResearchReport
from deepcritical.report.html import to_html
from deepcritical.report.render import RenderContext, render_markdown
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.setup import assemble, http_client
from deepcritical.web.report_html import report_html

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
    """A report rendered by the real renderer from evidence whose every field is hostile."""
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
    return render_markdown(report, {item.id: item for item in items}, context)


def test_hostile_evidence_renders_as_text_with_no_active_markup() -> None:
    html = report_html(hostile_report())
    tags = Elements(html).tags
    table = {"table", "thead", "tbody", "tr", "th", "td"}  # the strength-of-evidence table
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


def test_only_the_runs_own_figures_become_images_and_their_links_download_from_the_run() -> None:
    markdown = (
        "## Study flow\n\n![flow <b>x</b>](prisma.svg) ![out](https://evil.example/x.svg) ![up](../run.json) "
        "![js](javascript:alert(1))\n\n[forest-2.png](forest-2.png) [up](../secret.svg)\n\n"
        "## Study results\n\n| Study | n |\n|---|---|\n| \\[1\\] | 20 |\n\n## Other\n\n| a |\n|---|\n| b |\n"
    )
    html = report_html(markdown, files="/api/runs/research-x/")
    tags = Elements(html).tags
    images = [attrs for tag, attrs in tags if tag == "img"]
    assert images == [{"class": "figure", "data-run-file": "prisma.svg", "alt": "flow <b>x</b>"}]  # no src
    links = [attrs for tag, attrs in tags if tag == "a"]
    assert links == [  # an outside image is a link to it; a path out of the run folder is nothing
        {"href": "https://evil.example/x.svg", "rel": "noopener noreferrer nofollow", "target": "_blank"},
        {"href": "/api/runs/research-x/forest-2.png", "data-run-file": "forest-2.png", "download": "forest-2.png"},
    ]
    assert [attrs.get("class") for tag, attrs in tags if tag == "table"] == ["sortable", None]
    # Without the run's address a figure link downloads nothing
    unserved = [attrs for tag, attrs in Elements(report_html(markdown)).tags if tag == "a" and "data-run-file" in attrs]
    assert unserved == [{"data-run-file": "forest-2.png"}]


def test_raw_html_and_bad_links_in_the_markdown_itself_stay_inert() -> None:
    markdown = (
        "# Title <script>alert(1)</script>\n\n<img src=x onerror=alert(2)>\n\n"
        "[a](javascript:alert(3)) [b](data:text/html,<script>alert(4)</script>) [c](vbscript:x) "
        "![d](https://example.org/pixel.png) [e](//evil.example/) [f](https://example.org/ok)\n"
    )
    tags = Elements(report_html(markdown)).tags
    assert [tag for tag, _ in tags] == ["h1", "p", "p", "a", "a"]  # no img: an image is only a link
    assert [attrs["href"] for _, attrs in tags[-2:]] == ["https://example.org/pixel.png", "https://example.org/ok"]
    assert tags[-1][1]["rel"] == "noopener noreferrer nofollow"


def test_citations_link_to_their_reference_and_references_carry_anchors() -> None:
    markdown = (
        "# Q\n\n## Key findings\n\n- One \\[1\\] and both \\[1, 2\\]; not a reference \\[7\\].\n\n"
        "## References\n\n1. First. [Link](https://example.org/1)\n2. Second \\[1\\]. (no web link)\n"
    )
    tags = Elements(report_html(markdown)).tags
    cites = [attrs["href"] for tag, attrs in tags if tag == "a" and attrs.get("class") == "cite"]
    assert cites == ["#ref-1", "#ref-1", "#ref-2"]  # [7] is no reference of this report: left as text
    anchors = [attrs["id"] for tag, attrs in tags if tag == "li" and "id" in attrs]
    assert anchors == ["ref-1", "ref-2"]
    assert ("a", {"href": "https://example.org/1", "rel": "noopener noreferrer nofollow", "target": "_blank"}) in tags


def test_the_strength_of_evidence_table_is_a_table_not_raw_pipes() -> None:
    """The page showed the strength table as rows of ``|`` characters."""
    from web.fakes import outcome_for

    markdown = outcome_for("Does metformin help?", "research-20240101-000000-abcdef").markdown
    assert "| Design |" in markdown
    html = report_html(markdown)
    assert "<table>" in html
    assert "<th>Design</th>" in html
    assert "|---|" not in html
    assert "| Design |" not in html
    assert "style=" not in html  # the page's CSP allows no inline style


def page_of(html: str) -> tuple[list[str], list[str], str]:
    """The headings, the citation groups ("[1, 3]") and the whole text of a report's HTML."""
    from stages.test_report_writers import Page

    page = Page(html)
    headings = [data for tag, data in page.texts if tag in ("h1", "h2", "h3")]
    text = page.text()
    return headings, re.findall(r"\[\d+(?:, [^\]\[]*)?(?:; \d+[^\]\[]*)*\]", text), text


@pytest.mark.parametrize("question", [topic.question for topic in load_corpus().topics])
async def test_each_demo_report_says_the_same_on_the_page_as_in_report_md(question: str, tmp_path: Path) -> None:
    """Parity: the page's HTML (the document's) and report.md (rendered as the page rendered it before) have
    the same sections in the same order, the same citations and the same text; the page links every
    citation, also those that name a passage's place ("[8, Results]"), which the Markdown path left unlinked."""
    settings = load_settings(demo_mode=True, home=tmp_path / "home")
    async with http_client(settings) as client:
        outcome = await Orchestrator(assemble(settings, client)).research(question)
    assert outcome.document is not None
    html = to_html(outcome.document)
    headings, citations, text = page_of(html)
    assert (headings, citations, text) == page_of(report_html(outcome.markdown))
    assert headings[0] == question
    assert headings[1] in ("Verdict", "Candidate interventions")  # an open question has candidates, no yes or no
    assert headings[-1] == "References"
    assert len(citations) >= 5
    references = len([tag for tag, attrs in Elements(html).tags if tag == "li" and "id" in attrs])
    cited = re.findall(r"\d+", " ".join(citations))
    linked = [attrs["href"] for tag, attrs in Elements(html).tags if tag == "a" and attrs.get("class") == "cite"]
    assert linked == [f"#ref-{number}" for number in cited if 1 <= int(number) <= references]
