"""One report document, two writers: the HTML the page shows carries the tables, figures and citations of the
report, links every citation to its reference, and shows any outside text as itself, escaped exactly once."""

from __future__ import annotations

from hypothesis import given, settings

from deepcritical.models import Evidence, Grade
from deepcritical.outputs import Finding, ResearchReport
from deepcritical.report.document import (
    Cite,
    CiteRef,
    Code,
    Figure,
    FileLink,
    Link,
    Quote,
    References,
    ReportDocument,
    Table,
    bullets,
    em,
    heading,
    item,
    paragraph,
    runs,
    strong,
)
from deepcritical.report.html import to_html
from deepcritical.report.markdown_writer import to_markdown
from deepcritical.report.render import RenderContext, build_document, reference_numbers, render_markdown
from helpers.builders import evidence
from helpers.hostile_text import PAPER_TEXT
from helpers.parsed_html import Page

QUESTION = "Does drugx reduce mortality in sepsis?"
SCRIPT = "<script>alert(1)</script>"


def trial(number: int, hazard: str, title: str | None = None) -> Evidence:
    return evidence(
        f"In adults with sepsis, drugx reduced 28-day mortality (HR {hazard}; n = 400).",
        pmid=f"9911{number}",
        title=title or f"Drugx for sepsis: randomised trial {number}",
        date="2021",
        journal="Critical Care",
        grade=Grade(design="randomized_controlled_trial", level=2, population="humans", basis="publication_type"),
    )


def constructed(title: str = "Drugx for sepsis: randomised trial 1") -> tuple[ReportDocument, str]:
    items = [
        trial(1, "0.77, 95% CI 0.60 to 0.98", title),
        trial(2, "0.81, 95% CI 0.70 to 0.94"),
        trial(3, "0.90, 95% CI 0.75 to 1.08"),
    ]
    evidence = {entry.id: entry for entry in items}
    ids = list(evidence)
    report = ResearchReport(
        question=QUESTION,
        answer_brief=f"Drugx lowered mortality ({ids[0]}, {ids[1]}).",
        key_findings=[Finding(statement="Mortality fell with drugx.", evidence_ids=ids[:2])],
        contrary_evidence=[Finding(statement="One trial found no clear effect.", evidence_ids=[ids[2]])],
        references=ids,
    )
    context = RenderContext(demo=False, stop_reason="sufficient", run_id="research-x", model="scripted")
    return build_document(report, evidence, context), render_markdown(report, evidence, context)


def test_the_html_of_a_report_has_its_tables_figures_and_citations_linked_to_its_references() -> None:
    document, _ = constructed()
    html = to_html(document, files="/api/runs/research-x/")
    page = Page(html)
    anchors = [attrs["id"] for tag, attrs in page.tags if tag == "li" and attrs.get("id")]
    assert anchors == ["ref-1", "ref-2", "ref-3"]
    cites = [attrs["href"] for tag, attrs in page.tags if tag == "a" and attrs.get("class") == "cite"]
    assert {"#ref-1", "#ref-2", "#ref-3"} <= set(cites)
    assert all(href in {f"#{anchor}" for anchor in anchors} for href in cites)  # no citation links nowhere
    tables = [attrs.get("class") for tag, attrs in page.tags if tag == "table"]
    assert tables == [None, "sortable"]  # the strength of evidence, then the study results the page sorts
    assert "HR 0.77 [0.60, 0.98]" in page.text()
    figures = [attrs for tag, attrs in page.tags if tag == "img"]
    assert [image["data-run-file"] for image in figures] == ["prisma.svg", "forest-1.svg"]
    assert all(set(image) == {"class", "data-run-file", "alt"} for image in figures)  # no src: the page loads it
    downloads = [attrs for tag, attrs in page.tags if tag == "a" and "download" in attrs]
    png = "forest-1.png"
    assert {"href": f"/api/runs/research-x/{png}", "data-run-file": png, "download": png} in downloads
    outside = [attrs for tag, attrs in page.tags if tag == "a" and str(attrs.get("href", "")).startswith("https://")]
    assert [attrs["href"] for attrs in outside] == [f"https://pubmed.ncbi.nlm.nih.gov/9911{n}/" for n in (1, 2, 3)]
    assert all(attrs["rel"] == "noopener noreferrer nofollow" for attrs in outside)


