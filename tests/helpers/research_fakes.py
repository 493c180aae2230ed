"""Small in-memory stand-ins for the search handler, the evidence store and the ResearchEngine, implementing the
interfaces the research loop codes against (deepcritical.stages.ports); the metformin corpus; a judge that always
asks for more; and the check that a finished run cites only what it collected."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo

from deepcritical.agents.deps import ResearchDeps
from deepcritical.config import Settings
from deepcritical.models import Evidence, Grade, SearchResult, SourceFailure, SourceName, merge_records
from deepcritical.run.outcome import ResearchOutcome
from deepcritical.stages.collection import RunEvidence
from deepcritical.stages.search import SearchStage
from deepcritical.stages.state import Budget, RunState
from helpers import builders

QUESTION = "Can metformin be repurposed for Alzheimer's disease?"


def corpus_evidence(
    number: int,
    text: str,
    *,
    source: SourceName = "pubmed",
    title: str | None = None,
    url: str | None = None,
    relevance: float = 0.5,
) -> Evidence:
    """Item ``number`` of the metformin corpus: a PubMed record (PMID 10,000,000 + ``number``, 2021, two authors, a
    journal) or, from another source, a page at example.org."""
    pmid = str(10_000_000 + number) if source == "pubmed" else None
    return builders.evidence(
        text,
        pmid=pmid,
        source=source,
        title=title or f"Study {number} of metformin and Alzheimer's disease",
        url=url or (f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/" if pmid else f"https://example.org/item/{number}"),
        date="2021",
        authors=("Doe J", "Roe R"),
        journal="Journal of Tests" if pmid else None,
        relevance=relevance,
    )


# A small corpus that covers every aspect, from three sources.
CORPUS = [
    corpus_evidence(
        1,
        "Metformin activates AMPK and reduced amyloid and tau pathology in transgenic mice. "
        "These results suggest a mechanism for metformin in Alzheimer's disease.",
        relevance=0.9,
    ),
    corpus_evidence(
        2,
        "In a randomized placebo-controlled trial of 80 patients with mild cognitive impairment, metformin "
        "improved memory recall. The findings suggest metformin may benefit Alzheimer's disease.",
        relevance=0.8,
    ),
    corpus_evidence(
        3,
        "A cohort study of 5000 diabetic patients found metformin use was associated with lower risk of "
        "Alzheimer's disease and dementia.",
        source="web",
        relevance=0.7,
    ),
    corpus_evidence(
        4,
        "Metformin did not significantly change cognition in a trial of Alzheimer's disease patients; "
        "gastrointestinal adverse events were common.",
        relevance=0.6,
    ),
    corpus_evidence(
        5,
        "Long-term metformin use increased the risk of vitamin B12 deficiency compared with other glucose-lowering "
        "drugs, a safety concern that may worsen cognition "
        "in older adults with Alzheimer's disease.",
        source="searxng",
        relevance=0.5,
    ),
    corpus_evidence(
        6,
        "Metformin reduced neuroinflammation through microglia signaling pathways in a mouse model "
        "of Alzheimer's disease.",
        source="web",
        relevance=0.5,
    ),
]


def _graded(item: Evidence, **grade: object) -> Evidence:
    return item.model_copy(update={"grade": Grade.model_validate({"basis": "publication_type", **grade})})


# The corpus as graded studies strong enough for a "sufficient" verdict to survive the caps on the judge's
# scores (stages.ratings): a large trial, a cohort and a systematic review in people, and mice.
STRONG_CORPUS = [
    _graded(CORPUS[0], design="preclinical", population="animals"),
    _graded(CORPUS[1], design="randomized_controlled_trial", level=2, population="humans", sample_size=1200),
    _graded(CORPUS[2], design="cohort", level=3, population="humans", sample_size=5000),
    _graded(CORPUS[3], design="cohort", level=3, population="humans", sample_size=3000),
    _graded(CORPUS[4], design="systematic_review", level=1, population="humans"),
    _graded(CORPUS[5], design="preclinical", population="animals"),
]


def words(text: str) -> set[str]:
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if len(word) > 2}


def overlap(query: str, item: Evidence) -> float:
    query_words = words(query)
    return len(query_words & words(f"{item.citation.title} {item.content}")) / max(len(query_words), 1)


@dataclass
class Scored:
    evidence: Evidence
    score: float


@dataclass
class Dedup:
    kept: list[Evidence]
    duplicates: dict[str, str] = field(default_factory=dict)


class FakeStore:
    """De-duplicates by identical content; ranks by word overlap. Like the real store, ``items`` is the
    run's collection (what ``select_for_judge``, ``get`` and ``search_similar`` read) and ``library``
    holds evidence of earlier runs, which only ``related`` reads; ``add`` writes both.
    ``return_everything`` makes select_for_judge ignore k (a misbehaving store)."""

    def __init__(
        self,
        *,
        return_everything: bool = False,
        fail_on_add: Exception | None = None,
        library: Sequence[Evidence] = (),
    ) -> None:
        self.items: dict[str, Evidence] = {}
        self.library: dict[str, Evidence] = {item.id: item for item in library}
        self.return_everything = return_everything
        self.fail_on_add = fail_on_add
        self.closed = False
        self.judge_requests: list[int] = []

    async def add(self, evidence: Sequence[Evidence]) -> int:
        if self.fail_on_add is not None:
            raise self.fail_on_add
        new = 0
        for item in evidence:
            # Like the real store: records of the same item under any identity merge by the one policy, and
            # the merged record replaces them under the id it keeps.
            for collection in (self.items, self.library):
                same = [key for key in dict.fromkeys((item.id, *item.identity_keys)) if key in collection]
                if collection is self.items and not same:
                    new += 1
                merged = item
                for key in same:
                    merged = merge_records(collection.pop(key), merged)
                collection[merged.id] = merged
        return new

    async def deduplicate(self, new: Sequence[Evidence]) -> Dedup:
        by_text = {item.content: item.id for item in self.items.values()}
        kept, duplicates = [], {}
        for item in new:
            if item.content in by_text and by_text[item.content] != item.id:
                duplicates[item.id] = by_text[item.content]
            else:
                by_text[item.content] = item.id
                kept.append(item)
        return Dedup(kept=kept, duplicates=duplicates)

    def _ranked(self, query: str, exclude: Collection[str] = (), *, library: bool = False) -> list[Scored]:
        pool = {**self.library, **self.items} if library else self.items
        hits = [Scored(item, overlap(query, item)) for item in pool.values() if item.id not in exclude]
        return sorted(hits, key=lambda hit: -hit.score)

    async def search_similar(self, query: str, n: int = 5) -> list[Scored]:
        return self._ranked(query)[:n]

    async def related(self, query: str, exclude_ids: Collection[str], n: int = 5) -> list[Scored]:
        return self._ranked(query, set(exclude_ids), library=True)[:n]

    async def select_for_judge(self, query: str, k: int) -> list[Evidence]:
        self.judge_requests.append(k)
        ranked = [hit.evidence for hit in self._ranked(query)]
        return ranked if self.return_everything else ranked[:k]

    async def get(self, ids: Sequence[str]) -> list[Evidence]:
        return [self.items[i] for i in ids if i in self.items]

    async def close(self) -> None:
        self.closed = True


class FakeHandler:
    """Answers each query with the corpus items sharing a word with it (or what ``answer`` returns)."""

    def __init__(
        self,
        corpus: Sequence[Evidence] = CORPUS,
        *,
        answer: Callable[[str], list[Evidence]] | None = None,
        failures: Sequence[SourceFailure] = (),
        on_execute: Callable[[str], None] | None = None,
        sources: Sequence[SourceName] = ("pubmed", "web", "searxng"),
    ) -> None:
        self.corpus = list(corpus)
        self.answer = answer
        self.failures = list(failures)
        self.on_execute = on_execute
        self.source_names: list[SourceName] = list(sources)
        self.unavailable: dict[SourceName, str] = {}
        self.queries: list[str] = []

    async def execute(self, query: str, max_results_per_tool: int = 10) -> SearchResult:
        self.queries.append(query)
        if self.on_execute is not None:
            self.on_execute(query)
        found = self.answer(query) if self.answer else [item for item in self.corpus if overlap(query, item) > 0]
        return SearchResult(
            query=query,
            evidence=found,
            sources_searched=self.source_names,
            total_found=len(found),
            failures=self.failures,
        )


class FakeEngine:
    def __init__(self, text: str = "Metformin acts on AMPK signalling; AMPK and insulin resistance matter.") -> None:
        self.text = text
        self.terms: list[str] = []

    async def get_term_context(self, term: str, domain: str = "biomedical research") -> str:
        self.terms.append(term)
        return self.text


class FakeClock:
    """A monotonic clock that moves only when told to."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def demo_settings(**overrides: object) -> Settings:
    """Demo-mode settings from explicit values only (no .env, no keys from the environment)."""
    values = {"DEMO_MODE": True, "GOOGLE_API_KEY": None, "OPENAI_API_KEY": None, "ANTHROPIC_API_KEY": None}
    return Settings(_env_file=None, **{**values, **overrides}).demo_preset()  # type: ignore[arg-type]


