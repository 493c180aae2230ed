"""Markdown is rendered in code, and everything from outside renders as inert text."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given, settings
from markdown_it import MarkdownIt

from deepcritical.models import Citation, Evidence
from deepcritical.outputs import AspectScore, Assessment, Finding, ResearchReport
from deepcritical.reading.frame import frame_question
from deepcritical.report.markdown import defang
from deepcritical.report.render import (
    DEMO_BANNER,
    RenderContext,
    code_span,
    escape,
    render_markdown,
    safe_link,
)
from helpers.hostile_text import PAPER_TEXT
from helpers.research_fakes import corpus_evidence

HOSTILE_TITLE = '<script>alert("x")</script> [click](http://evil.example) **bold** `code` & <img src=x>'


def test_escape_neutralises_markdown_and_html() -> None:
    out = escape(HOSTILE_TITLE)
    assert re.search(r"(?<!\\)<", out) is None  # no "<" without its backslash
    assert "\\<script>" in out  # a tag cannot open after a backslash
    assert "\\[click\\]" in out  # no link syntax left
    assert "http://" not in out  # not even an autolink
    assert "\\*\\*bold\\*\\*" in out
    assert "\\`code\\`" in out
    assert " & " in out  # a lone "&" is no entity: left as it is


def test_text_from_a_paper_is_escaped_once_and_reads_as_itself() -> None:
    """``p<0.01`` was written ``p&lt;0.01`` into the Markdown (read as such by people and by models over MCP)
    and HTML-escaped once more on the page."""
    assert escape("p<0.01 and HR>1") == "p\\<0.01 and HR>1"
    assert escape("> quoted") == "\\> quoted"
    assert escape("AT&T, &lt; and &#60;") == "AT&T, \\&lt; and \\&#60;"  # entities stay as written
    page = MarkdownIt("commonmark").render(escape("Nausea fell (p<0.01; n=40 & 41) <b>x</b> &amp;"))
    assert page == "<p>Nausea fell (p&lt;0.01; n=40 &amp; 41) &lt;b&gt;x&lt;/b&gt; &amp;amp;</p>\n"


@settings(max_examples=400, deadline=None)
@given(PAPER_TEXT)
def test_any_paper_text_renders_once_as_exactly_itself_and_nothing_more(text: str) -> None:
    """Escaped for Markdown, rendered by a CommonMark renderer that lets raw HTML through (as many viewers
    do): one paragraph of text and no element, whose text is the input's (one line, links defanged), with
    no entity showing (no ``&lt;`` where the paper had ``<``)."""
    expected = " ".join(defang(text).split())
    page = MarkdownIt("commonmark", {"html": True}).render(escape(text))
    parser = _Elements()
    parser.feed(page)
    parser.close()
    assert parser.tags <= {"p"}
    assert "".join(parser.text).strip("\n") == expected


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def test_escape_neutralises_block_syntax_at_the_start() -> None:
    assert escape("# Heading") == "\\# Heading"
    assert escape("- item") == "\\- item"
    assert escape("1. item") == "1\\. item"
    assert escape("line one\n\n# two") == "line one # two"


def test_code_span_and_links_are_safe() -> None:
    assert code_span("url:https://x.org/a`b") == "``url:https://x.org/a`b``"
    assert safe_link("javascript:alert(1)") is None
    assert safe_link("https://x.org/a (b)") == "https://x.org/a%20%28b%29"


def make_report(items: list) -> ResearchReport:  # type: ignore[type-arg]
    return ResearchReport(
        question="Q <b>?</b>",
        answer_brief="Probably [yes](http://evil.example).",
        key_findings=[Finding(statement="**Metformin** helps.", evidence_ids=[items[0].id])],
        contrary_evidence=[Finding(statement="It did not help.", evidence_ids=[items[1].id])],
        limitations=["Few trials."],
        references=[item.id for item in items],
    )


def test_report_renders_hostile_sources_inert_and_links_only_collected_urls() -> None:
    items = [
        corpus_evidence(1, "Text.", title=HOSTILE_TITLE),
        corpus_evidence(
            2, "Text.", source="web", title="[click](http://evil.example)", url="https://real.example.org/a"
        ),
    ]
    score = AspectScore(score=6, reason="See https://judge-invented.example.")
    assessment = Assessment(mechanism=score, clinical=score, safety=score, sufficient=False, confidence=0.4)
    demo = RenderContext(demo=True, stop_reason="max_iterations", run_id="r1", model="demo", assessment=assessment)
    assert render_markdown(make_report(items), {item.id: item for item in items}, demo).splitlines()[2] == DEMO_BANNER
    context = RenderContext(demo=False, stop_reason="max_iterations", run_id="r1", model="m", assessment=assessment)
    markdown = render_markdown(make_report(items), {item.id: item for item in items}, context)
    assert re.search(r"(?<!\\)<(?:script|b)>", markdown) is None  # each "<" escaped: it opens no element
    urls = set(re.findall(r"https?://[^\s)`]+", markdown))
    assert urls == {item.citation.url for item in items}
    links = re.findall(r"(?<!\\)\]\((\S+)\)", markdown)  # an escaped bracket opens no link
    # The collected sources' own URLs, and the run's own flow diagram (its image and its file)
    assert sorted(links) == sorted([*(item.citation.url for item in items), "prisma.svg", "prisma.svg"])
    assert "## Why the run stopped" in markdown
    assert "The iteration budget ran out" in markdown
    assert "- \\*\\*Metformin\\*\\* helps. \\[1\\]" in markdown
    assert "Evidence id: `pmid:10000001`" in markdown


def test_live_report_has_no_demo_banner() -> None:
    items = [corpus_evidence(1, "Text."), corpus_evidence(2, "Text.")]
    context = RenderContext(demo=False, stop_reason="sufficient")
    markdown = render_markdown(make_report(items), {item.id: item for item in items}, context)
    assert "DEMO MODE" not in markdown


def test_a_markdown_renderer_sees_only_text_and_the_collected_links() -> None:
    from markdown_it import MarkdownIt  # rich's own Markdown parser

    items = [
        corpus_evidence(1, "Text.", title=HOSTILE_TITLE),
        corpus_evidence(
            2, "Text.", source="web", title="<a href='http://evil.example'>x</a>", url="https://real.example.org/a"
        ),
    ]
    markdown = render_markdown(make_report(items), {item.id: item for item in items}, RenderContext(False, "error"))
    page = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(markdown)
    assert not re.search(r"<(?:script|b)\b", page)
    # The one image is the run's own flow diagram
    assert (page.count("<img"), re.findall(r'<img src="([^"]*)"', page)) == (1, ["prisma.svg"])
    links = re.findall(r'href="([^"]+)"', page)
    assert sorted(links) == sorted([*(item.citation.url for item in items), "prisma.svg"])
    assert "<strong>Metformin</strong>" not in page


def test_the_question_frame_is_shown_under_the_title_as_inert_text() -> None:
    from markdown_it import MarkdownIt

    question = "Does *vitamin D* reduce falls in older adults?"
    # As a model or a tampered record could give it: markup and a script link in its entities.
    frame = frame_question(question).model_copy(
        update={"intervention": "<img src=x onerror=alert(1)> *vitamin D*", "outcomes": ["[falls](javascript:x)"]}
    )
    items = [corpus_evidence(1, "Text."), corpus_evidence(2, "Text.")]
    report = make_report(items).model_copy(update={"question": question})
    markdown = render_markdown(report, {item.id: item for item in items}, RenderContext(False, "error", frame=frame))
    line = next(line for line in markdown.splitlines() if line.startswith("**Question frame.**"))
    assert "Population: older adults" in line
    page = MarkdownIt("commonmark").render(line)
    assert "<img" not in page
    assert "<em>" not in page
    assert "href" not in page
    assert "Intervention: &lt;img src=x onerror=alert(1)&gt; *vitamin D*" in page
    no_frame = render_markdown(report, {item.id: item for item in items}, RenderContext(False, "error"))
    assert "Question frame" not in no_frame


def test_a_source_problem_names_the_source_once_and_renders_its_error_escaped() -> None:
    report = ResearchReport(question="q?", answer_brief="No evidence.", key_findings=[])
    failed = {"pubmed": "pubmed: cannot reach https://eutils.ncbi.nlm.nih.gov/entrez [errno -2]"}
    markdown = render_markdown(report, {}, RenderContext(demo=False, stop_reason="no_evidence", failed_sources=failed))
    line = next(line for line in markdown.splitlines() if line.startswith("- Source problem"))
    assert line == "- Source problem, pubmed: cannot reach https\\[:\\]//eutils.ncbi.nlm.nih.gov/entrez \\[errno -2\\]"
    assert "pubmed: pubmed" not in markdown
    assert "](" not in line  # the host is shown, defanged, and never becomes a link


def test_a_demo_reports_references_link_to_no_real_page() -> None:
    """Synthetic PMIDs linked to real PubMed pages that answer "not found" (references and warnings)."""
    retracted = Evidence(
        content="Retracted trial.",
        citation=Citation(
            source="pubmed", title="[DEMO] Trial", url="https://pubmed.ncbi.nlm.nih.gov/99000114/", pmid="99000114"
        ),
        retracted=True,
    )
    item = Evidence(
        content="Metformin lowered dementia risk.",
        citation=Citation(
            source="pubmed", title="[DEMO] Cohort", url="https://pubmed.ncbi.nlm.nih.gov/99000101/", pmid="99000101"
        ),
    )
    report = ResearchReport(
        question="Q?",
        answer_brief="A.",
        key_findings=[Finding(statement="Less dementia.", evidence_ids=[item.id])],
        references=[item.id],
    )
    for demo in (True, False):
        context = RenderContext(demo=demo, stop_reason="sufficient", run_id="r1", model="m")
        markdown = render_markdown(report, {item.id: item, retracted.id: retracted}, context)
        references = markdown.split("## References", 1)[1]
        assert "**Retracted:** \\[DEMO\\] Trial" in markdown
        if demo:
            assert "pubmed.ncbi.nlm.nih.gov" not in markdown
            assert "(synthetic demo record: no web page)" in references
        else:
            assert "[Link](https://pubmed.ncbi.nlm.nih.gov/99000101/)" in references
