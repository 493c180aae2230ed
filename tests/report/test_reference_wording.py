"""How a reference and a count read: a page found by a search engine appeared on its site, not in a journal
named after the engine; an item without a date says so plainly; a count takes its noun's singular or plural."""

from __future__ import annotations

import pytest

from deepcritical.models import Citation, Evidence
from deepcritical.report.document import bullets
from deepcritical.report.markdown_writer import blocks_markdown
from deepcritical.report.references import reference_entry
from deepcritical.text import quantity


def entry(**citation: object) -> str:
    item = Evidence(content="A page about SGLT2 inhibitors.", citation=Citation(**citation))  # type: ignore[arg-type]
    return blocks_markdown([bullets([reference_entry([item], recalled=False)])])


@pytest.mark.parametrize("engine", ["web", "you", "searxng"])
def test_a_page_found_by_a_search_engine_names_its_site_and_no_date_plainly(engine: str) -> None:
    shown = entry(source=engine, title="How SGLT2 inhibitors help the heart", url="https://www.heart.org/sglt2")
    assert "(no date)" in shown
    assert "(Unknown)" not in shown
    assert "*heart.org*" in shown
    assert f"*{engine}*" not in shown


def test_a_journal_article_keeps_its_journal_and_date() -> None:
    shown = entry(
        source="pubmed", title="A trial", url="https://pubmed.ncbi.nlm.nih.gov/1/", date="2021-04", journal="BMJ"
    )
    assert "(2021-04). A trial. *BMJ*." in shown


@pytest.mark.parametrize(
    ("count", "expected"), [(0, "0 counted studies"), (1, "1 counted study"), (2, "2 counted studies")]
)
def test_a_count_takes_the_singular_or_the_plural(count: int, expected: str) -> None:
    assert quantity(count, "counted study", "counted studies") == expected
    assert quantity(count, "item") == expected.replace("counted studies", "items").replace("counted study", "item")
