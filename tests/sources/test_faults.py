"""Faults a real service shows, against a scripted E-utilities stand-in (no network): maintenance pages
and cut-off bodies (retried), timeouts (asked once more, then a message naming host, limit and setting),
a Retry-After longer than a search waits, oversized bodies, and a key echoed where a message is cut."""

from __future__ import annotations

import random
import re
import string
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import httpx2
import pytest
from pydantic import SecretStr

from deepcritical.errors import RateLimitError, ResponseTooLargeError, SearchError, UnusableResponseError
from deepcritical.sources.base import get_with_retry
from deepcritical.sources.pubmed import PubMedTool

Reply = httpx2.Response | Callable[[httpx2.Request], httpx2.Response]

MAINTENANCE = httpx2.Response(
    200,
    text="<!DOCTYPE html><html><head><title>NCBI maintenance</title></head><body>Back soon.</body></html>",
)
ESEARCH = httpx2.Response(200, json={"esearchresult": {"count": "1", "idlist": ["11"]}})
ARTICLE = (
    '<PubmedArticle><MedlineCitation><PMID Version="1">11</PMID><Article><ArticleTitle>Statins in sepsis'
    "</ArticleTitle><Abstract><AbstractText>Statins were studied.</AbstractText></Abstract></Article>"
    "</MedlineCitation></PubmedArticle>"
)
EFETCH = httpx2.Response(200, text=f"<PubmedArticleSet>{ARTICLE}</PubmedArticleSet>")
TRUNCATED_EFETCH = httpx2.Response(200, text=f"<PubmedArticleSet>{ARTICLE[:150]}")


@dataclass
class Stand:
    """Answers each endpoint from its own queue of replies; records requests and back-off sleeps."""

    esearch: list[Reply] = field(default_factory=list)
    efetch: list[Reply] = field(default_factory=list)
    requests: list[httpx2.Request] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        queue = self.esearch if request.url.path.endswith("/esearch.fcgi") else self.efetch
        assert queue, f"unexpected request {request.url.path}"
        reply = queue.pop(0)
        return reply(request) if callable(reply) else reply

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)

    async def no_pacing(self) -> None:
        """The rate limiter is tested elsewhere."""

    def calls(self, endpoint: str) -> int:
        return sum(1 for request in self.requests if request.url.path.endswith(f"/{endpoint}.fcgi"))


@pytest.fixture
async def stand() -> AsyncIterator[tuple[httpx2.AsyncClient, Stand]]:
    script = Stand()
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(script.handle)) as client:
        yield client, script


def tool(client: httpx2.AsyncClient, script: Stand, api_key: str | None = None) -> PubMedTool:
    key = SecretStr(api_key) if api_key else None
    return PubMedTool(client, api_key=key, timeout=30.0, limiter=script.no_pacing, sleep=script.sleep)


def time_out(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ReadTimeout("read timed out", request=request)


async def test_a_maintenance_page_is_asked_for_again_and_the_search_succeeds(
    stand: tuple[httpx2.AsyncClient, Stand],
) -> None:
    client, script = stand
    script.esearch += [MAINTENANCE, ESEARCH]
    script.efetch += [EFETCH]
    found = await tool(client, script).search("statins sepsis", 5)
    assert [item.citation.pmid for item in found] == ["11"]
    assert script.calls("esearch") == 2
    assert script.sleeps == [1.0]


async def test_a_truncated_efetch_body_is_asked_for_again(stand: tuple[httpx2.AsyncClient, Stand]) -> None:
    client, script = stand
    script.esearch += [ESEARCH]
    script.efetch += [TRUNCATED_EFETCH, TRUNCATED_EFETCH, EFETCH]
    found = await tool(client, script).search("statins sepsis", 5)
    assert [item.citation.pmid for item in found] == ["11"]
    assert script.sleeps == [1.0, 2.0]  # backing off


async def test_a_maintenance_page_that_stays_fails_after_the_retries_with_its_title(
    stand: tuple[httpx2.AsyncClient, Stand],
) -> None:
    client, script = stand
    script.esearch += [MAINTENANCE] * 3
    with pytest.raises(UnusableResponseError, match=r"^pubmed: esearch .*'NCBI maintenance'.*asked 3 times"):
        await tool(client, script).search("statins sepsis", 5)
    assert script.sleeps == [1.0, 2.0]


async def test_an_ncbi_error_message_is_not_retried(stand: tuple[httpx2.AsyncClient, Stand]) -> None:
    client, script = stand
    script.esearch += [httpx2.Response(200, json={"esearchresult": {"ERROR": "Invalid query syntax"}})]
    with pytest.raises(SearchError, match="Invalid query syntax"):
        await tool(client, script).search("statins sepsis", 5)
    assert script.calls("esearch") == 1


async def test_one_timeout_is_asked_again(stand: tuple[httpx2.AsyncClient, Stand]) -> None:
    client, script = stand
    script.esearch += [time_out, ESEARCH]
    script.efetch += [EFETCH]
    assert len(await tool(client, script).search("statins sepsis", 5)) == 1
    assert script.calls("esearch") == 2


async def test_a_second_timeout_names_the_host_the_limit_and_the_setting(
    stand: tuple[httpx2.AsyncClient, Stand],
) -> None:
    client, script = stand
    script.esearch += [time_out, time_out]
    with pytest.raises(SearchError) as raised:
        await tool(client, script).search("statins sepsis", 5)
    message = str(raised.value)
    assert message.startswith("pubmed: no answer from eutils.ncbi.nlm.nih.gov within 30 s (ReadTimeout)")
    assert "PUBMED_TIMEOUT" in message
    assert script.calls("esearch") == 2


@pytest.mark.parametrize("status", [429, 503])
async def test_a_retry_after_longer_than_a_search_waits_ends_the_search_saying_when(
    stand: tuple[httpx2.AsyncClient, Stand], status: int
) -> None:
    client, script = stand
    script.esearch += [httpx2.Response(status, headers={"Retry-After": "3600"})]
    with pytest.raises(SearchError) as raised:
        await tool(client, script).search("statins sepsis", 5)
    message = str(raised.value)
    assert "asks to wait 3600 s" in message
    assert re.search(r"try again after \d{4}-\d\d-\d\d \d\d:\d\d UTC$", message), message
    assert isinstance(raised.value, RateLimitError) == (status == 429)
    assert script.sleeps == []  # not asked again sooner than the server said
    assert script.calls("esearch") == 1


async def test_a_retry_after_date_is_read_as_a_wait_until_then(stand: tuple[httpx2.AsyncClient, Stand]) -> None:
    client, script = stand
    script.esearch += [httpx2.Response(503, headers={"Retry-After": "Wed, 21 Oct 2099 07:28:00 GMT"})]
    with pytest.raises(SearchError, match=r"try again after 2099-10-21 07:28 UTC"):
        await tool(client, script).search("statins sepsis", 5)


async def test_a_short_retry_after_is_honoured(stand: tuple[httpx2.AsyncClient, Stand]) -> None:
    client, script = stand
    script.esearch += [httpx2.Response(503, headers={"Retry-After": "12"}), ESEARCH]
    script.efetch += [EFETCH]
    assert len(await tool(client, script).search("statins sepsis", 5)) == 1
    assert script.sleeps == [12.0]


class Chunks(httpx2.AsyncByteStream):
    """A body sent in chunks with no Content-Length, as a streaming server sends it."""

    def __init__(self, chunk: bytes, count: int) -> None:
        self.chunk, self.count, self.sent = chunk, count, 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for _ in range(self.count):
            self.sent += 1
            yield self.chunk


async def test_a_declared_body_over_the_cap_is_refused_unread() -> None:
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, content=b"x" * 5000))
    async with httpx2.AsyncClient(transport=transport) as client:
        with pytest.raises(ResponseTooLargeError, match=r"^pubmed: example\.org sent more than 0\.001 MB"):
            await get_with_retry(client, "https://example.org/x", source="pubmed", read=str, max_bytes=1000)


