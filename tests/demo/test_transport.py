"""The demo MockTransport speaks each API's real wire format, from the demo corpus."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator

import httpx2
import pytest
import xmltodict

from deepcritical.demo import corpus, searxng
from deepcritical.demo.eutils import term_to_text
from deepcritical.demo.records import DEMO_HOST, PubmedRecord, load_corpus, strip_markup
from deepcritical.demo.transport import demo_transport
from deepcritical.source_table import DEMO_SEARXNG_URL

EUTILS = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils"
YOU = "https://api.ydc-index.io/v1/search"
PUBMED_RECORDS = {r.pmid: r for r in load_corpus().records if isinstance(r, PubmedRecord)}


@pytest.fixture
def client() -> Iterator[httpx2.Client]:
    with httpx2.Client(transport=demo_transport()) as http:
        yield http


def _esearch(client: httpx2.Client, term: str, **params: str | int) -> dict[str, object]:
    response = client.get(f"{EUTILS}/esearch.fcgi", params={"db": "pubmed", "term": term, "retmode": "json", **params})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["header"] == {"type": "esearch", "version": "0.3"}
    result: dict[str, object] = body["esearchresult"]
    return result


# --- E-utilities esearch ---


def test_esearch_json_has_ncbis_shape(client: httpx2.Client) -> None:
    result = _esearch(client, "metformin alzheimer", retmax=5, sort="relevance")
    assert set(result) >= {"count", "retmax", "retstart", "idlist", "translationset", "querytranslation"}
    ids = result["idlist"]
    assert isinstance(ids, list)
    assert len(ids) == 5
    assert all(isinstance(pmid, str) and pmid in PUBMED_RECORDS for pmid in ids)
    # NCBI sends the numbers as strings.
    assert result["retmax"] == "5"
    assert result["retstart"] == "0"
    assert isinstance(result["count"], str)
    assert int(result["count"]) > 5
    assert all(PUBMED_RECORDS[pmid].topic == "metformin-alzheimers" for pmid in ids)


def test_esearch_pages_with_retstart(client: httpx2.Client) -> None:
    first = _esearch(client, "metformin", retmax=4)
    second = _esearch(client, "metformin", retmax=4, retstart=4)
    everything = _esearch(client, "metformin", retmax=100)
    assert first["idlist"] + second["idlist"] == everything["idlist"][:8]  # type: ignore[operator,index]
    assert second["retstart"] == "4"


def test_esearch_understands_pubmed_syntax(client: httpx2.Client) -> None:
    tagged = _esearch(client, 'statins[tiab] AND ("sepsis"[MeSH Terms] OR septic shock) NOT mice')
    plain = _esearch(client, "statins sepsis septic shock")
    assert tagged["idlist"] == plain["idlist"]
    assert tagged["idlist"]
    assert term_to_text('metformin[tiab] AND (alzheimer* OR "dementia") NOT rats[mh]') == "metformin alzheimer dementia"


def test_esearch_with_nothing_found_reports_it_like_ncbi(client: httpx2.Client) -> None:
    result = _esearch(client, "zzqxv")
    assert result["count"] == "0"
    assert result["idlist"] == []
    assert result["errorlist"] == {"phrasesnotfound": ["zzqxv"], "fieldsnotfound": []}
    assert result["warninglist"]["outputmessages"] == ["No items found."]  # type: ignore[index]


def test_esearch_finds_nothing_for_a_topic_outside_the_corpus_without_calling_its_words_unknown(
    client: httpx2.Client,
) -> None:
    result = _esearch(client, "acupuncture migraine frequency")  # words PubMed knows; the demo has no record
    assert result["count"] == "0"
    assert "errorlist" not in result
    assert result["warninglist"]["outputmessages"] == ["No items found."]  # type: ignore[index]


def test_esearch_with_empty_term_answers_ncbis_error_body(client: httpx2.Client) -> None:
    result = _esearch(client, "")
    assert result == {"ERROR": "Empty term and query_key - nothing todo"}


def test_esearch_xml_by_default(client: httpx2.Client) -> None:
    response = client.get(f"{EUTILS}/esearch.fcgi", params={"db": "pubmed", "term": "SGLT2 heart failure", "retmax": 3})
    root = ET.fromstring(response.content)
    assert root.tag == "eSearchResult"
    ids = [node.text for node in root.iterfind("IdList/Id")]
    assert len(ids) == 3
    assert root.findtext("RetMax") == "3"
    assert all(PUBMED_RECORDS[str(pmid)].topic == "sglt2-heart-failure" for pmid in ids)


# --- E-utilities efetch ---


def _efetch_all(client: httpx2.Client) -> httpx2.Response:
    params = {"db": "pubmed", "id": ",".join(PUBMED_RECORDS), "retmode": "xml", "rettype": "abstract"}
    return client.get(f"{EUTILS}/efetch.fcgi", params=params)


def test_efetch_returns_valid_pubmed_xml_for_every_record(client: httpx2.Client) -> None:
    response = _efetch_all(client)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/xml")
    root = ET.fromstring(response.content)
    assert root.tag == "PubmedArticleSet"
    articles = root.findall("PubmedArticle")
    assert [a.findtext("MedlineCitation/PMID") for a in articles] == list(PUBMED_RECORDS)
    for article in articles:
        record = PUBMED_RECORDS[str(article.findtext("MedlineCitation/PMID"))]
        title = article.find("MedlineCitation/Article/ArticleTitle")
        assert title is not None
        assert "".join(title.itertext()) == strip_markup(record.title)
        sections = article.findall("MedlineCitation/Article/Abstract/AbstractText")
        assert [s.get("Label") for s in sections] == [section.label for section in record.abstract]
        assert ["".join(s.itertext()) for s in sections] == [strip_markup(s.text) for s in record.abstract]
        ids = {node.get("IdType"): node.text for node in article.iterfind("PubmedData/ArticleIdList/ArticleId")}
        assert ids["pubmed"] == record.pmid
        assert ids["doi"] == record.doi
        assert ids.get("pmc") == record.pmcid
        types = [node.text for node in article.iterfind("MedlineCitation/Article/PublicationTypeList/PublicationType")]
        assert types == list(record.publication_types)


def test_efetch_xml_parses_with_xmltodict_into_the_shapes_parsers_expect(client: httpx2.Client) -> None:
    data = xmltodict.parse(_efetch_all(client).text)
    articles = data["PubmedArticleSet"]["PubmedArticle"]
    by_pmid = {a["MedlineCitation"]["PMID"]["#text"]: a["MedlineCitation"]["Article"] for a in articles}
    structured = by_pmid["99000101"]["Abstract"]["AbstractText"]
    assert [s["@Label"] for s in structured] == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert by_pmid["99000102"]["Journal"]["JournalIssue"]["PubDate"] == {"MedlineDate": "2019 Nov-Dec"}
    assert by_pmid["99000105"]["Journal"]["JournalIssue"]["PubDate"] == {"Year": "2021", "Month": "Apr", "Day": "12"}
    authors = by_pmid["99000109"]["AuthorList"]["Author"]
    assert authors[-1]["CollectiveName"] == "DEMO-MIND Trial Investigators"
    assert {"LastName", "ForeName", "Initials"} <= set(authors[0])
    assert isinstance(by_pmid["99000111"]["Abstract"]["AbstractText"], str)  # one unlabelled paragraph
    assert "Abstract" not in by_pmid["99000113"]  # a letter with no abstract
    # Inline markup arrives as child elements, as in real records.
    methods = by_pmid["99000112"]["Abstract"]["AbstractText"][1]
    assert methods["i"] == "APOE"


def test_efetch_single_record_and_unknown_ids(client: httpx2.Client) -> None:
    response = client.get(f"{EUTILS}/efetch.fcgi", params={"db": "pubmed", "id": "99000301,12345678", "retmode": "xml"})
    data = xmltodict.parse(response.text)
    article = data["PubmedArticleSet"]["PubmedArticle"]
    assert isinstance(article, dict)  # one article is not a list: parsers must handle both
    assert article["MedlineCitation"]["PMID"]["#text"] == "99000301"


def test_efetch_by_post_like_large_id_lists(client: httpx2.Client) -> None:
    response = client.post(f"{EUTILS}/efetch.fcgi", data={"db": "pubmed", "id": "99000401,99000402", "retmode": "xml"})
    root = ET.fromstring(response.content)
    assert [a.findtext("MedlineCitation/PMID") for a in root.iter("PubmedArticle")] == ["99000401", "99000402"]


def test_efetch_without_ids_is_an_ncbi_error(client: httpx2.Client) -> None:
    response = client.get(f"{EUTILS}/efetch.fcgi", params={"db": "pubmed", "retmode": "xml"})
    assert response.status_code == 400
    assert ET.fromstring(response.content).findtext("ERROR") == "Empty id list - nothing todo"


# --- SearXNG ---


def _searxng(client: httpx2.Client, **params: str | int) -> httpx2.Response:
    return client.get(f"{DEMO_SEARXNG_URL}/search", params={"format": "json", **params})


def test_searxng_json_has_the_real_shape(client: httpx2.Client) -> None:
    response = _searxng(client, q="statins sepsis mortality", categories="general")
    assert response.status_code == 200
    body = response.json()
    assert set(body) >= {"query", "number_of_results", "results", "answers", "suggestions", "unresponsive_engines"}
    assert body["query"] == "statins sepsis mortality"
    results = body["results"]
    assert results
    assert body["number_of_results"] >= len(results)
    for item in results:
        assert set(item) >= {"url", "title", "content", "engine", "engines", "score", "category", "publishedDate"}
        assert item["engine"] in item["engines"]
        assert isinstance(item["parsed_url"], list)  # a serialised urlparse tuple
        assert len(item["parsed_url"]) == 6
        assert item["parsed_url"][1].lower() == DEMO_HOST
        assert "statin" in (item["title"] + item["content"]).lower()
    scores = [item["score"] for item in results]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)


def test_searxng_pages_through_results(client: httpx2.Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(searxng, "PAGE_SIZE", 3)
    expected = [hit.record.url for hit in corpus.hits("searxng", "trial")]  # type: ignore[union-attr]
    assert len(expected) > 3, "the query must need more than one page"
    pages = [_searxng(client, q="trial", pageno=page).json()["results"] for page in range(1, 6)]
    assert len(pages[0]) == 3
    assert [item["url"] for page in pages for item in page] == expected


def test_searxng_reports_a_doi_only_for_scholarly_results(client: httpx2.Client) -> None:
    results = _searxng(client, q="metformin dementia").json()["results"]
    papers = [item for item in results if item["template"] == "paper.html"]
    assert papers
    assert all(item["doi"].startswith("10.99999/demo.") for item in papers)
    assert all("doi" not in item for item in results if item["template"] != "paper.html")


def test_searxng_refuses_non_json_and_empty_queries(client: httpx2.Client) -> None:
    assert client.get(f"{DEMO_SEARXNG_URL}/search", params={"q": "statins"}).status_code == 403
    assert _searxng(client, q="  ").status_code == 400


def test_searxng_answers_under_a_path_prefix_at_its_stand_in_host_only(client: httpx2.Client) -> None:
    response = client.get(f"{DEMO_SEARXNG_URL}/searxng/search", params={"q": "SGLT2", "format": "json"})
    assert response.status_code == 200
    assert response.json()["results"]
    # Another instance is not a stand-in: the presets point SearXNG at the stand-in's host.
    assert client.get("http://my-searxng:8080/search", params={"q": "SGLT2", "format": "json"}).status_code == 404


# --- You.com ---


def test_you_requires_an_api_key(client: httpx2.Client) -> None:
    assert client.get(YOU, params={"query": "metformin"}).status_code == 401
    assert client.get(YOU, params={"query": "metformin"}, headers={"X-API-Key": " "}).status_code == 401


def test_you_json_has_the_real_shape(client: httpx2.Client) -> None:
    response = client.get(YOU, params={"query": "SGLT2 inhibitors heart failure"}, headers={"X-API-Key": "any"})
    assert response.status_code == 200
    body = response.json()
    assert body["results"]["news"] == []
    web = body["results"]["web"]
    assert web
    for item in web:
        assert set(item) >= {"url", "title", "description", "snippets"}
        assert item["snippets"]
        assert all(isinstance(snippet, str) and snippet for snippet in item["snippets"])
        assert httpx2.URL(item["url"]).host == DEMO_HOST
    assert "SGLT2" in " ".join(web[0]["snippets"])
    assert body["metadata"]["query"] == "SGLT2 inhibitors heart failure"


def test_you_count_limits_results_and_answers_are_deterministic(client: httpx2.Client) -> None:
    headers = {"X-API-Key": "k"}
    one = client.get(YOU, params={"query": "metformin", "count": 1}, headers=headers)
    assert len(one.json()["results"]["web"]) == 1
    again = client.get(YOU, params={"query": "metformin", "count": 1}, headers=headers)
    assert one.content == again.content


def test_you_without_a_query_is_rejected(client: httpx2.Client) -> None:
    assert client.get(YOU, headers={"X-API-Key": "k"}).status_code == 422


# --- routing ---


@pytest.mark.parametrize(
    "url",
    [
        "https://example.org/search",
        f"{EUTILS}/einfo.fcgi",
        "https://api.ydc-index.io/v1/news",
        f"{DEMO_SEARXNG_URL}/config",
    ],
)
def test_unknown_hosts_and_paths_get_a_clear_404(client: httpx2.Client, url: str) -> None:
    response = client.get(url, headers={"X-API-Key": "k"})
    assert response.status_code == 404
    assert "demo transport: no stand-in" in response.text
    assert httpx2.URL(url).host in response.text


async def test_works_with_the_async_client_the_sources_use() -> None:
    async with httpx2.AsyncClient(transport=demo_transport()) as http:
        response = await http.get(
            f"{EUTILS}/esearch.fcgi", params={"db": "pubmed", "term": "vitamin D", "retmode": "json"}
        )
    assert response.json()["esearchresult"]["idlist"]
