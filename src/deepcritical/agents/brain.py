"""The Brain: plans each iteration's searches, asks the ResearchEngine about key terms (when it is on),
and runs the search stage through its ``search`` tool. Tool docstrings are what the model reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai import Agent, RunContext, Tool
from pydantic_ai.models import Model

from deepcritical.agents.calls import run_agent
from deepcritical.agents.deps import ResearchDeps
from deepcritical.agents.output import Mode, OutputAgents, output_spec
from deepcritical.agents.prompts import load_prompt
from deepcritical.appraisal.framing import BRIEF_TAG, block
from deepcritical.outputs import BrainTurn
from deepcritical.source_table import in_words
from deepcritical.stages.selection import held_kinds
from deepcritical.stages.state import RunState
from deepcritical.text import collapse_whitespace

MAX_CONTEXT_CHARS = 1500
MAX_TERM_LOOKUPS = 4


async def search(ctx: RunContext[ResearchDeps], queries: list[str]) -> dict[str, Any]:
    """Search the run's sources for evidence and store what is new.

    Args:
        queries: Two to four short keyword queries, e.g. "metformin Alzheimer clinical trial".
    """
    return await ctx.deps.search.search(queries)


async def term_context(ctx: RunContext[ResearchDeps], term: str) -> str:
    """Background on a biomedical term (a few web snippets), to sharpen your queries.

    Args:
        term: One key term, e.g. a drug, a disease or a pathway.
    """
    term = collapse_whitespace(term)[:100]
    state, engine = ctx.deps.state, ctx.deps.research_engine
    if engine is None:  # the tool is offered only with an engine; a model may call it by name anyway
        return "Not looked up: background lookups are off in this run."
    if term not in state.term_contexts and len(state.term_contexts) >= MAX_TERM_LOOKUPS:
        return f"Not looked up: this run has used its {MAX_TERM_LOOKUPS} term lookups."
    if term not in state.term_contexts:
        text = await engine.get_term_context(term)
        state.term_contexts[term] = collapse_whitespace(text)[:MAX_CONTEXT_CHARS]
    return state.term_contexts[term] or "No background found for this term."


async def recall(ctx: RunContext[ResearchDeps], query: str) -> list[dict[str, str]]:
    """Evidence already collected in this run that matches a query (no new search).

    Args:
        query: What to look for among the stored evidence.
    """
    hits = await ctx.deps.store.search_similar(query, n=5)
    return [
        {
            "id": hit.evidence.id,
            "title": collapse_whitespace(hit.evidence.citation.title)[:160],
            "score": f"{hit.score:.2f}",
        }
        for hit in hits
    ]


def build_brain(*, term_lookups: bool, output: Mode = "tool") -> Agent[ResearchDeps, BrainTurn]:
    """The Brain agent; ``term_context`` is among its tools only when a ResearchEngine can answer it."""
    # The search tool names the sources a run searches by default, from the source table.
    described = Tool(search, description=f"Search {in_words()} for evidence and store what is new.")
    tools = [described, Tool(recall)] + ([Tool(term_context)] if term_lookups else [])
    return Agent(
        name="brain",
        output_type=output_spec(BrainTurn, output),
        deps_type=ResearchDeps,
        instructions=load_prompt("brain"),
        tools=tools,
        retries=2,
    )


def brain_prompt(
    state: RunState, max_iterations: int, evidence_collected: int, designs_collected: Sequence[str] = ()
) -> str:
    """The Brain's brief; ``designs_collected``: the kinds of study the run holds on the question already
    (a search for them is not run)."""
    last = state.last_assessment
    brief = {
        "question": state.question,
        "iteration": state.iteration,
        "max_iterations": max_iterations,
        "evidence_collected": evidence_collected,
        "queries_already_run": state.queries_run[-40:],
        "judge_gaps": last.gaps if last else [],
        "judge_next_queries": last.next_queries if last else [],
        "designs_collected": list(designs_collected),
    }
    return (
        f"Research question: {state.question}\n\nPlan and run this iteration's searches.\n\n{block(BRIEF_TAG, [brief])}"
    )


class Planner:
    """The plan stage: one Brain turn, in which the Brain searches through its tool. If the model ends its
    turn without searching (a model answering under a schema cannot call tools), the queries it proposed run;
    the loop runs a code-built search if none did."""

    def __init__(self, model: Model, *, term_lookups: bool) -> None:
        self.agents = OutputAgents(lambda mode: build_brain(term_lookups=term_lookups, output=mode))
        self.model = model

    async def __call__(self, deps: ResearchDeps) -> BrainTurn:
        held = held_kinds(deps.state.question, deps.evidence.items.values())
        prompt = brain_prompt(deps.state, deps.budget.max_iterations, len(deps.evidence), held)
        turn = await run_agent(
            self.agents, prompt, deps=deps, model=self.model, name="brain", max_tokens=deps.settings.brain_max_tokens
        )
        deps.state.plans.append(turn)
        if not deps.state.searched_in(deps.state.iteration) and turn.queries:
            await deps.search.search(turn.queries)
        return turn