def make_deps(
    settings: Settings | None = None,
    *,
    store: FakeStore | None = None,
    handler: FakeHandler | None = None,
    engine: FakeEngine | None = None,
    clock: Callable[[], float] | None = None,
    question: str = QUESTION,
    events: list[object] | None = None,
) -> ResearchDeps:
    settings = settings or demo_settings()
    store = store if store is not None else FakeStore()
    events = events if events is not None else []
    state, budget = RunState(question=question), Budget.from_settings(settings, clock or FakeClock())
    evidence = RunEvidence(store, max_evidence=settings.max_evidence)
    deps = ResearchDeps(
        settings=settings,
        search=SearchStage(handler or FakeHandler(), store, evidence, state, budget, emit=events.append),
        store=store,
        research_engine=engine or FakeEngine(),
        budget=budget,
        state=state,
        emit=events.append,
    )
    deps.state.iteration = 1
    return deps


def search_stage(
    handler: FakeHandler,
    store: FakeStore,
    *,
    max_evidence: int = 150,
    max_results_per_source: int = 10,
    question: str = QUESTION,
) -> SearchStage:
    """A search stage with a fresh run state, for testing the stage on its own."""
    state, budget = RunState(question=question, iteration=1), Budget.from_settings(demo_settings(), FakeClock())
    evidence = RunEvidence(store, max_evidence=max_evidence)
    return SearchStage(handler, store, evidence, state, budget, max_results_per_source=max_results_per_source)


def insufficient(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    score = {"score": 4, "reason": "Some evidence."}
    args: dict[str, Any] = {"mechanism": score, "clinical": score, "safety": score, "sufficient": False}
    args |= {"confidence": 0.3, "gaps": ["clinical trials"], "next_queries": ["metformin dementia trial"]}
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


def assert_cited(outcome: ResearchOutcome) -> None:
    """The report is not empty, and every citation resolves to evidence the run collected."""
    collected = {item.id for item in outcome.evidence}
    findings = [*outcome.report.key_findings, *outcome.report.contrary_evidence]
    assert outcome.report.answer_brief
    assert findings
    assert all(set(finding.evidence_ids) <= collected for finding in findings)
    assert set(outcome.report.references) <= collected
