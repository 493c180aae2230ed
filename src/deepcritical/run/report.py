"""The report stage. Before it, the items the report is written from (its pool) are chosen and appraised: the
verdict exists before anything is written about it, and is given to the writer. Then its two halves. The
model half: the Report agent's draft from the pool, checked against the run's evidence (a draft that cites
nothing collected is rejected). The code half: an extractive report built in code, for a model that failed,
ran out of time or requests, or was rejected, for a crash (the run then fails all the same), and for a run
without a model."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import structlog

from deepcritical.agents.deps import ResearchDeps
from deepcritical.agents.report import MAX_REPORT_ITEMS
from deepcritical.appraisal.framing import REPORT_TEXT_CHARS, EvidenceView
from deepcritical.appraisal.run_appraisal import Appraisal, appraise_run
from deepcritical.appraisal.strength import strength_of
from deepcritical.appraisal.studies import with_study_parts
from deepcritical.errors import EmbeddingError, StoreError
from deepcritical.events import ReportWritten
from deepcritical.models import Evidence
from deepcritical.outputs import CitationAudit, FallbackReason, ResearchReport, StopReason, Verdict
from deepcritical.report.citations import verify_citations
from deepcritical.report.extractive import extractive_report
from deepcritical.run.stage import Cause, Stage, run_stage

logger = structlog.get_logger(__name__)

# The Report agent's draft from the pool, given the verdict the pool's counted studies give in code.
ReportWriter = Callable[[ResearchDeps, list[Evidence], StopReason, Verdict], Awaitable[ResearchReport]]


@dataclass(frozen=True)
class ReportRequest:
    """What the report is written for: why the loop stopped, the items it is written from (both halves read
    the same) and their appraisal."""

    stop: StopReason
    items: list[Evidence]
    appraisal: Appraisal


@dataclass
class CheckedReport:
    """A citation-checked report; ``fallback`` says why it was built in code (None: the model wrote it),
    ``crash`` is set when the stage failed with a bug."""

    report: ResearchReport
    audit: CitationAudit
    fallback: FallbackReason | None = None
    crash: str | None = None
    # The ids of the items the report was written from, so the strength table counts the same items as
    # the answer in brief (empty: every collected item).
    pool: list[str] = field(default_factory=list)
    drafted_findings: bool = False  # the model's draft had findings (before the citation check)
    # The pool's appraisal, computed before the stage (None: not computed, as for a report restored from a
    # checkpoint; ``appraise_pool`` computes the same from ``pool``).
    appraisal: Appraisal | None = None


def nothing_found(deps: ResearchDeps) -> ResearchReport:
    state = deps.state
    limitations = [f"Queries run: {'; '.join(state.queries_run) or 'none'}."]
    if failed := state.failed_sources():
        # Only the names: limitations go through the model-text renderer, which removes URLs; the errors
        # themselves render escaped, like every other error, under "Why the run stopped".
        limitations.append(
            f"Sources that did not answer: {', '.join(failed)} (their errors are under Why the run stopped)."
        )
    return ResearchReport(
        question=state.question,
        answer_brief="No evidence was found, so this question cannot be answered from the sources searched.",
        key_findings=[],
        limitations=limitations,
    )


def most_relevant(deps: ResearchDeps) -> list[Evidence]:
    """The report's pool without a model: the most relevant items, each study read whole (a methods passage
    among them brings in its abstract and results)."""
    collected = deps.evidence.items
    relevant = sorted(collected.values(), key=lambda item: item.relevance, reverse=True)[:MAX_REPORT_ITEMS]
    return with_study_parts(relevant, collected)[:MAX_REPORT_ITEMS]


async def selected(deps: ResearchDeps) -> list[Evidence]:
    """The report's pool for the Report agent: a relevant, diverse selection with the selected studies'
    Results passages (a handful: full text comes from the library), so that a finding may cite the passage
    that states a study's result, with its section."""
    limit = min(2 * deps.settings.judge_max_items, MAX_REPORT_ITEMS)
    return with_study_parts(await deps.evidence.select(deps.state.question, limit), deps.evidence.items)


def appraise_pool(deps: ResearchDeps, pool: list[str]) -> Appraisal:
    """The appraisal of the report's pool: the counted set, the frame and the verdict in code."""
    state = deps.state
    return appraise_run(state.question, deps.evidence.items, pool, deps.study_reader, state.last_assessment)


def _extractive(deps: ResearchDeps, items: list[Evidence], note: str, reason: FallbackReason) -> CheckedReport:
    views = [EvidenceView.of(item, REPORT_TEXT_CHARS) for item in items]
    question, reader, collected = deps.state.question, deps.study_reader, deps.evidence.items
    draft = extractive_report(question, views, assessment=deps.state.last_assessment, notes=[note], reader=reader)
    report, audit = verify_citations(draft, collected, question=question, reader=reader)
    return CheckedReport(report, audit, reason, pool=[item.id for item in items])


