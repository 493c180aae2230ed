"""The Brain: plans each iteration's searches, asks the ResearchEngine about key terms, and runs the
SearchAgent through its ``search`` tool. Tool docstrings are what the model reads."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.models import Model

from deepcritical.agents.calls import run_agent
from deepcritical.agents.deps import ResearchDeps, RunState
from deepcritical.agents.framing import BRIEF_TAG, block
from deepcritical.agents.heuristics import ASPECT_QUERY_WORDS, key_terms
from deepcritical.agents.outputs import MAX_QUERIES_PER_TURN, BrainTurn
from deepcritical.agents.prompts import load_prompt
from deepcritical.events import QueriesPlanned, SearchFinished

MAX_LISTED_ITEMS = 12
MAX_CONTEXT_CHARS = 1500
# A model may call a tool again and again within one turn; these bound what a turn can cost.
MAX_SEARCHES_PER_TURN = 3
MAX_TERM_LOOKUPS = 4


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def run_search_step(deps: ResearchDeps, queries: list[str]) -> dict[str, Any]:
    """Run the new queries among ``queries`` through the SearchAgent, record the step, and summarise it."""
    state, budget = deps.state, deps.budget
    fresh = [
        query for query in dict.fromkeys(" ".join(q.split()) for q in queries) if query and state.is_new_query(query)
    ]
    fresh = fresh[:MAX_QUERIES_PER_TURN]
    if budget.expired():
        return {"status": "not run: the time budget is spent"}
    if deps.search_agent.full:
        return {"status": f"not run: the evidence cap of {deps.search_agent.max_evidence} items is reached"}
    if not fresh:
        return {"status": "not run: every query was already run", "queries_already_run": state.queries_run}
    if state.search_calls.get(state.iteration, 0) >= MAX_SEARCHES_PER_TURN:
        return {"status": f"not run: {MAX_SEARCHES_PER_TURN} searches this iteration already; finish your turn"}
    state.search_calls[state.iteration] = state.search_calls.get(state.iteration, 0) + 1
    deps.emit(QueriesPlanned(iteration=state.iteration, queries=fresh))
    step = await deps.search_agent.run(fresh, question=state.question)
    state.queries_run += fresh
    state.searches.append(step)
    state.add_time("search", step.search_seconds)
    state.add_time("embedding_dedup", step.store_seconds)
    state.evidence.update(deps.search_agent.collected)
    deps.emit(
        SearchFinished(
            iteration=state.iteration,
            queries=fresh,
            sources_answered=step.sources_answered,
            sources_failed=step.sources_failed,
            found=step.found,
            kept=len(step.kept_ids),
            deduplicated=step.deduplicated,
            related=len(step.related_ids),
            total_evidence=len(state.evidence),
            capped=step.capped,
        )
    )
    new_items = [state.evidence[i] for i in step.kept_ids + step.related_ids if i in state.evidence]
    return {
        "status": "searched",
        "ran": fresh,
        "sources_answered": step.sources_answered,
        "sources_failed": step.sources_failed,
        "found": step.found,
        "new_items": len(step.kept_ids),
        "duplicates_dropped": step.deduplicated,
        "related_recalled": len(step.related_ids),
        "collected_total": len(state.evidence),
        "evidence_cap": deps.search_agent.max_evidence,
        "items": [
            {"id": item.id, "title": _short(item.citation.title), "source": item.citation.source}
            for item in new_items[:MAX_LISTED_ITEMS]
        ],
    }


async def search(ctx: RunContext[ResearchDeps], queries: list[str]) -> dict[str, Any]:
    """Search PubMed and the web for evidence and store what is new.

    Args:
        queries: Two to four short keyword queries, e.g. "metformin Alzheimer clinical trial".
    """
    return await run_search_step(ctx.deps, queries)


async def term_context(ctx: RunContext[ResearchDeps], term: str) -> str:
    """Background on a biomedical term (a few web snippets), to sharpen your queries.

    Args:
        term: One key term, e.g. a drug, a disease or a pathway.
    """
    term = " ".join(term.split())[:100]
    state = ctx.deps.state
    if term not in state.term_contexts and len(state.term_contexts) >= MAX_TERM_LOOKUPS:
        return f"Not looked up: this run has used its {MAX_TERM_LOOKUPS} term lookups."
    if term not in state.term_contexts:
        text = await ctx.deps.research_engine.get_term_context(term)
        state.term_contexts[term] = " ".join(text.split())[:MAX_CONTEXT_CHARS]
    return state.term_contexts[term] or "No background found for this term."


async def recall(ctx: RunContext[ResearchDeps], query: str) -> list[dict[str, str]]:
    """Evidence already in the store that matches a query (no new search).

    Args:
        query: What to look for among the stored evidence.
    """
    hits = await ctx.deps.store.search_similar(query, n=5)
    ctx.deps.state.collect(hit.evidence for hit in hits)
    return [
        {"id": hit.evidence.id, "title": _short(hit.evidence.citation.title), "score": f"{hit.score:.2f}"}
        for hit in hits
    ]


def build_brain() -> Agent[ResearchDeps, BrainTurn]:
    return Agent(
        name="brain",
        output_type=BrainTurn,
        deps_type=ResearchDeps,
        instructions=load_prompt("brain"),
        tools=[search, term_context, recall],
        retries=2,
    )


def brain_prompt(state: RunState, max_iterations: int) -> str:
    last = state.last_assessment
    brief = {
        "question": state.question,
        "iteration": state.iteration,
        "max_iterations": max_iterations,
        "evidence_collected": len(state.evidence),
        "queries_already_run": state.queries_run[-40:],
        "judge_gaps": last.gaps if last else [],
        "judge_next_queries": last.next_queries if last else [],
    }
    return (
        f"Research question: {state.question}\n\nPlan and run this iteration's searches.\n\n{block(BRIEF_TAG, [brief])}"
    )


def fallback_queries(state: RunState) -> list[str]:
    """Queries built in code, for a turn in which the model ran no search of its own."""
    base = " ".join(key_terms(state.question)[:3]) or state.question
    last = state.last_assessment
    candidates = [*(last.next_queries if last else []), state.question, base]
    candidates += [f"{base} {words}" for words in ASPECT_QUERY_WORDS.values()]
    return [query for query in candidates if state.is_new_query(query)][:MAX_QUERIES_PER_TURN]


async def fallback_search(deps: ResearchDeps) -> dict[str, Any]:
    """A search with queries built in code, for an iteration whose Brain stopped (its model failed or
    its request budget ran out) before searching: no model is needed, and the report gets evidence."""
    return await run_search_step(deps, fallback_queries(deps.state))


async def plan(agent: Agent[ResearchDeps, BrainTurn], deps: ResearchDeps, model: Model) -> BrainTurn:
    """One Brain turn. If the model ends its turn without searching, its queries run anyway (or,
    if it proposed none that are new, queries built from the question and the judge's gaps)."""
    searches_before = len(deps.state.searches)
    turn = await run_agent(agent, brain_prompt(deps.state, deps.budget.max_iterations), deps=deps, model=model)
    deps.state.plans.append(turn)
    if len(deps.state.searches) == searches_before:
        queries = [query for query in turn.queries if deps.state.is_new_query(query)] or fallback_queries(deps.state)
        await run_search_step(deps, queries)
    return turn
