"""A redirect from an upstream is followed to the same host or to a public address, never into the server's
own network (a loopback, private or link-local address, e.g. a cloud's metadata service)."""

from __future__ import annotations

import httpx2
import pytest

from deepcritical.errors import SearchError
from deepcritical.sources.factory import make_http_client
from deepcritical.sources.redirects import RedirectRefusedError
from deepcritical.sources.searxng import SearxngTool

UPSTREAM = "https://searx.example.org/search"


def redirecting(to: str) -> tuple[httpx2.MockTransport, list[str]]:
    """An upstream that redirects its first request to ``to`` and answers every other one with JSON."""
    seen: list[str] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(str(request.url))
        if len(seen) == 1:
            return httpx2.Response(302, headers={"Location": to})
        return httpx2.Response(200, json={"results": []})

    return httpx2.MockTransport(handle), seen


@pytest.mark.parametrize(
    "target",
    [
        "http://127.0.0.1:6379/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.7/admin",
        "http://[::1]:8000/api/runs",
        "http://localhost:8080/",  # a name whose address is local
    ],
)
async def test_a_redirect_into_the_local_network_is_not_followed(target: str) -> None:
    transport, seen = redirecting(target)
    async with make_http_client(transport) as client:
        with pytest.raises(RedirectRefusedError, match=r"refused a redirect from searx\.example\.org to "):
            await client.get(UPSTREAM)
    assert seen == [UPSTREAM]  # the local address was never asked


@pytest.mark.parametrize("target", ["/search/?q=x", "https://searx.example.org/other", "https://93.184.216.34/x"])
async def test_a_redirect_to_the_same_host_or_a_public_address_is_followed(target: str) -> None:
    transport, seen = redirecting(target)
    async with make_http_client(transport) as client:
        response = await client.get(UPSTREAM)
    assert response.status_code == 200
    assert len(seen) == 2


async def test_a_source_refused_a_redirect_says_so_in_one_line() -> None:
    transport, seen = redirecting("http://169.254.169.254/latest/meta-data/")
    async with make_http_client(transport) as client:
        tool = SearxngTool(client, base_url="https://searx.example.org")
        with pytest.raises(SearchError, match=r"^searxng: .*refused a redirect") as raised:
            await tool.search("metformin")
    assert "\n" not in str(raised.value)
    assert len(seen) == 1
