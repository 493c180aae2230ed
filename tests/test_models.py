"""Evidence identity and merging: what makes two search hits one item."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deepcritical.models import Citation, Evidence, evidence_id, normalize_url


def cite(url: str, *, source: str = "web", **fields: object) -> Citation:
    return Citation.model_validate({"source": source, "title": "A title", "url": url, **fields})


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("https://Example.org/paper/", "https://example.org/paper"),
        ("HTTPS://EXAMPLE.ORG/paper", "https://example.org/paper"),
        ("https://example.org/paper?utm_source=x&utm_medium=y", "https://example.org/paper"),
        ("https://example.org/paper?id=3&utm_campaign=z", "https://example.org/paper?id=3"),
        ("https://example.org/paper#section-2", "https://example.org/paper"),
    ],
)
def test_urls_that_differ_only_in_form_normalise_alike(first: str, second: str) -> None:
    assert normalize_url(first) == normalize_url(second)


def test_urls_that_differ_in_path_or_parameters_stay_apart() -> None:
    assert normalize_url("https://example.org/a") != normalize_url("https://example.org/A")
    assert normalize_url("https://example.org/p?id=1") != normalize_url("https://example.org/p?id=2")


@pytest.mark.parametrize(
    ("citation", "expected"),
    [
        (cite("https://x.org/a", source="pubmed", pmid="123", doi="10.1/X"), "pmid:123"),
        (cite("https://x.org/a", doi="10.1000/ABC"), "doi:10.1000/abc"),
        (cite("https://doi.org/10.1000/ABC"), "doi:10.1000/abc"),
        (cite("https://pubmed.ncbi.nlm.nih.gov/98765/"), "pmid:98765"),
        (cite("https://Example.org/a/?utm_source=feed"), "url:https://example.org/a"),
        (cite("https://www.nejm.org/doi/full/10.1056/NEJMoa2034577"), "doi:10.1056/nejmoa2034577"),
        (cite("https://journal.org/doi/10.1234/abc.5/full?af=R"), "doi:10.1234/abc.5"),
        (cite("https://journal.org/papers/doi-10.1234"), "url:https://journal.org/papers/doi-10.1234"),
    ],
)
def test_evidence_id_prefers_pmid_then_doi_then_url(citation: Citation, expected: str) -> None:
    assert evidence_id(citation) == expected


@given(st.text(max_size=80))
def test_any_url_text_has_an_id(url: str) -> None:
    # A malformed URL (an unbalanced IPv6 bracket, say) must not crash the handler that merges by id.
    assert evidence_id(cite(url or "x")).startswith(("url:", "doi:", "pmid:"))


def test_found_by_always_includes_the_origin() -> None:
    item = Evidence(content="text", citation=cite("https://x.org", source="searxng"), found_by=("web",))
    assert item.found_by == ("searxng", "web")


def test_merging_keeps_the_scholarly_record_fills_gaps_and_unites_sources() -> None:
    pubmed = Evidence(
        content="Short abstract.",
        citation=cite("https://pubmed.ncbi.nlm.nih.gov/5/", source="pubmed", pmid="5", journal="J"),
        relevance=0.6,
    )
    web = Evidence(
        content="A much longer web page about the same paper, longer than the abstract.",
        citation=cite("https://doi.org/10.1234/abc", doi="10.1234/abc"),
        relevance=0.9,
    )
    merged = web.merged_with(pubmed)
    assert merged.id == "pmid:5"
    assert merged.citation.journal == "J"
    assert merged.citation.doi == "10.1234/abc"
    assert merged.found_by == ("web", "pubmed")
    assert merged.relevance == 0.9
    assert merged.identity_keys >= {"pmid:5", "doi:10.1234/abc"}
