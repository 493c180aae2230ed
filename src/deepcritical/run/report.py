"""The report stage's two halves. The model half: the Report agent's draft from a selection of the evidence,
checked against the run's evidence (a draft that cites nothing collected is rejected). The code half: an
extractive report built in code, for a model that failed, ran out of time or requests, or was rejected,
for a crash (the run then fails all the same), and for a run without a model."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from deepcritical.agents.deps import ResearchDeps
from deepcritical.agents.report import MAX_REPORT_ITEMS
from deepcritical.appraisal.framing import REPORT_TEXT_CHARS, EvidenceView
from deepcritical.appraisal.strength import strength_of
from deepcritical.appraisal.studies import with_study_parts
from deepcritical.models import Evidence
from deepcritical.outputs import CitationAudit, FallbackReason, ResearchReport, StopReason
from deepcritical.report.citations import verify_citations
from deepcritical.report.extractive import extractive_report
from deepcritical.run.stage import Cause, Stage, run_stage

ReportWriter = Callable[[ResearchDeps, list[Evidence], StopReason], Awaitable[ResearchReport]]


@dataclass
class ReportRequest:
    """What the report is written for: why the loop stopped; ``items`` is the selection the model half
    read, which the code half reuses."""

    stop: StopReason
    items: list[Evidence] = field(default_factory=list)


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


def _extractive(deps: ResearchDeps, items: list[Evidence], note: str, reason: FallbackReason) -> CheckedReport:
    collected = deps.evidence.items
    relevant = sorted(collected.values(), key=lambda item: item.relevance, reverse=True)[:MAX_REPORT_ITEMS]
    # Each study read whole: a methods passage among the most relevant brings in its abstract and results.
    pool = items or with_study_parts(relevant, collected)[:MAX_REPORT_ITEMS]
    views = [EvidenceView.of(item, REPORT_TEXT_CHARS) for item in pool]
    question, reader = deps.state.question, deps.study_reader
    draft = extractive_report(question, views, assessment=deps.state.last_assessment, notes=[note], reader=reader)
    report, audit = verify_citations(draft, collected, question=question, reader=reader)
    return CheckedReport(report, audit, reason, pool=[item.id for item in pool])


EXTRACTIVE: dict[str, tuple[str, FallbackReason]] = {
    "model_failed": ("The Report agent failed ({note}); this report is extractive.", "report_failed"),
    "rejected": ("{note}", "no_cited_findings"),
    "crashed": ("The report stage crashed ({note}); this report is extractive.", "report_crashed"),
    "code_only": ("This run uses no language model; this report is extractive.", "code_only"),
}


async def extractive(deps: ResearchDeps, request: ReportRequest, cause: Cause) -> CheckedReport:
    """The code half: an extractive report from the model half's selection (or the most relevant items)."""
    note, reason = EXTRACTIVE[cause.kind]
    return _extractive(deps, request.items, note.format(note=cause.note), reason)


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
        limit = min(2 * deps.settings.judge_max_items, MAX_REPORT_ITEMS)
        # The selected studies with their Results passages collected (a handful: full text comes from the
        # library), so that a finding may cite the passage that states a study's result, with its section.
        request.items = with_study_parts(await deps.evidence.select(deps.state.question, limit), deps.evidence.items)
        draft = await writer(deps, request.items, request.stop)
        question, reader = deps.state.question, deps.study_reader
        report, audit = verify_citations(draft, deps.evidence.items, question=question, reader=reader)
        findings = bool(draft.key_findings or draft.contrary_evidence)
        return CheckedReport(report, audit, pool=[item.id for item in request.items], drafted_findings=findings)

    return Stage(
        name="report",
        agent="report",
        model=drafted if writer is not None else None,
        code=extractive,
        degraded=report_degraded,
        rejects=uncited,
        final=True,
    )


async def write_report(
    deps: ResearchDeps, stage: Stage[ReportRequest, CheckedReport], stop: StopReason
) -> CheckedReport:
    """The run's report, always; never raises for a model failure or a crash in the stage."""
    if not deps.evidence:
        with deps.state.timed("report"):
            return CheckedReport(nothing_found(deps), CitationAudit(), "no_evidence")
    ran = await run_stage(stage, deps, ReportRequest(stop))
    checked = ran.result
    if ran.crash is not None:
        checked.crash = f"the report stage crashed: {ran.crash}"
    return checked
