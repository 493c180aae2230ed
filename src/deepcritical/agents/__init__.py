"""The research agents: Brain (plans and searches), SearchAgent, Judge, Report, and their models."""

from deepcritical.agents.citations import CitationAudit, verify_citations
from deepcritical.agents.deps import Budget, ResearchDeps, RunState
from deepcritical.agents.llm import AgentModels, resolve_models
from deepcritical.agents.outputs import AspectScore, Assessment, BrainTurn, Finding, ResearchReport, StopReason
from deepcritical.agents.render import RenderContext, render_markdown
from deepcritical.agents.search_agent import SearchAgent, SearchStep

__all__ = [
    "AgentModels",
    "AspectScore",
    "Assessment",
    "BrainTurn",
    "Budget",
    "CitationAudit",
    "Finding",
    "RenderContext",
    "ResearchDeps",
    "ResearchReport",
    "RunState",
    "SearchAgent",
    "SearchStep",
    "StopReason",
    "render_markdown",
    "resolve_models",
    "verify_citations",
]