EXTRACTIVE: dict[str, tuple[str, FallbackReason]] = {
    "model_failed": ("The Report agent failed ({note}); this report is extractive.", "report_failed"),
    "rejected": ("{note}", "no_cited_findings"),
    "crashed": ("The report stage crashed ({note}); this report is extractive.", "report_crashed"),
    "code_only": ("This run uses no language model; this report is extractive.", "code_only"),
}


async def extractive(deps: ResearchDeps, request: ReportRequest, cause: Cause) -> CheckedReport:
    """The code half: an extractive report from the model half's selection (or the most relevant items)."""
    note, reason = EXTRACTIVE[cause.kind]
    checked = _extractive(deps, request.items, note.format(note=cause.note), reason)
    checked.appraisal = request.appraisal
    return checked


def report_degraded(deps: ResearchDeps, cause: Cause) -> str:
    if cause.kind == "rejected":
        return "the report was built in code: " + cause.note[0].lower() + cause.note[1:].split(";")[0]
    return f"the report was built in code: the Report agent failed ({cause.note})"


def uncited(deps: ResearchDeps, checked: CheckedReport) -> str | None:
    """Why a checked draft cannot stand: none of its findings survived the citation check."""
    if checked.report.key_findings or checked.report.contrary_evidence:  # contrary findings alone are valid
        return None
    if checked.drafted_findings:
        return "None of the Report agent's findings cited collected evidence; this report is extractive."
    items = deps.evidence.items
    pooled = [EvidenceView.of(items[i], REPORT_TEXT_CHARS) for i in checked.pool if i in items]
    counted = strength_of(deps.state.question, pooled, deps.study_reader)
    if not counted.counted:  # nothing on the question: no finding is right
        return None
    code = extractive_report(deps.state.question, pooled, strength=counted)
    if not (code.key_findings or code.contrary_evidence):
        return None  # the counted studies state results for other outcomes only: code finds none either
    return "The Report agent gave no findings; this report is extractive."


def report_stage(writer: ReportWriter | None) -> Stage[ReportRequest, CheckedReport]:
    """The report stage; without a ``writer`` it is code only."""

    async def drafted(deps: ResearchDeps, request: ReportRequest) -> CheckedReport:
        assert writer is not None  # the stage has a model half only with a writer
        draft = await writer(deps, request.items, request.stop, request.appraisal.counted_verdict)
        question, reader = deps.state.question, deps.study_reader
        report, audit = verify_citations(draft, deps.evidence.items, question=question, reader=reader)
        findings = bool(draft.key_findings or draft.contrary_evidence)
        pool = [item.id for item in request.items]
        return CheckedReport(report, audit, pool=pool, drafted_findings=findings, appraisal=request.appraisal)

    return Stage(
        name="report",
        agent="report",
        model=drafted if writer is not None else None,
        code=extractive,
        degraded=report_degraded,
        rejects=uncited,
        final=True,
    )


def report_written(report: ResearchReport, checked: CheckedReport) -> ReportWritten:
    """The event that says the report is written, with its numbered references and the citation check's work."""
    audit = checked.audit
    return ReportWritten(
        findings=len(report.key_findings),
        contrary=len(report.contrary_evidence),
        references=len(report.references),
        fallback=checked.fallback is not None,
        fallback_reason=checked.fallback,
        dropped_citations=len(audit.dropped_ids),
        repaired_citations=len(audit.repaired),
    )


async def write_report(
    deps: ResearchDeps, stage: Stage[ReportRequest, CheckedReport], stop: StopReason
) -> CheckedReport:
    """The run's report, always; never raises for a model failure or a crash in the stage."""
    if not deps.evidence:
        with deps.state.timed("report"):
            return CheckedReport(nothing_found(deps), CitationAudit(), "no_evidence")
    crash = None
    with deps.state.timed("report"):
        try:
            items = await selected(deps) if stage.model is not None else most_relevant(deps)
        except (StoreError, EmbeddingError) as error:
            # The selection needs the store and the embedder, the collected items do not: the report is still
            # written, from the most relevant of them, and the run fails all the same, as for a crash in the stage.
            logger.warning("report_selection_failed", error=str(error))
            items, crash = most_relevant(deps), f"choosing the report's evidence failed: {error}"
        # CPU-bound: in a worker thread, off a server's shared event loop.
        appraisal = await asyncio.to_thread(appraise_pool, deps, [item.id for item in items])
    ran = await run_stage(stage, deps, ReportRequest(stop, items, appraisal))
    checked = ran.result
    if ran.crash is not None:
        checked.crash = f"the report stage crashed: {ran.crash}"
    checked.crash = checked.crash or crash
    return checked