def test_a_hostile_title_is_escaped_once_in_the_html_and_in_the_markdown() -> None:
    document, markdown = constructed(title=f"Drugx for sepsis {SCRIPT} &lt;b&gt;")
    html = to_html(document)
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # once: not &amp;lt;script
    assert "&amp;lt;b&amp;gt;" in html  # the title's own entity text stays text
    assert "&amp;lt;script" not in html
    page = Page(html)
    assert f"Drugx for sepsis {SCRIPT} &lt;b&gt;" in page.text()  # the reader sees the title as it is
    assert "\\<script>alert(1)\\</script>" in markdown


def test_the_markdown_and_the_html_carry_the_same_sections_and_citations() -> None:
    document, markdown = constructed()
    assert to_markdown(document) == markdown
    page = Page(to_html(document))
    headings = [data for tag, data in page.texts if tag in ("h1", "h2", "h3")]
    assert headings == [line.lstrip("#").strip() for line in markdown.splitlines() if line.startswith("#")]


ANY_TEXT = PAPER_TEXT.filter(bool)  # the Markdown escaping's property test's text: every special, entities, URLs


@settings(max_examples=400, deadline=None)
@given(ANY_TEXT)
def test_any_text_in_any_field_shows_in_the_html_as_itself_and_never_as_markup(text: str) -> None:
    """Every place a run of text can be in a report: escaped once (the parsed page holds the text itself, so no
    entity shows and nothing was left unescaped), inside the element the writer made, and no element or
    attribute of its own."""
    document = ReportDocument(
        blocks=[
            heading(text, level=1),
            paragraph(text, strong(text), em(text), Code(text=text), Link(text=text, url="https://example.org/a")),
            paragraph(Cite(refs=[CiteRef(number=1, place=text)]), FileLink(name=text)),
            bullets([item(text, items=[item(text)])]),
            Table(header=[text], rows=[[runs(text)]], sortable=True),
            Quote(blocks=[paragraph(text)]),
            Figure(file="prisma.svg", alt=text),
            References(items=[item(text)]),
        ]
    )
    page = Page(to_html(document))
    assert [tag for tag, _ in page.tags] == [
        *("h1", "p", "strong", "em", "code", "a", "p", "a", "ul", "li", "ul", "li"),
        # A table and a figure each in its own box, which scrolls sideways on a narrow page (issue 40).
        *(
            "div",
            "table",
            "thead",
            "tr",
            "th",
            "tbody",
            "tr",
            "td",
            "span",
            "blockquote",
            "p",
            "div",
            "img",
            "ol",
            "li",
        ),
    ]
    kinds = ("h1", "strong", "em", "code", "th")
    inside = {tag: "".join(data for at, data in page.texts if at == tag) for tag in kinds}
    assert inside == dict.fromkeys(inside, text)
    image = next(attrs for tag, attrs in page.tags if tag == "img")
    assert image == {"class": "figure", "data-run-file": "prisma.svg", "alt": text}
    assert [attrs.get("href") for tag, attrs in page.tags if tag == "a"] == ["https://example.org/a", "#ref-1"]
    assert f"[1, {text}]" in "".join(data for _, data in page.texts)


def test_an_item_cited_only_by_contrary_evidence_is_numbered() -> None:
    item = evidence("Adverse events were similar.", pmid="7")
    other = evidence("Another study.", pmid="8")
    contrary = Finding(statement="Adverse events were similar.", evidence_ids=[item.id])
    report = ResearchReport(
        question="Q?", answer_brief="No answer.", key_findings=[], contrary_evidence=[contrary], references=[]
    )
    # The report was written from another item: the contrary finding's item is numbered all the same.
    context = RenderContext(
        demo=False, stop_reason="sufficient", run_id="research-x", model="scripted", pool=[other.id]
    )
    assert reference_numbers(report, {item.id: item, other.id: other}, context).get(item.id) == 1
