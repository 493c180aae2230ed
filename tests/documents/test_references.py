"""RIS, BibTeX and CSL-JSON: a reference manager's export read back with the identities PubMed items
carry, whichever field the manager put the PMID, PMCID or DOI in."""

from __future__ import annotations

import json

import pytest

from deepcritical.documents.references import parse_bibtex, parse_csljson, parse_ris
from deepcritical.errors import DocumentError
from deepcritical.models import Citation, Evidence
from deepcritical.report.exports import to_bibtex, to_csl_json, to_ris


def _items() -> list[Evidence]:
    return [
        Evidence(
            content="Abstract one.",
            citation=Citation(
                source="pubmed",
                title="Metformin and ageing: a randomised trial",
                url="https://pubmed.ncbi.nlm.nih.gov/31234567/",
                date="2021-03",
                authors=("Mockovic MJ", "Müller A"),
                journal="Lancet",
                pmid="31234567",
                doi="10.1016/S0140-6736(21)00001-X",
                pmcid="PMC7654321",
            ),
        ),
        Evidence(
            content="Abstract two.",
            citation=Citation(
                source="europepmc",
                title="Statins in the elderly",
                url="https://doi.org/10.1000/xyz123",
                date="2019",
                doi="10.1000/XYZ123",
            ),
        ),
    ]


@pytest.mark.parametrize(
    ("export", "parse"),
    [
        (to_ris, parse_ris),
        (to_bibtex, parse_bibtex),
        (to_csl_json, parse_csljson),
    ],
    ids=["ris", "bibtex", "csljson"],
)
def test_an_export_reads_back_to_the_same_identities(export, parse) -> None:  # type: ignore[no-untyped-def]
    items = _items()
    records = parse(export(items).encode())
    assert [record.identity for record in records] == [item.id for item in items]
    first = records[0].meta
    assert (first.pmid, first.pmcid, first.doi) == ("31234567", "PMC7654321", "10.1016/s0140-6736(21)00001-x")
    assert first.title == items[0].citation.title
    assert first.date.startswith("2021")
    assert "Müller" in " ".join(first.authors)
    assert not records[0].full_text


def test_zotero_ris_with_identifiers_in_notes_and_links() -> None:
    ris = (
        "TY  - JOUR\nTI  - Aspirin for primary prevention\nAU  - Doe, Jane\nPY  - 2018///\n"
        "UR  - https://pubmed.ncbi.nlm.nih.gov/30000001/\nN1  - PMID: 30000001 PMCID: PMC6000001\n"
        "AB  - We randomised 19,114 older adults to aspirin or placebo.\nER  - \n\n"
        "TY  - JOUR\nTI  - A DOI only in a link\nUR  - https://doi.org/10.1056/NEJMoa1800722\nER  - \n"
    )
    first, second = parse_ris(ris.encode())
    assert first.identity == "pmid:30000001"
    assert first.meta.pmcid == "PMC6000001"
    assert [block.kind for block in first.blocks] == ["title", "abstract"]
    assert "19,114" in first.blocks[1].text
    assert second.identity == "doi:10.1056/nejmoa1800722"


def test_bibtex_latex_is_decoded() -> None:
    bib = r"""@article{k, title={The {ACE} inhibitor trial in {\"O}sterreich}, author={M{\"u}ller, Anna and Smith, J.},
    year={2020}, month={5}, journal={BMJ}, eprint={31111111}, eprinttype={pubmed}, abstract={n = 80 \& more}}"""
    (record,) = parse_bibtex(bib.encode())
    assert record.meta.title == "The ACE inhibitor trial in Österreich"
    assert record.meta.authors == ("Müller, Anna", "Smith, J.")
    assert record.meta.pmid == "31111111"
    assert record.meta.date == "2020-05"
    assert record.blocks[1].text == "n = 80 & more"


def test_csl_json_dates_and_literal_names() -> None:
    items = [
        {
            "type": "article-journal",
            "title": "Trial",
            "author": [{"literal": "The RECOVERY Group"}, {"family": "Horby", "given": "P"}],
            "issued": {"date-parts": [[2021, 2, 25]]},
            "PMCID": "7654321",
        }
    ]
    (record,) = parse_csljson(json.dumps(items).encode())
    assert record.meta.authors == ("The RECOVERY Group", "Horby P")
    assert record.meta.date == "2021-02-25"
    assert record.identity == "pmcid:PMC7654321"


def test_not_csl_json_is_one_clear_error() -> None:
    with pytest.raises(DocumentError, match="CSL-JSON"):
        parse_csljson(b'"just a string"')
    with pytest.raises(DocumentError, match="CSL-JSON"):
        parse_csljson(b"{broken")
