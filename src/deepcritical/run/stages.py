"""The run's three stages, each a model half and a code half: plan (the Brain searches through its tool;
in code, queries built from the question and the Judge's gaps), judge (the Judge agent; in code, an
assessment computed from the selected items) and report (see ``run.report``). ``Stages.with_models``
builds them on the run's models; ``Stages.code_only`` without any model."""

from __future__ import annotations

from dataclasses import dataclass

from deepcritical.agents.brain import Planner
from deepcritical.agents.deps import ResearchDeps
from deepcritical.agents.judge import Judge
from deepcritical.agents.models import AgentModels
from deepcritical.agents.report import Reporter
from deepcritical.appraisal.assessment import code_assessment
from deepcritical.appraisal.framing import EvidenceView
from deepcritical.outputs import Judgement
from deepcritical.run.report import CheckedReport, ReportRequest, ReportWriter, report_stage
from deepcritical.run.stage import Cause, Stage
from deepcritical.stages.selection import held_kinds, without_held_kinds


async def search_in_code(deps: ResearchDeps, _: None, cause: Cause) -> None:
    """The plan's code half: when this iteration ran no search yet, queries built in code run."""
    if not deps.state.searched_in(deps.state.iteration):
        await deps.search.fallback()


def _unsearched(deps: ResearchDeps, _: object) -> str | None:
    return None if deps.state.searched_in(deps.state.iteration) else "the Brain ran no search"


def _plan_degraded(deps: ResearchDeps, cause: Cause) -> str | None:
    iteration = deps.state.iteration
    if deps.state.searched_in(iteration):  # the Brain searched before it failed: nothing to stand in for
        return None
    return f"iteration {iteration}: the Brain ran no search; searching with queries built in code"


def plan_stage(planner: Planner | None) -> Stage[None, None]:
    async def planned(deps: ResearchDeps, _: None) -> None:
        assert planner is not None  # the stage has a model half only with a planner
        await planner(deps)

    return Stage(
        name="planning",
        agent="brain",
        model=planned if planner is not None else None,
        code=search_in_code,
        degraded=_plan_degraded,
        rejects=_unsearched,
        code_when_stopped=True,
    )


async def judge_in_code(deps: ResearchDeps, _: None, cause: Cause) -> Judgement:
    """The judge's code half: keyword coverage of the items the Judge would have read."""
    items = await deps.evidence.select(deps.state.question, deps.settings.judge_max_items)
    views = [EvidenceView.of(item) for item in items]
    assessment = code_assessment(deps.state.question, views, reader=deps.study_reader)
    held = held_kinds(deps.state.question, deps.evidence.items.values())
    assessment = assessment.model_copy(update={"next_queries": without_held_kinds(assessment.next_queries, held)})
    return Judgement(assessment=assessment, items_judged=len(items), by="code")


def _judge_degraded(deps: ResearchDeps, cause: Cause) -> str:
    return f"iteration {deps.state.iteration}: the Judge's model failed; the assessment was computed in code"


def judge_stage(judge: Judge | None) -> Stage[None, Judgement]:
    async def judged(deps: ResearchDeps, _: None) -> Judgement:
        assert judge is not None  # the stage has a model half only with a judge
        return await judge(deps)

    return Stage(
        name="judge",
        agent="judge",
        model=judged if judge is not None else None,
        code=judge_in_code,
        degraded=_judge_degraded,
    )


@dataclass(frozen=True)
class Stages:
    """The loop's units; a test or a front end can swap any one."""

    plan: Stage[None, None]
    judge: Stage[None, Judgement]
    report: Stage[ReportRequest, CheckedReport]

    @classmethod
    def with_models(cls, models: AgentModels, *, term_lookups: bool) -> Stages:
        reporter: ReportWriter = Reporter(models.report)
        return cls(
            plan=plan_stage(Planner(models.brain, term_lookups=term_lookups)),
            judge=judge_stage(Judge(models.judge)),
            report=report_stage(reporter),
        )

    @classmethod
    def code_only(cls) -> Stages:
        """Every stage by its code half alone: a run that sends no request to any model."""
        return cls(plan=plan_stage(None), judge=judge_stage(None), report=report_stage(None))
