"""The report, built in code as one document (``report.document``) that two writers emit: Markdown for
``report.md`` (``report.markdown_writer``) and HTML for the page (``report.html``). Every piece of text from the
web, a paper or a model is a text run, which each writer escapes once, so it shows as plain text: no markup, no
links, no emphasis, no headings. The only links are the collected sources' own URLs in the reference list
(``report.references``) and the run's own figure files. The sections written in code are in
``report.sections``; this module puts them in order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from deepcritical.appraisal.ratings import overcounts, untrue
from deepcritical.appraisal.run_appraisal import counted_items, shown_assessment
from deepcritical.appraisal.strength import Strength
from deepcritical.appraisal.studies import group_studies, lead, study_numbers
from deepcritical.appraisal.study_reading import StudyReader
from deepcritical.models import Evidence
from deepcritical.outputs import STOP_EXPLANATIONS, Assessment, ResearchReport, Verdict
from deepcritical.reading.frame import QuestionFrame
from deepcritical.report.aims import aims_block
from deepcritical.report.candidates import open_block
from deepcritical.report.document import (
    Block,
    Code,
    Heading,
    Inline,
    Item,
    Quote,
    References,
    ReportDocument,
    bullets,
    heading,
    paragraph,
    runs,
    strong,
)
from deepcritical.report.figure_data import Figures, build_figures, figure_lines, flow_lines
from deepcritical.report.markdown import ModelText, code_span, escape, mentioned_ids, safe_link, source_error
from deepcritical.report.markdown_writer import blocks_markdown, to_markdown
from deepcritical.report.references import citation_mark, passage_link, reference_entry
from deepcritical.report.results import results_table
from deepcritical.report.sections import (
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
from deepcritical.report.summary_of_findings import summary_of_findings
from deepcritical.text import quantity, split_sentences

# Names other modules and tests take from here, where they were first written.
__all__ = [
    "BANNER",
    "DEMO_BANNER",
    "RenderContext",
    "build_document",
    "citation_mark",
    "code_span",
    "counted_set",
    "escape",
    "passage_link",
    "reference_numbers",
    "reference_order",
    "render_markdown",
    "safe_link",
    "verdict_block",
]

BANNER = Quote(
    blocks=[
        paragraph(
            strong("DEMO MODE: SYNTHETIC SOURCES."),
            " Every source cited in this report is synthetic demo data served offline by DeepCritical's stand-ins, "
            "not real literature. It shows how DeepCritical works; it is not medical evidence.",
        )
    ]
)
DEMO_BANNER = blocks_markdown([BANNER]).rstrip("\n")  # the banner's one line in report.md


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
    reader: StudyReader | None = None  # the run's reader of the question's studies (else the linear one)


def counted_set(report: ResearchReport, evidence: Mapping[str, Evidence], context: RenderContext) -> Strength:
    """The counted set the run computed once (``context.counted``), else ``counted_items``."""
    if context.counted is not None:
        return context.counted
    return counted_items(report.question, evidence, context.pool, context.reader)


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
    # A finding's items are numbered even when the report's own list leaves them out (a finding never shows
    # uncited): the findings, then the contrary evidence, then the list.
    cited = [i for finding in (*report.key_findings, *report.contrary_evidence) for i in finding.evidence_ids]
    order = [*cited, *report.references, *counted.counted, *named, *rested]
    return [i for i in dict.fromkeys(order) if i in evidence and not evidence[i].retracted]


def reference_numbers(
    report: ResearchReport, evidence: Mapping[str, Evidence], context: RenderContext
) -> dict[str, int]:
    """Each numbered item's reference number: one per study, its abstract and passages sharing it."""
    return study_numbers(group_studies(evidence[i] for i in reference_order(report, evidence, context)))


