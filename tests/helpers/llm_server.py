"""A scripted model behind the real wire formats (helpers/llm_wires.py), and a run of the real Orchestrator
whose one ``httpx2.AsyncClient`` reaches it: the demo stand-ins answer the search APIs (the same router as
``--demo-sources``), the scripted model the LLM endpoint."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from deepcritical.appraisal.framing import parse_evidence
from deepcritical.config import Settings
from deepcritical.demo.transport import StandInRouter
from deepcritical.events import RunWarning, StageEvent
from deepcritical.run.events import RunFinished
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.run.record import write_outputs
from deepcritical.run.setup import assemble, http_client
from deepcritical.sources.factory import make_http_client
from helpers.llm_wires import Ask, Reply, Wire, anthropic_events
from helpers.research_fakes import QUESTION

BRAIN_QUERIES = ["metformin Alzheimer disease", "metformin tau amyloid mouse"]
FABRICATED_ID = "pmid:1"
FABRICATED_URL = "https://fabricated.example.org/metformin-cures-alzheimers"
INVENTED_CLAIM = "An unpublished trial proved that metformin cures Alzheimer's disease."
# What llama.cpp's Python server (llama-cpp-python 0.3) answers to ``response_format: json_schema``: a 500.
LLAMA_CPP_REFUSAL = {
    "error": {
        "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
        "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': "
        "\"'text' or 'json_object'\"}}\n\n  File \"/venv/lib/python3.11/site-packages/llama_cpp/server/app.py\", "
        "line 376, in create_chat_completion\n    POST /v1/chat/completions",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}
LLAMA_CPP_REFUSAL_STATUS = 500


def assessment(ids: list[str]) -> dict[str, Any]:
    # Scores within what the demo evidence can support (stages.ratings caps a cohort-led clinical score at 6), so
    # no cap revokes "sufficient" and the run stops after one round, as this plumbing test expects.
    score = {"score": 8, "reason": f"Consistent evidence ({', '.join(ids[:2])})."}
    return {
        "mechanism": score,
        "clinical": {"score": 5, "reason": f"Cohorts and small trials ({', '.join(ids[:2])})."},
        "safety": {"score": 5, "reason": "Gastrointestinal effects and B12 deficiency are reported."},
        "sufficient": True,
        "confidence": 0.9,
        "gaps": [],
        "next_queries": [],
        "candidate_answers": ["Possibly, pending larger trials."],
        "cited_ids": ids[:3],
    }


def report(question: str, ids: list[str]) -> dict[str, Any]:
    first, second = ids[:2]
    return {
        "question": question,
        "answer_brief": "Metformin shows mechanistic promise for Alzheimer's disease; clinical evidence is limited.",
        "key_findings": [
            {"statement": "Metformin acted on AMPK and tau pathology in preclinical models.", "evidence_ids": [first]},
            {
                "statement": f"Clinical signals are mixed; details at {FABRICATED_URL} .",
                "evidence_ids": [second, FABRICATED_ID],
            },
            {"statement": INVENTED_CLAIM, "evidence_ids": [FABRICATED_ID]},
        ],
        "contrary_evidence": [],
        "limitations": ["Few randomised trials."],
        "references": [first, second, FABRICATED_ID],
    }


def answer_for(ask: Ask, ids: list[str]) -> dict[str, Any]:
    if ask.agent == "brain":
        return {"queries": BRAIN_QUERIES, "rationale": "The question's drug and disease, then a mechanism."}
    if ask.agent == "judge":
        return assessment(ids)
    return report(QUESTION, ids)


def scripted(ask: Ask, ids: list[str]) -> Reply:
    """A model that does its job: the Brain searches first, then every agent gives its answer in the mode asked."""
    if ask.agent == "brain" and "search" in ask.tools and "search" not in ask.called:
        return Reply(tool="search", args={"queries": BRAIN_QUERIES})
    args = answer_for(ask, ids)
    if ask.mode == "tool":
        assert ask.output_tool is not None
        return Reply(tool=ask.output_tool, args=args)
    return Reply(text=json.dumps(args))


@dataclass
class LlmServer:
    """The LLM endpoint as a scripted model. It first answers ``statuses`` in order (a 500 to retry), then
    ``permanent`` if set (a 401 for every request), else ``script``'s reply (the server's answer as an
    ``httpx2.Response`` when ``raw`` is given). ``refuse_json_schema``: answer a native-mode request as
    llama-cpp-python does. Every other host is left to the stand-in sources."""

    wire: Wire
    statuses: list[int] = field(default_factory=list)
    permanent: int | None = None
    refuse_json_schema: bool = False
    script: Callable[[Ask, list[str]], Reply] = scripted
    raw: Callable[[Ask], httpx2.Response] | None = None
    requests: list[httpx2.Request] = field(default_factory=list)  # every request to the LLM host, in order
    llm_requests: list[httpx2.Request] = field(default_factory=list)
    asks: list[Ask] = field(default_factory=list)
    replies: list[tuple[str, int]] = field(default_factory=list)  # (agent, status) per LLM request
    prompt_ids: dict[str, list[str]] = field(default_factory=dict)  # agent -> evidence ids it was shown
    usage: list[tuple[int, int]] = field(default_factory=list)
    streamed: int = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        assert request.url.host == self.wire.llm_host, f"unexpected host {request.url}"
        self.requests.append(request)
        if self.wire.is_models(request):
            return httpx2.Response(200, json=self.wire.models_answer())
        assert self.wire.is_llm(request), f"unexpected LLM call {request.method} {request.url}"
        self.llm_requests.append(request)
        ask = self.wire.read(json.loads(request.content))
        self.asks.append(ask)
        status = self.statuses.pop(0) if self.statuses else self.permanent
        if self.refuse_json_schema and ask.mode == "native":
            self.replies.append((ask.agent, LLAMA_CPP_REFUSAL_STATUS))
            return httpx2.Response(LLAMA_CPP_REFUSAL_STATUS, json=LLAMA_CPP_REFUSAL)
        if status is not None:
            self.replies.append((ask.agent, status))
            return httpx2.Response(status, json=self.wire.error(status))
        if self.raw is not None:
            response = self.raw(ask)
            self.replies.append((ask.agent, response.status_code))
            return response
        ids = [view.id for view in parse_evidence(ask.user_text)]
        self.prompt_ids.setdefault(ask.agent, ids)
        reply = self.script(ask, ids)
        # Token counts as a server reports them: about four characters a token.
        usage = (len(request.content) // 4, len(json.dumps(reply.args or reply.text)) // 4)
        self.usage.append(usage)
        self.replies.append((ask.agent, 200))
        answer = self.wire.answer(len(self.llm_requests), reply, usage)
        if json.loads(request.content).get("stream"):  # Anthropic, when pydantic-ai streams
            self.streamed += 1
            return httpx2.Response(200, content=anthropic_events(answer), headers={"Content-Type": "text/event-stream"})
        return httpx2.Response(200, json=answer)


def live_settings(wire: Wire, home: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "DEMO_MODE": False,
        "DEEPCRITICAL_DEMO_SOURCES": True,
        "GOOGLE_API_KEY": None,
        "OPENAI_API_KEY": None,
        "ANTHROPIC_API_KEY": None,
        "DEEPCRITICAL_HOME": str(home),
        # The web source is ddgs (its stand-in answers in process); these three go through the run's client.
        "DEEPCRITICAL_SOURCES": "pubmed,searxng,you",
        "DEEPCRITICAL_MAX_RESULTS": 5,
        **wire.settings(),
        **overrides,
    }
    return Settings(_env_file=None, **values).demo_sources_preset()  # type: ignore[arg-type]


@dataclass
class Run:
    outcome: ResearchOutcome
    markdown: str
    record: dict[str, Any]
    raw: str
    sleeps: list[float]
    events: list[StageEvent | RunFinished]

    @property
    def warnings(self) -> list[str]:
        return [event.message for event in self.events if isinstance(event, RunWarning)]


async def research(
    server: LlmServer,
    tmp_path: Path,
    *,
    stand_ins: Callable[[httpx2.Request], httpx2.Response] | None = None,
    out: str = "out",
    settings: Settings | None = None,
    **overrides: object,
) -> Run:
    """One run; ``stand_ins`` answers the sources instead of the demo stand-ins (e.g. all of them down)."""
    settings = settings or live_settings(server.wire, tmp_path / "home", **overrides)
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    # The run's client as ``--demo-sources`` builds it, with the scripted model in place of the network.
    events: list[StageEvent | RunFinished] = []
    network = httpx2.MockTransport(server)
    client = (
        http_client(settings, network=network)
        if stand_ins is None
        else make_http_client(StandInRouter(network, httpx2.MockTransport(stand_ins)))
    )
    async with client:
        async for event in Orchestrator(assemble(settings, client, sleep=sleep)).run(QUESTION):
            events.append(event)
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    report_path, run_path = write_outputs(finished.outcome, tmp_path / out)
    raw = run_path.read_text(encoding="utf-8")
    return Run(finished.outcome, report_path.read_text(encoding="utf-8"), json.loads(raw), raw, sleeps, events)
