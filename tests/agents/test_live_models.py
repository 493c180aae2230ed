"""The live (non-demo) LLM path end to end, without the network: the real Orchestrator, the real sources,
store and agents, and real pydantic-ai models whose SDKs send their requests through the run's one
``httpx2.AsyncClient``. Its ``MockTransport`` answers the search APIs with the demo stand-ins and the LLM
endpoint with a small scripted model speaking the real wire format of OpenAI Chat Completions, Gemini
``generateContent`` or Anthropic Messages (agents/llm_wires.py)."""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import httpx2
import pytest

from agents.llm_wires import ANTHROPIC, WIRES, Wire, anthropic_events
from agents.research_fakes import QUESTION, plain_logs
from deepcritical.stages.framing import parse_evidence
from deepcritical.agents.models import LLM_TIMEOUT, llm_http_client
from deepcritical.config import Settings
from deepcritical.events import ResearchOutcome
from deepcritical.run.orchestrator import Orchestrator
from deepcritical.run.record import write_outputs
from deepcritical.config import DEMO_SEARXNG_URL
from deepcritical.demo.transport import demo_transport

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("plain_logs")]
_ = plain_logs  # imported for its fixture

BRAIN_QUERIES = ["metformin Alzheimer disease", "metformin tau amyloid mouse"]
FABRICATED_ID = "pmid:1"
FABRICATED_URL = "https://fabricated.example.org/metformin-cures-alzheimers"
INVENTED_CLAIM = "An unpublished trial proved that metformin cures Alzheimer's disease."
BRAIN_TOOLS = {"search", "term_context", "recall"}


