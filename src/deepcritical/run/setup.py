"""What a run is built from, decided once from the settings: the HTTP client (the network, the demo
stand-ins' transport, or both: stand-in sources with a live model), the sources, the models (the live one,
or the demo FunctionModels), the stages and the store. The only place that knows demo mode and demo
sources exist; everything it builds is the same code in every mode. ``assemble`` puts the parts of a run
together; the orchestrator only receives them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx2

from deepcritical.agents.models import AgentModels, live_models
from deepcritical.appraisal.readers import load_reader
from deepcritical.config import Settings
from deepcritical.evidence import EvidenceStore
from deepcritical.evidence.resources import Resources
from deepcritical.reading.results import ResultReader
from deepcritical.run.stages import Stages
from deepcritical.sources.factory import Sources, build_sources, make_http_client
from deepcritical.sources.library import LibraryTool
from deepcritical.sources.pubmed import PubMedTool
from deepcritical.sources.ratelimit import ncbi_limiter
from deepcritical.stages.ports import EvidenceStoreLike, RecordChecker, SearchHandlerLike, TermContextSource

StoreOpener = Callable[[Settings, str, str], Awaitable[EvidenceStoreLike]]


def http_client(settings: Settings, network: httpx2.AsyncBaseTransport | None = None) -> httpx2.AsyncClient:
    """The run's one HTTP client. In demo mode its transport is the local stand-in for every API; with demo
    sources the stand-ins answer the sources' hosts and ``network`` (by default the real one) the rest."""
    if settings.demo_mode or settings.demo_sources:  # the stand-ins answer on the demo clock's today
        from deepcritical.demo.clock import ClockedTransport
        from deepcritical.demo.transport import StandInRouter, demo_transport

        stand_ins: httpx2.AsyncBaseTransport = (
            demo_transport() if settings.demo_mode else StandInRouter(network or httpx2.AsyncHTTPTransport())
        )
        return make_http_client(ClockedTransport(stand_ins, settings.demo_today))
    return make_http_client(network)


async def _no_pacing() -> None:
    """The local stand-ins need no politeness limit."""


def ncbi_pacing(settings: Settings) -> Callable[[], Awaitable[None]]:
    """What every NCBI request waits on: nothing for the stand-ins; otherwise one limit shared by every
    process of the machine (or, with REDIS_URL, every machine of the team), as NCBI counts requests per IP
    and per key."""
    return _no_pacing if settings.stand_in_sources else ncbi_limiter(settings)


def sources(settings: Settings, client: httpx2.AsyncClient, library: LibraryTool | None = None) -> Sources:
    """The settings' sources on the run's client (``library``: a ready ``library`` source)."""
    if settings.stand_in_sources:
        from deepcritical.demo.ddgs import DemoDDGS

        return build_sources(
            settings, client, ddgs_factory=DemoDDGS, ncbi_limiter=ncbi_pacing(settings), library=library
        )
    return build_sources(settings, client, ncbi_limiter=ncbi_pacing(settings), library=library)


def library_source(settings: Settings, resources: Resources) -> LibraryTool | None:
    """The ``library`` source, when the settings search it, on the process's embedding service and store
    connection (``Resources.connect``)."""
    if "library" not in settings.sources:
        return None
    return LibraryTool(settings, embeddings=resources.embeddings, connect=resources.connect)


def record_checker(settings: Settings, client: httpx2.AsyncClient) -> RecordChecker:
    """The source a watch re-checks its carried PubMed records with (their retractions and expressions of
    concern as PubMed shows them now), on the run's client and NCBI's shared pace."""
    group = settings.search.pubmed
    return PubMedTool(
        client,
        api_key=group.api_key,
        email=group.email,
        tool=group.tool,
        timeout=group.timeout,
        base_url=group.base_url,
        limiter=ncbi_pacing(settings),
    )


def agent_models(settings: Settings, client: httpx2.AsyncClient, result_reader: ResultReader) -> AgentModels:
    """The Brain's, the Judge's and the Report's models; a live model without its key is a ConfigError. The demo's
    Judge and Report read studies with ``result_reader``, the run's: a second reader would read it all again."""
    if settings.demo_mode:
        from deepcritical.demo.models import demo_models

        brain, judge, report = demo_models(result_reader)
        return AgentModels(
            brain=brain, judge=judge, report=report, name="demo (deterministic FunctionModels)", report_in_code=True
        )
    return live_models(settings, client)


def store_opener(resources: Resources) -> StoreOpener:
    """How a run opens its store on the process's embedding service and store connection (``Resources.connect``).
    The embedding model starts loading while the first searches run, unless the vector cache already holds the
    question's vector: a question asked before most likely finds evidence whose vectors are all known too, and
    a run that embeds nothing new never loads the model (0.27 CPU s)."""

    async def open_store(settings: Settings, run_id: str, question: str) -> EvidenceStore:
        embeddings = resources.embeddings
        known = await asyncio.to_thread(embeddings.knows, [question])
        return await EvidenceStore.open(settings, embeddings, run_id, preload=not known, connect=resources.connect)

    return open_store


@dataclass(frozen=True)
class RunParts:
    """Everything a run is made of. ``models`` is None for a run without a language model (its stages are
    code only). ``store``, when given, is opened and closed by the caller (e.g. one store for many runs);
    otherwise every run opens its own with ``open_store`` and closes it. ``resources`` are the process's
    (its redactor, embedding service and store connection)."""

    settings: Settings
    client: httpx2.AsyncClient
    handler: SearchHandlerLike
    research_engine: TermContextSource | None
    models: AgentModels | None
    stages: Stages
    resources: Resources
    open_store: StoreOpener
    # The run's result reader (``Settings.reader``), loaded once: the demo's Judge and Report and the verdict read
    # with the same one, so what its transformer has read is read once a run (``reading.results``).
    result_reader: ResultReader
    store: EvidenceStoreLike | None = None
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep

    @property
    def model_name(self) -> str:
        return self.models.name if self.models is not None else "none (code only)"


def assemble(
    settings: Settings,
    client: httpx2.AsyncClient,
    *,
    code_only: bool = False,
    models: AgentModels | None = None,
    handler: SearchHandlerLike | None = None,
    research_engine: TermContextSource | None = None,
    store: EvidenceStoreLike | None = None,
    open_store: StoreOpener | None = None,
    resources: Resources | None = None,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> RunParts:
    """The parts of a run on ``client``: the settings' sources, models and stages, unless given (a test or
    an eval harness passes its own). Models are resolved here, at start, so a missing API key is a
    ConfigError before any search. With ``code_only`` no model is built and every stage runs its code half.
    ``resources`` are the process's; without them (a library call, a test) the run builds its own, for it alone."""
    resources = resources or Resources(settings, share_connection=False)
    result_reader = load_reader(settings.reader, settings.named("reader"))
    if handler is None:
        built = sources(settings, client, library_source(settings, resources))
        handler, research_engine = built.handler, research_engine or built.research_engine
    if code_only or settings.no_llm:  # --no-llm: every stage by its code half, no model built
        models, stages = None, Stages.code_only()
    else:
        models = models or agent_models(settings, client, result_reader)  # live models talk through the run's client
        stages = Stages.with_models(models, term_lookups=research_engine is not None)
    return RunParts(
        settings=settings,
        client=client,
        handler=handler,
        research_engine=research_engine,
        models=models,
        stages=stages,
        resources=resources,
        open_store=open_store or store_opener(resources),
        result_reader=result_reader,
        store=store,
        clock=clock,
        sleep=sleep,
    )
