"""Deterministic models for DEMO_MODE. Each is a pydantic-ai ``FunctionModel`` driving the same agents,
tools, output validation and loop as a live model, with a simple, honest algorithm in place of an LLM:

- Brain: asks ``term_context`` about the question's first key terms, then ``search``es queries built
  from the key terms, terms frequent in that background text, and the judge's next queries.
- Judge: ``code_assessment`` over the evidence block of its prompt (aspect keyword coverage).
- Report: ``extractive_report`` over the evidence block of its prompt (quoted, cited sentences).

They read only what the agent sends them (the prompt and tool returns): no globals, keys or network.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolCallPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from deepcritical.appraisal.aspects import ASPECT_QUERY_WORDS
from deepcritical.appraisal.assessment import code_assessment
from deepcritical.appraisal.framing import parse_brief, parse_evidence
from deepcritical.appraisal.passages import context_terms
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.outputs import MAX_QUERIES_PER_TURN, Assessment
from deepcritical.questions import key_terms, stem
from deepcritical.reading.frame import QuestionFrame, frame_question, terms_of
from deepcritical.reading.results import ResultReader
from deepcritical.report.extractive import extractive_report
from deepcritical.sources.query import with_terms
from deepcritical.stages.selection import HELD_KINDS, without_held_kinds
from deepcritical.text import split_sentences

# Angles beyond the aspects; a kind of study the run holds is left out (``without_held_kinds``), so there are
# enough others for every round.
_EXTRA_ANGLES = (
    "systematic review",
    "cohort study",
    "randomized controlled trial",
    "animal model",
    "biomarkers",
    "dose response",
    "long-term outcomes",
    "guideline",
)


def _prompt(messages: Sequence[ModelMessage]) -> str:
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                    return part.content
    return ""


def _tool_returns(messages: Sequence[ModelMessage]) -> dict[str, list[Any]]:
    returns: dict[str, list[Any]] = {}
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart):
                    returns.setdefault(part.tool_name, []).append(part.content)
    return returns


def _output(info: AgentInfo, args: dict[str, Any]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, args)])


def _about(sentence: str, frame: QuestionFrame, terms: Sequence[str]) -> bool:
    """Whether a background sentence is about the question, so a term of it may join a query: it names the
    question's subject whole, i.e. every word of three letters or more of the intervention ("statins";
    "vitamin D supplementation"), or for an open question the condition ("sepsis"). A sentence that shares only
    an outcome ("SGLT2 inhibitors ... no reduction in mortality") or the population of another intervention is
    another topic's, and its terms ("SGLT2") are not the question's. Words are matched from their start:
    "statin" is in "statins", not in "nystatin"; "D" of "vitamin D" would match inside any word, so it is left out."""
    subject = frame.intervention or frame.population or next(iter(frame.outcomes), None)
    words = [word for word in terms_of([subject]) if len(word) >= 3] if subject else []
    if not words:  # no frame to anchor on: any of the question's key terms
        return any(re.search(rf"\b{re.escape(stem(term))}", sentence, re.IGNORECASE) for term in terms)
    return all(re.search(rf"\b{re.escape(stem(word))}", sentence, re.IGNORECASE) for word in words)


def demo_queries(brief: dict[str, Any], contexts: Sequence[str]) -> list[str]:
    question = str(brief.get("question", ""))
    terms = key_terms(question)
    frame = frame_question(question)
    base = frame.base
    about = [part for part in split_sentences(" ".join(contexts)) if _about(part, frame, terms)]
    background = context_terms(" ".join(about), exclude=terms)
    candidates = [str(query) for query in brief.get("judge_next_queries", [])]
    if int(brief.get("iteration", 1)) <= 1:
        candidates += [base, *(f"{base} {term}" for term in background[:1])]
        candidates += [f"{base} {ASPECT_QUERY_WORDS['clinical']}", f"{base} {ASPECT_QUERY_WORDS['safety']}"]
    else:
        candidates += [f"{base} {words}" for words in ASPECT_QUERY_WORDS.values()]
        candidates += [f"{base} {term}" for term in background]
    candidates += [f"{base} {angle}" for angle in _EXTRA_ANGLES]
    done = {str(query).lower() for query in brief.get("queries_already_run", [])}
    # Every query keeps the frame's intervention and population, whole (a background term never replaces them).
    anchored = (with_terms(query, frame.required) for query in candidates if query.strip())
    # No search for a kind of study the run holds on the question already (the brief says which).
    held = [str(kind) for kind in brief.get("designs_collected", [])]
    fresh = [query for query in dict.fromkeys(anchored) if query.lower() not in done]
    fresh = without_held_kinds(fresh, [kind for kind in held if kind in HELD_KINDS])
    return fresh[: min(4, MAX_QUERIES_PER_TURN)]


async def demo_brain(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    brief = parse_brief(_prompt(messages))
    returns = _tool_returns(messages)
    terms = key_terms(str(brief.get("question", "")))
    if int(brief.get("iteration", 1)) <= 1 and "term_context" not in returns and terms:
        return ModelResponse(parts=[ToolCallPart("term_context", {"term": term}) for term in terms[:2]])
    if "search" not in returns:
        contexts = [str(text) for text in returns.get("term_context", [])]
        return ModelResponse(parts=[ToolCallPart("search", {"queries": demo_queries(brief, contexts)})])
    summary = returns["search"][-1]
    ran = summary.get("ran", []) if isinstance(summary, dict) else []
    rationale = "Queries combine the question's key terms with background terms and the judge's gaps."
    return _output(info, {"queries": ran, "rationale": rationale})


class _CodeJudgeAndReport:
    """The demo's Judge and Report: code over their prompt, reading studies with the run's result reader."""

    def __init__(self, reader: ResultReader) -> None:
        self.reader = reader

    async def judge(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = _prompt(messages)
        # Uncapped, as a model's answer is: the Judge stage caps every judge's scores in code.
        # In a worker thread, as every CPU-bound step of a run: on the event loop it would hold up a server's
        # other runs (about 0.1 s a call).
        question, evidence = str(parse_brief(prompt).get("question", "")), parse_evidence(prompt)
        reader = StudyReader(question, self.reader)
        assessment = await asyncio.to_thread(code_assessment, question, evidence, capped=False, reader=reader)
        return _output(info, assessment.model_dump())

    async def report(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = _prompt(messages)
        brief = parse_brief(prompt)
        assessment = Assessment.model_validate(brief["assessment"]) if brief.get("assessment") else None
        question, evidence = str(brief.get("question", "")), parse_evidence(prompt)
        reader = StudyReader(question, self.reader)
        report = await asyncio.to_thread(extractive_report, question, evidence, assessment=assessment, reader=reader)
        return _output(info, report.model_dump())


def demo_models(reader: ResultReader | None = None) -> tuple[FunctionModel, FunctionModel, FunctionModel]:
    """Fresh Brain, Judge and Report models for one run, the Judge and Report reading with its ``reader`` (the
    linear one when none is given)."""
    code = _CodeJudgeAndReport(reader or ResultReader.load())
    return (
        FunctionModel(demo_brain, model_name="demo-brain"),
        FunctionModel(code.judge, model_name="demo-judge"),
        FunctionModel(code.report, model_name="demo-report"),
    )
