"""Markdown rendering, done in code. Every piece of text from the web, a paper or a model is escaped
(``stages.markdown``) so it renders as plain text: no HTML, no links, no emphasis, no headings. The only
links are the collected sources' own URLs in the reference list (``stages.references``) and the run's own
figure files. The sections written in code are in ``stages.sections``; this module puts them in order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from deepcritical.models import Evidence
from deepcritical.outputs import STOP_EXPLANATIONS, Assessment, ResearchReport, Verdict
from deepcritical.reading.frame import QuestionFrame
from deepcritical.stages.candidates import open_block
from deepcritical.stages.figures import Figures, build_figures, figure_lines, flow_lines
from deepcritical.stages.framing import STUDY_TEXT_CHARS, EvidenceView
from deepcritical.stages.markdown import ModelText, cite, code_span, escape, mentioned_ids, safe_link, source_error
from deepcritical.stages.ratings import cap_assessment, overcounts, untrue
from deepcritical.stages.reading import split_sentences
from deepcritical.stages.references import citation_mark, passage_link, reference_entry
from deepcritical.stages.results import results_table
from deepcritical.stages.sections import (
    ASPECT_NAMES,
    assessment_lines,
    counted_line,
    findings_list,
    flag_warnings,
    flagged,
    present_designs,
    strength_table,
    verdict_block,
)
from deepcritical.stages.strength import Strength, strength_of
from deepcritical.stages.studies import group_studies, lead, study_numbers, with_study_parts

# Names other modules and tests take from here, where they were first written.
__all__ = [
    "DEMO_BANNER",
    "RenderContext",
    "citation_mark",
    "code_span",
    "counted_items",
    "counted_set",
    "escape",
    "passage_link",
    "reference_numbers",
    "reference_order",
    "render_markdown",
    "safe_link",
    "shown_assessment",
    "verdict_block",
]

DEMO_BANNER = (
    "> **DEMO MODE: SYNTHETIC SOURCES.** Every source cited in this report is synthetic demo data served "
    "offline by DeepCritical's stand-ins, not real literature. It shows how DeepCritical works; it is not "
    "medical evidence."
)


@dataclass
class RenderContext:
    """What the report says about its run, besides the report itself."""

    demo: bool
    stop_reason: str
    run_id: str = ""
    model: str = ""
    iterations: int = 0
    assessment: Assessment | None = None
    sources: Mapping[str, int] = field(default_factory=dict)
    failed_sources: Mapping[str, str] = field(default_factory=dict)
    problems: Sequence[str] = ()
    notes: Sequence[str] = ()
    degraded: Sequence[str] = ()
    recalled: Sequence[str] = ()
    pool: Sequence[str] = ()  # the items the report was written from; empty: every collected item
    verdict: Verdict | None = None
    # The counted set of ``pool`` over the evidence rendered with this context, when the run computed it
    # already (the verdict reads the same set): a context serves one run's evidence only.
    counted: Strength | None = None
    frame: QuestionFrame | None = None  # the question's PICO, shown under its title
    # The run's study results, flow and forest plots, when the run computed them (else computed here).
    figures: Figures | None = None


def counted_items(question: str, evidence: Mapping[str, Evidence], pool: Sequence[str]) -> Strength:
    """The report's one counted set: the items it was written from (every collected item when not told)."""
    pooled = [evidence[i] for i in pool if i in evidence] or list(evidence.values())
    # A study is counted by what states its results: its abstract or results passage, when collected, stands
    # for a methods passage that was in the pool. The whole text: an abstract states its results last, past the
    # slice a report quotes from.
    pooled = with_study_parts(pooled, evidence)
    return strength_of(question, [EvidenceView.of(item, STUDY_TEXT_CHARS) for item in pooled])


def counted_set(report: ResearchReport, evidence: Mapping[str, Evidence], context: RenderContext) -> Strength:
    """The counted set the run computed once (``context.counted``), else ``counted_items``."""
    if context.counted is not None:
        return context.counted
    return counted_items(report.question, evidence, context.pool)


def shown_assessment(assessment: Assessment | None, counted: Strength) -> Assessment | None:
    """The judge's last assessment as the report shows it: capped (again) by the report's counted items."""
    return cap_assessment(assessment, counted) if assessment is not None else None


def reference_order(report: ResearchReport, evidence: Mapping[str, Evidence], context: RenderContext) -> list[str]:
    """Every item the report cites, numbered once, in this order: the findings' items, the counted items
    (table order), then any collected item named in the brief, the judge's reasons or the limitations.
    Retracted items are never numbered (they are listed under the warning)."""
    counted = counted_set(report, evidence, context)
    shown = shown_assessment(context.assessment, counted)
    texts = [report.answer_brief, *report.limitations, *context.notes]
    if shown is not None:
        texts += [getattr(shown, name).reason for name, _ in ASPECT_NAMES] + [cap.reason for cap in shown.caps]
    named = [i for text in texts for i in mentioned_ids(text, evidence)]
    rested = context.verdict.evidence_ids if context.verdict is not None else []
    order = [*report.references, *counted.counted, *named, *rested]
    return [i for i in dict.fromkeys(order) if i in evidence and not evidence[i].retracted]


