"""The contract every public JSON API of the source table keeps, run for each entry with a ``tool``: a new JSON
source is its table row, its tool module and its demo stand-in (three files), and is tested here with no test
file of its own. Built from its row and settings alone (``{NAME}_BASE_URL``, ``{NAME}_TIMEOUT``), it answers a
demo question from its stand-in only, and its failures follow the common policy of ``sources.base``."""

from __future__ import annotations

import httpx2
import pytest

from deepcritical.config import Settings
from deepcritical.demo.transport import demo_transport
from deepcritical.errors import SearchError
from deepcritical.source_table import API_SOURCES, SourceEntry
from deepcritical.sources.base import SearchTool
from deepcritical.sources.factory import build_sources, make_http_client

QUESTION = "metformin Alzheimer's disease"


def built(
    entry: SourceEntry, transport: httpx2.AsyncBaseTransport, **values: str
) -> tuple[httpx2.AsyncClient, SearchTool]:
    # Built from keyword arguments (by variable name) only: no .env or environment of the developer's.
    settings = Settings(_env_file=None, DEEPCRITICAL_SOURCES=entry.name, **values)  # type: ignore[call-arg]
    client = make_http_client(transport)
    (tool,) = build_sources(settings, client).handler.tools
    return client, tool


@pytest.fixture(params=API_SOURCES, ids=lambda entry: entry.name)
def entry(request: pytest.FixtureRequest) -> SourceEntry:
    source: SourceEntry = request.param
    return source


def test_every_public_api_names_its_stand_in() -> None:
    assert API_SOURCES  # the parametrised tests below run for at least one source
    assert all(entry.stand_in is not None and entry.stand_in_host for entry in API_SOURCES)


async def test_the_source_answers_a_demo_question_from_its_stand_in_only(entry: SourceEntry) -> None:
    stand_in = demo_transport()
    hosts: list[str] = []

    async def recording(request: httpx2.Request) -> httpx2.Response:
        hosts.append(request.url.host)
        return await stand_in.handle_async_request(request)

    client, tool = built(entry, httpx2.MockTransport(recording))
    async with client:
        found = await tool.search(QUESTION, 3)
    assert 0 < len(found) <= 3
    assert set(hosts) == {entry.stand_in_host}
    for item in found:
        assert item.citation.source == entry.name
        assert item.citation.title
        assert item.citation.url
        assert item.content
        assert item.grade is not None


async def test_its_variables_set_where_it_asks_and_how_long_it_waits(entry: SourceEntry) -> None:
    asked: list[httpx2.URL] = []

    def mirror(request: httpx2.Request) -> httpx2.Response:
        asked.append(request.url)
        return httpx2.Response(200, text="<html>maintenance</html>", headers={"Content-Type": "text/html"})

    variables = {f"{entry.variable}_BASE_URL": "https://mirror.example/api/", f"{entry.variable}_TIMEOUT": "3"}
    client, tool = built(entry, httpx2.MockTransport(mirror), **variables)
    assert tool.timeout == 3
    async with client:
        with pytest.raises(SearchError) as caught:
            await tool.search(QUESTION, 3)
    assert asked
    assert all(str(url).startswith("https://mirror.example/api/") for url in asked)
    # A page that is not JSON is the common policy's error: attributed, naming the host and the content type.
    assert caught.value.source == entry.name
    assert str(caught.value).startswith(f"{entry.name}: not JSON from mirror.example (text/html)")


async def test_its_stand_in_refuses_a_path_it_does_not_serve(entry: SourceEntry) -> None:
    async with make_http_client(demo_transport()) as client:
        response = await client.get(f"https://{entry.stand_in_host}/no/such/path")
    assert response.status_code == 404
    assert "no stand-in for path" in response.text
