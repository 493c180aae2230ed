"""``--demo`` and ``--demo-sources`` are offline: a run through the real setup path (``run.setup``'s client,
sources and stages; every source enabled) sends nothing to the network. The network here is the real
transport ``httpx2`` falls back to, patched to record every request it is given (and refuse it)."""

from __future__ import annotations

import os
from pathlib import Path

import httpx2
import pytest

from deepcritical.config import Settings, load_settings
from deepcritical.demo import transport
from deepcritical.demo.transport import STAND_IN_HOSTS, StandInRouter
from deepcritical.models import KNOWN_SOURCES
from deepcritical.run import setup
from deepcritical.run.execute import RunSource, run_to_folder
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.source_table import SOURCES
from helpers.research_fakes import FakeStore

# Every source but the user's own library (local, no network): the default ones and OpenAlex, asked for by name.
EVERY_SOURCE = [name for name in KNOWN_SOURCES if name != "library"]

pytestmark = pytest.mark.usefixtures("plain_logs")


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every request that reaches the real network transport, as ``host path``."""
    sent: list[str] = []

    async def record(self: httpx2.AsyncHTTPTransport, request: httpx2.Request) -> httpx2.Response:
        sent.append(f"{request.url.host}{request.url.path}")
        raise httpx2.ConnectError("the network is off in this test", request=request)

    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", record)
    return sent


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No keys, SearXNG or model server from the developer's environment; a home of the test's own."""
    for name in list(os.environ):
        if name.endswith(("_API_KEY", "_BASE_URL", "_URL")) or name.startswith(("DEEPCRITICAL_", "DEMO_", "SEARXNG_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("DEEPCRITICAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def in_memory(settings: Settings, client: httpx2.AsyncClient) -> RunSource:
    """The settings' own sources and stages on the run's client; only the store is in memory."""
    return Orchestrator(setup.assemble(settings, client, store=FakeStore()))


@pytest.mark.parametrize(
    "options",
    [{"demo_mode": True}, {"demo_sources": True, "no_llm": True}],
    ids=["--demo", "--demo-sources"],
)
async def test_a_demo_run_with_every_source_sends_nothing_to_the_network(
    options: dict[str, bool], network: list[str], clean_env: Path
) -> None:
    settings = load_settings(sources=",".join(EVERY_SOURCE), max_iterations=2, **options)
    assert settings.sources == EVERY_SOURCE
    done = await run_to_folder(
        "Can metformin be repurposed for Alzheimer's disease?",
        settings,
        folder=clean_env / "out",
        run_source=in_memory,
    )
    assert network == []
    assert done.outcome.error is None
    # Every source was searched and answered from the stand-ins (none failed for want of the network).
    assert set(done.outcome.sources) == set(EVERY_SOURCE)


def test_every_host_a_source_reaches_in_demo_sources_is_intercepted() -> None:
    settings = load_settings(demo_sources=True)
    search = settings.search
    bases = [search.pubmed.base_url, search.searxng.base_url, *(str(api.base_url) for api in search.apis.values())]
    hosts = {httpx2.URL(base).host for base in bases if base is not None}
    assert len(hosts) == 2 + len(search.apis)  # E-utilities, SearXNG and each public JSON API
    assert {entry.stand_in_host for entry in SOURCES if entry.stand_in} == STAND_IN_HOSTS
    assert hosts <= STAND_IN_HOSTS
    assert frozenset(transport.STAND_INS) == STAND_IN_HOSTS  # routing and interception: one table


async def test_the_router_sends_every_stand_in_host_to_the_stand_ins() -> None:
    reached: list[str] = []

    def model_server(request: httpx2.Request) -> httpx2.Response:
        reached.append(request.url.host)
        return httpx2.Response(200, json={})

    def stand_ins(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(204)

    router = StandInRouter(httpx2.MockTransport(model_server), httpx2.MockTransport(stand_ins))
    async with httpx2.AsyncClient(transport=router) as client:
        for host in sorted(STAND_IN_HOSTS):
            assert (await client.get(f"https://{host}/anything")).status_code == 204
        await client.get("http://llm.local/v1/chat/completions")
    assert reached == ["llm.local"]
