"""An outcome of a given size for the redaction bench, built the way the web tests build theirs."""

from __future__ import annotations

from datetime import UTC, datetime

from deepcritical.models import Citation, Evidence
from deepcritical.outputs import CitationAudit, Finding, ResearchReport
from deepcritical.report.markdown_writer import to_markdown
from deepcritical.report.render import RenderContext, build_document
from deepcritical.run.outcome import LlmUsage, ResearchOutcome


def big_outcome(items: int) -> ResearchOutcome:
    evidence = [
        Evidence(
            content=f"Metformin lowered dementia risk in cohort {number}. " * 12,
            citation=Citation(
                source="pubmed",
                title=f"Cohort {number} of metformin users",
                url=f"https://pubmed.ncbi.nlm.nih.gov/{10_000_000 + number}/",
                pmid=str(10_000_000 + number),
            ),
        )
        for number in range(items)
    ]
    report = ResearchReport(
        question="Can metformin be repurposed for Alzheimer's disease?",
        answer_brief="Cohorts suggest a lower risk.",
        key_findings=[Finding(statement="Metformin users had less dementia.", evidence_ids=[evidence[0].id])],
        references=[evidence[0].id],
    )
    context = RenderContext(demo=False, stop_reason="sufficient", run_id="research-bench", model="bench")
    document = build_document(report, {item.id: item for item in evidence}, context)
    return ResearchOutcome(
        question=report.question,
        run_id="research-bench",
        started_at=datetime.now(UTC).isoformat(),
        demo=False,
        model="bench",
        stop_reason="sufficient",
        iterations=3,
        report=report,
        markdown=to_markdown(document),
        document=document,
        report_fallback=False,
        citation_audit=CitationAudit(),
        evidence=evidence,
        assessments=[],
        plans=[],
        searches=[],
        timings={"total": 1.0},
        llm_usage=LlmUsage(requests=6),
        errors=[],
        settings={},
    )