def reference_numbers(
    report: ResearchReport, evidence: Mapping[str, Evidence], context: RenderContext
) -> dict[str, int]:
    """Each numbered item's reference number: one per study, its abstract and passages sharing it."""
    return study_numbers(group_studies(evidence[i] for i in reference_order(report, evidence, context)))


def render_markdown(report: ResearchReport, evidence: Mapping[str, Evidence], context: RenderContext) -> str:
    """The report as Markdown. ``report`` must already be citation-checked against ``evidence``. One counted
    set (``counted_set``) feeds the brief's totals, the table, the warnings, the limitations' checks and the
    caps on the judge's scores; one numbering (``reference_order``) and one citation style serve every section."""
    counted = counted_set(report, evidence, context)
    # One number per study: an article's abstract and its passages share it (``stages.studies``).
    studies = group_studies(evidence[i] for i in reference_order(report, evidence, context))
    numbers = study_numbers(studies)
    text = ModelText(evidence, numbers)
    lines = [f"# {escape(report.question)}", ""]
    if context.demo:
        lines += [DEMO_BANNER, ""]
    meta = [
        f"{label} {code_span(value)}" for label, value in (("run", context.run_id), ("model", context.model)) if value
    ]
    if meta:
        lines += [" · ".join(meta), ""]
    if context.frame is not None and (frame := context.frame.summary()):
        lines += [f"**Question frame.** {escape(frame)}", ""]
    if context.verdict is not None:
        lines += (
            open_block(context.verdict, numbers, escape, cite)
            if context.verdict.label == "open"
            else verdict_block(context.verdict, numbers)
        )
    if context.degraded:
        lines += [
            "> **Part of this run was done in code because the language model failed.** "
            + " ".join(f"{escape(reason[0].upper() + reason[1:])}." for reason in context.degraded),
            "",
        ]
    # A sentence of the brief that counts more studies of a kind than the table does is not shown: the
    # counted line below it gives the totals.
    kept = [part for part in split_sentences(report.answer_brief) if not overcounts(part, counted)]
    brief = text(" ".join(kept)) or "No answer could be given."
    lines += ["## Answer in brief", "", brief, ""]
    if evidence:
        lines += [escape(counted_line(counted, len(evidence))), ""]
    retracted, concern = flagged(counted, report, evidence)
    lines += flag_warnings(retracted, concern, evidence, numbers, context.demo)
    lines += [
        "## Key findings",
        "",
        *findings_list(report.key_findings, numbers, text, "No finding could be supported.", evidence),
        "",
    ]
    none_found = "None among the evidence reviewed."
    contrary = findings_list(report.contrary_evidence, numbers, text, none_found, evidence)
    lines += ["## Contrary evidence", "", *contrary, ""]
    figures = context.figures or build_figures(counted, evidence, numbers)
    if evidence:
        lines += ["## Strength of evidence", "", *strength_table(counted, numbers), ""]
    lines += flow_lines(figures.flow, escape)
    if evidence:
        comparison = context.frame.comparison_line() if context.frame is not None else None
        lines += results_table(figures.rows, len(counted.counted), numbers, escape, comparison)
        lines += figure_lines(figures, escape)
    shown = shown_assessment(context.assessment, counted)
    if shown is not None:
        lines += ["## How the judge rated the evidence", "", *assessment_lines(shown, text), ""]
    # Errors are code-written and shown escaped (URLs defanged) under "Why the run stopped", never here.
    designs = present_designs(counted, report, evidence)
    stated = [item for item in (*report.limitations, *context.notes) if not untrue(item, designs)]
    limitations = [f"- {rendered}" for item in stated if (rendered := text(item))]
    lines += ["## Limitations", "", *(limitations or ["- None stated."]), ""]
    lines += ["## Why the run stopped", "", escape(STOP_EXPLANATIONS.get(context.stop_reason, context.stop_reason))]
    lines.append("")
    counts = ", ".join(f"{escape(name)} {count}" for name, count in context.sources.items()) or "none"
    lines.append(
        f"- Iterations: {context.iterations}; {len(evidence)} item(s) collected; by source (an item found by several "
        f"sources counts for each): {counts}."
    )
    for name, error in context.failed_sources.items():
        lines.append(f"- Source problem, {escape(name)}: {escape(source_error(name, error))}")
    lines += [f"- Problem: {escape(problem)}" for problem in context.problems]
    lines += ["", "## References", ""]
    recalled = set(context.recalled)
    lines += [
        reference_entry(number, study, lead(study).id in recalled, context.demo)
        for number, study in enumerate(studies, start=1)
    ] or ["None."]
    return "\n".join(lines).rstrip() + "\n"
