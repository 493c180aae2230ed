"""JATS: real PMC articles (identifiers, sections, captions, references) and the shapes that must not
break the text (formulas, figures inside paragraphs, hostile XML, an efetch answer without a body)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lxml import etree

from deepcritical.documents.jats import parse_jats
from deepcritical.documents.passages import MAX_CHARS, split
from deepcritical.errors import DocumentError


def _ids(raw: str) -> dict[str, str]:
    return dict(re.findall(r'<article-id pub-id-type="([^"]+)">([^<]+)</article-id>', raw))


def test_real_articles_keep_their_identifiers_title_and_authors(fulltext_data: Path) -> None:
    files = sorted((fulltext_data / "jats").glob("*.nxml"))
    assert files
    for path in files:
        raw = path.read_text(encoding="utf-8")
        ids = _ids(raw)
        parsed = parse_jats(path.read_bytes())
        assert parsed.meta.pmid == ids["pmid"], path.name
        assert parsed.meta.pmcid == "PMC" + ids["pmc"].removeprefix("PMC"), path.name
        assert parsed.meta.doi == ids["doi"].lower(), path.name
        assert parsed.identity == f"pmid:{ids['pmid']}"
        assert (parsed.meta.title and parsed.meta.title in raw.replace("\n", " ")) or parsed.meta.title.split()[
            0
        ] in raw
        assert parsed.meta.authors, path.name
        assert re.fullmatch(r"\d{4}(-\d{2}){0,2}", parsed.meta.date), path.name
        assert parsed.full_text


def test_real_articles_give_passages_under_their_section_titles(fulltext_data: Path) -> None:
    for path in sorted((fulltext_data / "jats").glob("*.nxml")):
        tree = etree.parse(str(path))
        top_titles = {
            " ".join("".join(sec.find("title").itertext()).split())
            for sec in tree.xpath("/article/body/sec")
            if sec.find("title") is not None and "".join(sec.find("title").itertext()).strip()
        }
        parsed = parse_jats(path.read_bytes())
        text, passages = split("doc", parsed.blocks)
        sections = {passage.section for passage in passages}
        assert top_titles <= sections, path.name
        assert "Abstract" in sections
        for passage in passages:
            assert text[passage.start : passage.end] == passage.text
            assert len(passage.text) <= MAX_CHARS
        # Body paragraphs (without markup that changes their words) are in the passages' text.
        passage_text = " ".join(" ".join(passage.text for passage in passages).split())
        for paragraph in tree.xpath("/article/body//sec/p")[:20]:
            if not paragraph.xpath(".//inline-formula|.//disp-formula|.//fig|.//table-wrap"):
                opening = " ".join("".join(paragraph.itertext()).split()[:6])
                assert opening in passage_text, path.name


def test_real_articles_keep_table_captions_and_the_reference_list(fulltext_data: Path) -> None:
    for path in sorted((fulltext_data / "jats").glob("*.nxml")):
        tree = etree.parse(str(path))
        parsed = parse_jats(path.read_bytes())
        assert len(parsed.references) == len(tree.xpath("/article/back//ref-list/ref")), path.name
        captions = [block.text for block in parsed.blocks if block.kind == "caption"]
        for label in tree.xpath("//table-wrap/label"):
            assert any(caption.startswith("".join(label.itertext()).strip()) for caption in captions), path.name
        " ".join(block.text for block in parsed.blocks)
        for reference in tree.xpath("/article/back//ref-list/ref")[:5]:
            title = reference.xpath(".//article-title")
            if title:  # a reference's title is in the reference list, not in the passages
                words = " ".join("".join(title[0].itertext()).split())
                assert any(words in entry for entry in parsed.references)


ARTICLE = """<?xml version="1.0"?>
<article xmlns:mml="http://www.w3.org/1998/Math/MathML" article-type="{kind}">
<front><journal-meta><journal-title>J Test</journal-title></journal-meta>
<article-meta><article-id pub-id-type="pmcid">PMC123</article-id><article-id pub-id-type="doi">10.1/ABC</article-id>
<title-group><article-title>Drug <italic>X</italic> in adults</article-title></title-group>
<pub-date pub-type="epub"><day>3</day><month>4</month><year>2020</year></pub-date>
<abstract><sec><title>Methods</title><p>We randomised 80 adults.</p></sec></abstract></article-meta></front>
<body>
<sec><title>Results</title>
<p>The effect was <inline-formula><mml:math><mml:mi>β</mml:mi><mml:mo>=</mml:mo><mml:mn>0.3</mml:mn>
</mml:math></inline-formula> at week 12<fig id="f1"><label>Figure 1</label><caption><p>Flow of participants.</p>
</caption></fig> and stayed so.</p>
<p>Energy was <disp-formula><tex-math>\\documentclass{{minimal}}\\begin{{document}}$$E = mc^2$$
\\end{{document}}</tex-math></disp-formula> as stated.</p>
<sec><title>Adverse events</title><p>Nausea in 5 of 40.</p></sec>
</sec>
</body>
<back><ref-list><ref id="r1"><label>1</label><mixed-citation>Smith J. A trial. 2019.</mixed-citation></ref>
</ref-list></back>
</article>"""


def test_formulas_and_figures_do_not_break_a_paragraph() -> None:
    parsed = parse_jats(ARTICLE.format(kind="systematic-review").encode())
    paragraphs = [block for block in parsed.blocks if block.kind == "paragraph"]
    assert paragraphs[0].text == "The effect was β = 0.3 at week 12 and stayed so."
    assert paragraphs[1].text == "Energy was E = mc^2 as stated."
    caption = next(block for block in parsed.blocks if block.kind == "caption")
    assert caption.text == "Figure 1. Flow of participants."
    assert caption.section == "Results"
    assert parsed.blocks.index(caption) == parsed.blocks.index(paragraphs[0]) + 1
    adverse = next(block for block in parsed.blocks if "Nausea" in block.text)
    assert (adverse.section, adverse.subsection) == ("Results", "Adverse events")
    abstract = next(block for block in parsed.blocks if block.kind == "abstract")
    assert (abstract.section, abstract.subsection) == ("Abstract", "Methods")
    assert parsed.meta.title == "Drug X in adults"
    assert parsed.meta.pmcid == "PMC123"
    assert parsed.meta.doi == "10.1/abc"
    assert parsed.meta.date == "2020-04-03"
    assert parsed.meta.publication_types == ("Systematic Review",)
    assert parsed.identity == "doi:10.1/abc"
    assert parsed.references == ("1 Smith J. A trial. 2019.",)


def test_an_efetch_answer_without_a_body_is_not_full_text() -> None:
    """efetch db=pmc wraps the article in a pmc-articleset; a publisher that forbids the XML leaves front
    matter only."""
    wrapped = (
        '<pmc-articleset><article article-type="research-article"><front><article-meta>'
        '<article-id pub-id-type="pmid">42</article-id>'
        "<title-group><article-title>Closed</article-title></title-group>"
        "<abstract><p>Only this.</p></abstract></article-meta></front></article></pmc-articleset>"
    )
    parsed = parse_jats(wrapped.encode())
    assert parsed.meta.pmid == "42"
    assert not parsed.full_text


def test_external_entities_are_never_resolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    hostile = (
        f'<?xml version="1.0"?><!DOCTYPE article [<!ENTITY leak SYSTEM "file://{secret}">]>'
        "<article><front><article-meta><title-group><article-title>T</article-title></title-group>"
        "</article-meta></front><body><p>a &leak; b</p></body></article>"
    )
    try:
        parsed = parse_jats(hostile.encode())
    except DocumentError:
        return  # refusing the file is as good as not reading the entity
    assert "TOP-SECRET" not in " ".join(block.text for block in parsed.blocks)


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"<article><body><p>unclosed", "not well-formed"), (b"<html><body>x</body></html>", "not JATS")],
)
def test_broken_or_foreign_xml_is_one_clear_error(data: bytes, message: str) -> None:
    with pytest.raises(DocumentError, match=message):
        parse_jats(data)