def build_document(report: ResearchReport, evidence: Mapping[str, Evidence], context: RenderContext) -> ReportDocument:
    """The report as a document, which ``render_markdown`` writes as Markdown and ``report.html`` as HTML.
    ``report`` must already be citation-checked against ``evidence``. One counted set (``counted_set``) feeds the
    brief's totals, the table, the warnings, the limitations' checks and the caps on the judge's scores; one
    numbering (``reference_order``) and one citation style serve every section."""
    counted = counted_set(report, evidence, context)
    # One number per study: an article's abstract and its passages share it (``appraisal.studies``).
    studies = group_studies(evidence[i] for i in reference_order(report, evidence, context))
    numbers = study_numbers(studies)
    text = ModelText(evidence, numbers)
    lines: list[Block] = [heading(report.question, level=1)]
    if context.demo:
        lines += [BANNER]
    # What a reader meets first: the question's frame, the answer and its certainty, then the summary of
    # findings; how the run went (its id, its model, a model failure) comes after them.
    lines += answer_block(report, evidence, context, counted, numbers, text)
    figures = context.figures or build_figures(counted, evidence, numbers)
    if context.verdict is not None:
        # The summary of findings (each outcome's effect and GRADE certainty), right after the answer.
        lines += summary_of_findings(context.verdict, context.frame, counted, figures, numbers)
        lines += aims_block(report.question, counted, numbers)  # "prevent or treat": which studies are which
    if context.degraded:
        lines += [
            Quote(
                blocks=[
                    paragraph(
                        strong("Part of this run was done in code because the language model failed."),
                        *(f" {reason[0].upper() + reason[1:]}." for reason in context.degraded),
                    )
                ]
            )
        ]
    meta = [(label, value) for label, value in (("run", context.run_id), ("model", context.model)) if value]
    if meta:
        lines += [paragraph(*[run for at, (label, value) in enumerate(meta) for run in _meta(at, label, value)])]
    retracted, concern = flagged(counted, report, evidence)
    lines += flag_warnings(retracted, concern, evidence, numbers, context.demo)
    lines += [
        heading("Key findings"),
        *findings_list(
            report.key_findings, numbers, text, "No finding could be supported.", evidence, counted.indirect
        ),
    ]
    none_found = "None among the evidence reviewed."
    contrary = findings_list(report.contrary_evidence, numbers, text, none_found, evidence, counted.indirect)
    lines += [heading("Contrary evidence"), *contrary]
    if evidence:
        lines += [heading("Strength of evidence"), *strength_table(counted, numbers)]
    lines += flow_lines(figures.flow)
    if evidence:
        comparison = context.frame.comparison_line() if context.frame is not None else None
        lines += results_table(figures.rows, len(counted.counted), numbers, comparison)
        lines += figure_lines(figures)
    shown = shown_assessment(context.assessment, counted)
    if shown is not None:
        lines += [heading("How the judge rated the evidence"), *assessment_lines(shown, text, context.verdict)]
    # Errors are code-written and shown escaped (URLs defanged) under "Why the run stopped", never here.
    designs = present_designs(counted, report, evidence)
    stated = [item for item in (*report.limitations, *context.notes) if not untrue(item, designs)]
    limitations = [Item(runs=rendered) for item in stated if (rendered := text(item))]
    lines += [heading("Limitations"), bullets(limitations or [Item(runs=runs("None stated."))])]
    lines += _run_lines(evidence, context)
    lines += [heading("References")]
    recalled = set(context.recalled)
    entries = [reference_entry(study, lead(study).id in recalled, context.demo) for study in studies]
    lines += [References(items=entries) if entries else paragraph("None.")]
    return ReportDocument(blocks=lines)


def _run_lines(evidence: Mapping[str, Evidence], context: RenderContext) -> list[Block]:
    """Why the run stopped, and what happened on the way: its iterations, its sources, its problems."""
    counts = ", ".join(f"{name} {count}" for name, count in context.sources.items()) or "none"
    happened = [
        Item(
            runs=runs(
                f"Iterations: {context.iterations}; {quantity(len(evidence), 'item')} collected; by source (an item "
                f"found by several sources counts for each): {counts}."
            )
        )
    ]
    for name, error in context.failed_sources.items():
        happened.append(Item(runs=runs(f"Source problem, {name}: {source_error(name, error)}")))
    happened += [Item(runs=runs(f"Problem: {problem}")) for problem in context.problems]
    return [
        heading("Why the run stopped"),
        paragraph(STOP_EXPLANATIONS.get(context.stop_reason, context.stop_reason)),
        bullets(happened),
    ]


def answer_block(
    report: ResearchReport,
    evidence: Mapping[str, Evidence],
    context: RenderContext,
    counted: Strength,
    numbers: Mapping[str, int],
    text: ModelText,
) -> list[Block]:
    """The report's opening, under its title: the question's frame, the verdict with its certainty, the answer
    in brief and where its totals come from. The page, ``report.md`` and the MCP result all start here."""
    lines: list[Block] = []
    if context.frame is not None and (frame := context.frame.summary()):
        lines += [paragraph(strong("Question frame."), f" {frame}")]
    if context.verdict is not None:
        lines += (
            open_block(context.verdict, numbers)
            if context.verdict.label == "open"
            else verdict_block(context.verdict, numbers)
        )
    # A sentence of the brief that counts more studies of a kind than the table does is not shown: the
    # counted line below it gives the totals.
    kept = [part for part in split_sentences(report.answer_brief) if not overcounts(part, counted)]
    brief = text(" ".join(kept)) or runs("No answer could be given.")
    lines += [heading("Answer in brief"), paragraph(brief)]
    if evidence:
        lines += [paragraph(counted_line(counted, len(evidence)))]
    return lines


def _meta(at: int, label: str, value: str) -> list[Inline]:
    """'run `research-…`', joined by ' · '."""
    return runs(" · " if at else "", f"{label} ", Code(text=value))


def render_markdown(report: ResearchReport, evidence: Mapping[str, Evidence], context: RenderContext) -> str:
    """The report as Markdown (``build_document`` written by ``report.markdown_writer``)."""
    return to_markdown(build_document(report, evidence, context))


def on_top(document: ReportDocument, blocks: Sequence[Block]) -> ReportDocument:
    """``document`` with ``blocks`` at its top: under its title, and under the demo banner when there is one (a
    reader learns that the evidence is synthetic before anything else)."""
    current = document.blocks
    at = 1 if current and isinstance(current[0], Heading) and current[0].level == 1 else 0
    at += 1 if current[at : at + 1] == [BANNER] else 0
    return document.model_copy(update={"blocks": [*current[:at], *blocks, *current[at:]]})
