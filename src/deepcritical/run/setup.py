"""What a run is built from, decided once from the settings: the HTTP client (the network, the demo
stand-ins' transport, or both: stand-in sources with a live model), the sources, the models (the live one,
or the demo FunctionModels) and the store. The only place that knows demo mode and demo sources exist;
everything it builds is the same code in every mode."""

from __future__ import annotations

import httpx2

from deepcritical.agents.models import AgentModels, live_models
from deepcritical.config import Settings
from deepcritical.evidence import EmbeddingService, EvidenceStore
from deepcritical.sources.factory import Sources, build_sources, make_http_client
from deepcritical.sources.ratelimit import ncbi_limiter


def http_client(settings: Settings, network: httpx2.AsyncBaseTransport | None = None) -> httpx2.AsyncClient:
    """The run's one HTTP client. In demo mode its transport is the local stand-in for every API; with demo
    sources the stand-ins answer the sources' hosts and ``network`` (by default the real one) the rest."""
    if settings.demo_mode:
        from deepcritical.demo.transport import demo_transport

        return make_http_client(demo_transport())
    if settings.demo_sources:
        from deepcritical.demo.transport import StandInRouter

        return make_http_client(StandInRouter(network or httpx2.AsyncHTTPTransport()))
    return make_http_client(network)


async def _no_pacing() -> None:
    """The local stand-ins need no politeness limit."""


def sources(settings: Settings, client: httpx2.AsyncClient) -> Sources:
    if settings.stand_in_sources:
        from deepcritical.demo.ddgs import DemoDDGS

        return build_sources(settings, client, ddgs_factory=DemoDDGS, ncbi_limiter=_no_pacing)
    # NCBI counts requests per IP and per key, so every process on the machine (or, with REDIS_URL, every
    # machine of the team) shares one limit.
    return build_sources(settings, client, ncbi_limiter=ncbi_limiter(settings))


def models(settings: Settings, client: httpx2.AsyncClient) -> AgentModels:
    """The Brain's, the Judge's and the Report's models; a live model without its key is a ConfigError."""
    if settings.no_llm:
        from deepcritical.run.code_only import no_models

        return no_models()
    if settings.demo_mode:
        from deepcritical.demo.models import demo_models

        brain, judge, report = demo_models()
        return AgentModels(brain=brain, judge=judge, report=report, name="demo (deterministic FunctionModels)")
    return live_models(settings, client)


async def open_store(settings: Settings, run_id: str) -> EvidenceStore:
    return await EvidenceStore.open(settings, EmbeddingService(settings.embedding_model), run_id)