async def test_a_streamed_body_over_the_cap_is_cut_off_while_reading() -> None:
    stream = Chunks(b"y" * 100, count=1000)
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, stream=stream))
    async with httpx2.AsyncClient(transport=transport) as client:
        with pytest.raises(ResponseTooLargeError, match="the body was not read"):
            await get_with_retry(client, "https://example.org/x", source="web", read=str, max_bytes=1000)
    assert stream.sent == 11  # stopped at the first chunk past the cap, not after 100 kB


async def test_a_body_within_the_cap_reads_as_sent_gzip_and_charset_included() -> None:
    import gzip

    body = "Résumé — ½".encode("iso-8859-15", errors="replace")
    packed = gzip.compress(body)
    headers = {"Content-Encoding": "gzip", "Content-Type": "text/plain; charset=iso-8859-15"}
    transport = httpx2.MockTransport(lambda request: httpx2.Response(200, content=packed, headers=headers))
    async with httpx2.AsyncClient(transport=transport) as client:
        text = await get_with_retry(client, "https://example.org/x", source="web", read=lambda r: r.text)
    assert text == body.decode("iso-8859-15")


# NCBI keys are 36 characters; a longer one leaves room to cut it anywhere.
KEY = "".join(random.Random(9).choices(string.ascii_letters + string.digits, k=40))


def pieces(text: str, size: int = 4) -> set[str]:
    return {text[i : i + size] for i in range(len(text) - size + 1)}


def echoed(request: httpx2.Request, padding: int) -> str:
    """What a careless server writes back: some text, then the request's key."""
    return "E" * padding + f" for api_key={request.url.params['api_key']}&tool=deepcritical"


def echo_page(padding: int) -> Callable[[httpx2.Request], httpx2.Response]:
    """An error page whose title echoes the key (cut to 100 characters in the message)."""

    def reply(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, text=f"<html><head><title>{echoed(request, padding)}</title></head></html>")

    return reply


def echo_500(padding: int) -> Callable[[httpx2.Request], httpx2.Response]:
    """A server error whose body echoes the key (cut to 200 characters)."""

    def reply(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(500, text=echoed(request, padding))

    return reply


def echo_json(padding: int) -> Callable[[httpx2.Request], httpx2.Response]:
    """Cut-off JSON echoing the key (cut to 80 characters)."""

    def reply(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, text='{"error": "' + echoed(request, padding))

    return reply


@pytest.mark.parametrize("echo", [echo_page, echo_500, echo_json])
async def test_a_key_echoed_by_the_server_never_leaks_wherever_the_message_is_cut(
    echo: Callable[[int], Callable[[httpx2.Request], httpx2.Response]],
) -> None:
    assert not pieces(KEY) & pieces("pubmed: esearch returned an HTML page titled malformed JSON HTTP 500")
    leaks = []
    # Every padding from 0 to 250 moves the point where the message is cut (80, 100 or 200 characters)
    # across every position of the key, and past it.
    for padding in range(251):
        script = Stand(esearch=[echo(padding)] * 3)
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(script.handle)) as client:
            with pytest.raises(SearchError) as raised:
                await tool(client, script, api_key=KEY).search("statins sepsis", 5)
        assert KEY in str(script.requests[0].url)  # the key was sent, and echoed
        if leaked := pieces(KEY) & pieces(str(raised.value)):
            leaks.append((padding, sorted(leaked)[:3], str(raised.value)))
    assert leaks == []
