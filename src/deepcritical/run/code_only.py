"""A run with no language model at all (``--no-llm``): the planner, the judge and the report are the code
methods that otherwise stand in when a model fails, used by choice: queries built in code, the assessment
computed in code, the extractive report, and the verdict computed in code. An evidence map at no model
cost; nothing is degraded, since nothing failed."""

from __future__ import annotations

from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models.function import AgentInfo, FunctionModel

from deepcritical.agents.deps import ResearchDeps
from deepcritical.agents.models import AgentModels
from deepcritical.errors import ResearchError
from deepcritical.models import Evidence
from deepcritical.outputs import BrainTurn, Judgement, ResearchReport, StopReason
from deepcritical.stages.assessment import code_assessment
from deepcritical.stages.extractive import extractive_report
from deepcritical.stages.framing import REPORT_TEXT_CHARS, EvidenceView
from deepcritical.stages.search import fallback_queries

NAME = "none (--no-llm: code planner, code judge, extractive report, code verdict)"
NOTE = (
    "No language model was used (--no-llm): the queries were built in code, the evidence was assessed in code, "
    "this report quotes the evidence, and the verdict was computed in code."
)


async def _refuse(_messages: list[ModelMessage], _info: AgentInfo) -> ModelResponse:
    raise ResearchError("no language model in a --no-llm run")


def no_models() -> AgentModels:
    """Placeholders that are never asked: a --no-llm run's stages are all code."""
    model = FunctionModel(_refuse, model_name="no-llm")
    return AgentModels(brain=model, judge=model, report=model, name=NAME)


async def plan_in_code(deps: ResearchDeps) -> BrainTurn:
    queries = fallback_queries(deps.state)
    await deps.search.search(queries, by="code")
    turn = BrainTurn(queries=queries, rationale="Queries built in code from the question's key terms (--no-llm).")
    deps.state.plans.append(turn)
    return turn


async def judge_in_code(deps: ResearchDeps) -> Judgement:
    items = await deps.evidence.select(deps.state.question, deps.settings.judge_max_items)
    assessment = code_assessment(deps.state.question, [EvidenceView.of(item) for item in items])
    return Judgement(assessment=assessment, items_judged=len(items), by="code")


async def report_in_code(deps: ResearchDeps, items: list[Evidence], _stop: StopReason) -> ResearchReport:
    views = [EvidenceView.of(item, REPORT_TEXT_CHARS) for item in items]
    return extractive_report(deps.state.question, views, assessment=deps.state.last_assessment, notes=[NOTE])