def assessment(ids: list[str]) -> dict[str, Any]:
    score = {"score": 8, "reason": f"Consistent evidence ({', '.join(ids[:2])})."}
    return {
        "mechanism": score,
        "clinical": score,
        "safety": {"score": 7, "reason": "Gastrointestinal effects and B12 deficiency are reported."},
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


@dataclass
class LlmServer:
    """The run's transport: the LLM endpoint is a scripted model; every other host is the demo stand-in.
    The LLM endpoint first answers ``statuses`` in order (a 500 to retry), then ``permanent`` if set (a
    401 for every request), else the script."""

    wire: Wire
    statuses: list[int] = field(default_factory=list)
    permanent: int | None = None
    demo: httpx2.MockTransport = field(default_factory=demo_transport)
    llm_requests: list[httpx2.Request] = field(default_factory=list)
    replies: list[tuple[str, int]] = field(default_factory=list)  # (agent, status) per LLM request
    prompt_ids: dict[str, list[str]] = field(default_factory=dict)  # agent -> evidence ids it was shown
    usage: list[tuple[int, int]] = field(default_factory=list)
    search_hosts: set[str] = field(default_factory=set)
    streamed: int = 0

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.host != self.wire.llm_host:
            self.search_hosts.add(request.url.host)
            return self.demo.handle_request(request)
        assert self.wire.is_llm(request), f"unexpected LLM call {request.method} {request.url}"
        self.llm_requests.append(request)
        body = json.loads(request.content)
        tools, user_text, called = self.wire.read(body)
        agent = "brain" if "search" in tools else "judge" if self._has(tools, "mechanism") else "report"
        status = self.statuses.pop(0) if self.statuses else self.permanent
        if status is not None:
            self.replies.append((agent, status))
            return httpx2.Response(status, json=self.wire.error(status))
        output = next(name for name in tools if name not in BRAIN_TOOLS)
        ids = [view.id for view in parse_evidence(user_text)]
        self.prompt_ids.setdefault(agent, ids)
        if agent == "brain":
            searched = "search" in called
            tool, args = (output, {"queries": BRAIN_QUERIES}) if searched else ("search", {"queries": BRAIN_QUERIES})
        elif agent == "judge":
            tool, args = output, assessment(ids)
        else:
            tool, args = output, report(QUESTION, ids)
        # Token counts as a server reports them: about four characters a token.
        usage = (len(request.content) // 4, len(json.dumps(args)) // 4)
        self.usage.append(usage)
        self.replies.append((agent, 200))
        answer = self.wire.answer(len(self.llm_requests), tool, args, usage)
        if body.get("stream"):
            self.streamed += 1
            return httpx2.Response(200, content=anthropic_events(answer), headers={"Content-Type": "text/event-stream"})
        return httpx2.Response(200, json=answer)

    @staticmethod
    def _has(tools: dict[str, dict[str, Any]], name: str) -> bool:
        return any(name in schema.get("properties", {}) for schema in tools.values())


@pytest.fixture(autouse=True)
def no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing from the machine: the providers must run on what the settings pass them.
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def no_request_leaves_by_another_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model that bypassed the run's client would reach the network through httpx2's own transport."""

    async def refuse(self: httpx2.AsyncHTTPTransport, request: httpx2.Request) -> httpx2.Response:
        raise AssertionError(f"a request bypassed the run's client: {request.method} {request.url}")

    monkeypatch.setattr(httpx2.AsyncHTTPTransport, "handle_async_request", refuse)


def live_settings(wire: Wire, home: Path) -> Settings:
    values: dict[str, object] = {
        "DEMO_MODE": False,
        "GOOGLE_API_KEY": None,
        "OPENAI_API_KEY": None,
        "ANTHROPIC_API_KEY": None,
        "DEEPCRITICAL_HOME": str(home),
        # The web source is ddgs, which has its own HTTP stack; these three go through the run's client.
        "DEEPCRITICAL_SOURCES": "pubmed,searxng,you",
        "SEARXNG_BASE_URL": DEMO_SEARXNG_URL,
        "YOU_API_KEY": "you-live-test-key",
        # With a key the process-wide NCBI limiter allows 10 requests a second, so the test waits for nothing.
        "NCBI_API_KEY": "ncbi-live-test-key",
        "DEEPCRITICAL_MAX_RESULTS": 5,
        **wire.settings(),
    }
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


@dataclass
class Run:
    outcome: ResearchOutcome
    markdown: str
    record: dict[str, Any]
    raw: str
    sleeps: list[float]


async def research(server: LlmServer, tmp_path: Path) -> Run:
    settings = live_settings(server.wire, tmp_path / "home")
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    # The run's client as make_http_client builds it (30 s timeout), with the scripted transport for the network.
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(server), timeout=httpx2.Timeout(30.0, connect=10.0))
    async with client:
        outcome = await Orchestrator(settings, client=client, sleep=sleep).research(QUESTION)
    report_path, run_path = write_outputs(outcome, tmp_path / "out")
    raw = run_path.read_text(encoding="utf-8")
    return Run(outcome, report_path.read_text(encoding="utf-8"), json.loads(raw), raw, sleeps)


CITED = re.compile(r"Evidence id: `([^`]+)`")


@pytest.mark.parametrize("wire", WIRES)
async def test_a_live_model_runs_the_research_through_the_runs_client(wire: Wire, tmp_path: Path) -> None:
    server = LlmServer(wire)
    run = await research(server, tmp_path)
    outcome = run.outcome

    assert outcome.error is None
    assert outcome.errors == []
    assert outcome.stop_reason == "sufficient"
    assert not outcome.demo
    assert not outcome.report_fallback

    # The Brain searched, then finished; the Judge judged once; the Report was sent back twice for its
    # fabricated id (the output validator) and accepted on its last attempt.
    assert [agent for agent, _ in server.replies] == ["brain", "brain", "judge", "report", "report", "report"]
    assert outcome.searches[0].queries == BRAIN_QUERIES
    assert outcome.plans[0].queries == BRAIN_QUERIES
    assert {"pubmed", "searxng"} <= set(outcome.searches[0].sources_answered)
    assert len({item.citation.source for item in outcome.evidence}) >= 2
    assert {"eutils.ncbi.nlm.nih.gov", "searxng.demo.invalid"} <= server.search_hosts

    # The Judge cited ids it read from its evidence block; they are kept.
    judged = server.prompt_ids["judge"]
    assert judged
    assert outcome.assessments[0].cited_ids == judged[:3]

    # The report: the real ids stay, the fabricated id, the invented claim and the URL are gone.
    collected = {item["id"] for item in run.record["evidence"]}
    cited = set(CITED.findall(run.markdown))
    real = server.prompt_ids["report"][:2]
    assert set(real) <= cited <= collected
    assert not re.search(rf"{FABRICATED_ID}\b", run.markdown)
    assert FABRICATED_URL not in run.markdown
    assert INVENTED_CLAIM not in run.markdown
    # run.json keeps the audit of what the code removed.
    assert FABRICATED_ID in outcome.citation_audit.dropped_ids
    assert any(FABRICATED_URL in url for url in outcome.citation_audit.stripped_urls)
    assert all(set(finding.evidence_ids) <= collected for finding in outcome.report.key_findings)

    # Usage is what the server reported, request by request.
    assert run.record["llm_usage"] == {
        "requests": len(server.llm_requests),
        "input_tokens": sum(prompt for prompt, _ in server.usage),
        "output_tokens": sum(completion for _, completion in server.usage),
    }
    assert run.record["llm_usage"]["requests"] == 6

    # Every LLM request went through the run's client, carried the key, and had the LLM timeout rather
    # than the run client's 30 s; the key is in no output.
    assert len(server.llm_requests) == 6
    for request in server.llm_requests:
        assert wire.sent_key(request) == wire.key
        assert request.extensions["timeout"]["read"] == LLM_TIMEOUT.read
        assert request.extensions["timeout"]["connect"] <= LLM_TIMEOUT.connect
    assert wire.key not in run.raw
    assert wire.key not in run.markdown
    assert run.sleeps == []
    # Anthropic's answers came as server-sent events, read through the bridge as they streamed.
    assert server.streamed == (6 if wire is ANTHROPIC else 0)


@pytest.mark.parametrize("wire", WIRES)
async def test_a_server_error_from_the_model_is_retried(wire: Wire, tmp_path: Path) -> None:
    server = LlmServer(wire, statuses=[500])
    run = await research(server, tmp_path)

    # The SDKs do not retry on their own (``max_retries=0``): the run retries, once, with its own sleep.
    assert server.replies[:2] == [("brain", 500), ("brain", 200)]
    assert run.sleeps == [1.0]
    assert run.outcome.error is None
    assert run.outcome.errors == []
    assert run.outcome.stop_reason == "sufficient"
    assert not run.outcome.report_fallback


@pytest.mark.parametrize("wire", WIRES)
async def test_a_rejected_key_ends_the_run_with_a_report_not_a_traceback(wire: Wire, tmp_path: Path) -> None:
    server = LlmServer(wire, permanent=401)
    run = await research(server, tmp_path)
    outcome = run.outcome

    # A 401 is not retried: one request from the Brain, one from the Report, and no waiting.
    assert server.replies == [("brain", 401), ("report", 401)]
    assert run.sleeps == []
    assert outcome.stop_reason == "llm_failed"
    assert any("401" in message for message in outcome.errors)
    # Queries built in code still searched, so the run has evidence and an extractive, cited report;
    # ``outcome.error`` is documented for a run that ends with no evidence, which this one did not.
    assert outcome.evidence
    assert outcome.error is None
    assert outcome.report_fallback
    assert outcome.report_fallback_reason == "report_failed"
    cited = set(CITED.findall(run.markdown))
    assert cited
    assert cited <= {item["id"] for item in run.record["evidence"]}
    # The provider echoed the key in its error; the run recorded the error without it.
    assert wire.key not in run.raw
    assert wire.key not in run.markdown


async def test_the_bridge_reports_transport_failures_as_httpx2_errors_and_leaves_the_run_client_open() -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)) as client:
        bridge = llm_http_client(client)
        # The Anthropic SDK and pydantic-ai's Google model catch httpx2 errors only: an httpx one would escape
        # their mapping to a connection error, which the run retries.
        with pytest.raises(httpx2.ConnectError, match="connection refused"):
            await bridge.post("http://llm.local/v1/chat/completions", json={})
        await bridge.aclose()
        assert not client.is_closed


async def test_the_bridge_hands_on_a_compressed_body_decoded() -> None:
    payload = {"choices": [], "note": "x" * 200}

    def gzipped(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, content=gzip.compress(json.dumps(payload).encode()), headers={"Content-Encoding": "gzip"}
        )

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(gzipped)) as client:
        response = await llm_http_client(client).post("http://llm.local/v1/chat/completions", json={"a": 1})
        assert response.json() == payload
