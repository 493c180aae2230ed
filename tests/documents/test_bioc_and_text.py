"""BioC (JSON and XML, in the PMC BioC API's shape), Markdown, plain text and HTML."""

from __future__ import annotations

import json

import pytest

from deepcritical.documents.bioc import parse_bioc
from deepcritical.documents.text import parse_html, parse_markdown, parse_text
from deepcritical.errors import DocumentError

PASSAGES = [
    (
        {
            "section_type": "TITLE",
            "type": "front",
            "article-id_pmid": "33301246",
            "article-id_pmc": "7745181",
            "article-id_doi": "10.1056/NEJMoa2034577",
            "year": "2020",
            "name_0": "surname:Polack;given-names:Fernando P.",
            "name_1": "surname:Thomas;given-names:Stephen J.",
        },
        "Safety and Efficacy of the BNT162b2 mRNA Covid-19 Vaccine",
    ),
    ({"section_type": "ABSTRACT", "type": "abstract"}, "A total of 43,548 participants underwent randomization."),
    ({"section_type": "INTRO", "type": "title_1"}, "Introduction"),
    ({"section_type": "INTRO", "type": "paragraph"}, "Coronavirus disease 2019 has affected millions."),
    ({"section_type": "METHODS", "type": "title_1"}, "Methods"),
    ({"section_type": "METHODS", "type": "title_2"}, "Trial Design"),
    ({"section_type": "METHODS", "type": "paragraph"}, "This is a multinational, placebo-controlled trial."),
    ({"section_type": "RESULTS", "type": "paragraph"}, "Efficacy was 95% (95% CI, 90.3 to 97.6)."),
    ({"section_type": "RESULTS", "type": "table_caption"}, "Table 1. Demographic characteristics."),
    ({"section_type": "REF", "type": "ref"}, "Zhou P, et al. A pneumonia outbreak. Nature 2020."),
]


def _bioc_json() -> bytes:
    document = {
        "id": "7745181",
        "infons": {},
        "passages": [
            {"offset": i * 100, "infons": infons, "text": text, "sentences": [], "annotations": [], "relations": []}
            for i, (infons, text) in enumerate(PASSAGES)
        ],
        "relations": [],
    }
    collection = {"source": "PMC", "date": "20210101", "key": "pmc.key", "documents": [document]}
    return json.dumps([collection]).encode()


def _bioc_xml() -> bytes:
    passages = "".join(
        "<passage>"
        + "".join(f'<infon key="{key}">{value}</infon>' for key, value in infons.items())
        + f"<offset>{i * 100}</offset><text>{text}</text></passage>"
        for i, (infons, text) in enumerate(PASSAGES)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE collection SYSTEM "BioC.dtd"><collection>'
        f"<source>PMC</source><date>20210101</date><key>pmc.key</key><document><id>7745181</id>{passages}"
        "</document></collection>"
    ).encode()


@pytest.mark.parametrize("data", [_bioc_json(), _bioc_xml()], ids=["json", "xml"])
def test_bioc_keeps_sections_identifiers_and_leaves_references_out(data: bytes) -> None:
    (parsed,) = parse_bioc(data)
    assert parsed.identity == "pmid:33301246"
    assert parsed.meta.pmcid == "PMC7745181"
    assert parsed.meta.doi == "10.1056/nejmoa2034577"
    assert parsed.meta.authors == ("Polack Fernando P.", "Thomas Stephen J.")
    places = [(block.section, block.subsection, block.kind) for block in parsed.blocks]
    assert places == [
        ("Title", None, "title"),
        ("Abstract", None, "abstract"),
        ("Introduction", None, "paragraph"),
        ("Methods", "Trial Design", "paragraph"),
        ("Results", None, "paragraph"),
        ("Results", None, "caption"),
    ]
    assert parsed.references == ("Zhou P, et al. A pneumonia outbreak. Nature 2020.",)
    assert parsed.full_text


def test_something_else_is_not_bioc() -> None:
    with pytest.raises(DocumentError, match="not BioC"):
        parse_bioc(b'{"items": []}')
    with pytest.raises(DocumentError, match="not BioC XML"):
        parse_bioc(b"<article/>")


def test_markdown_headings_become_sections() -> None:
    markdown = (
        "# Notes on metformin\n\nIntro *text* here.\n\n## Methods\n\nWe read 12 trials.\n\n"
        "### Search\n\nPubMed and Embase.\n\n## Results\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )
    parsed = parse_markdown(markdown.encode())
    assert parsed.meta.title == "Notes on metformin"
    places = [(block.section, block.subsection, block.text) for block in parsed.blocks]
    assert places[1:4] == [
        (None, None, "Intro text here."),
        ("Methods", None, "We read 12 trials."),
        ("Methods", "Search", "PubMed and Embase."),
    ]
    assert ("Results", None, "1") in places


def test_plain_text_paragraphs_and_a_doi() -> None:
    parsed = parse_text(b"My notes\nsecond line\n\nA paragraph citing doi:10.1000/ABC.\n\n\n")
    assert [block.text for block in parsed.blocks] == ["My notes second line", "A paragraph citing doi:10.1000/ABC."]
    assert parsed.meta.title == "My notes"
    assert parsed.meta.doi == "10.1000/abc"


def test_html_main_text_without_navigation() -> None:
    html = (
        "<html><head><title>Trial page</title></head><body><nav>Home | Login | Subscribe</nav><article>"
        "<h1>Aspirin and bleeding</h1><p>This page reports a trial of aspirin in older adults, long enough to be "
        "the main text of the page for the extractor.</p><h2>Results</h2><p>Major bleeding occurred in 3.8% "
        "with aspirin and 2.8% with placebo, a hazard ratio of 1.38.</p></article>"
        "<footer>Copyright 2024 Example Publisher</footer></body></html>"
    )
    parsed = parse_html(html.encode())
    text = " ".join(block.text for block in parsed.blocks)
    assert "hazard ratio of 1.38" in text
    assert "Subscribe" not in text
    assert "Copyright" not in text
    results = next(block for block in parsed.blocks if "1.38" in block.text)
    assert results.section == "Results"


def test_an_empty_page_is_one_clear_error() -> None:
    with pytest.raises(DocumentError, match="no main text"):
        parse_html(b"<html><head><title>x</title></head><body><script>var a = 1;</script></body></html>")
