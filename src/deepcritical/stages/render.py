"""Markdown rendering, done in code. Every piece of text from the web, a paper or a model is escaped
so it renders as plain text: no HTML, no links, no emphasis, no headings. The only links are the
collected sources' own URLs in the reference list."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

from deepcritical.models import Evidence, Grade
from deepcritical.outputs import STOP_EXPLANATIONS, Assessment, Finding, ResearchReport, Verdict
from deepcritical.stages.citations import LINK_REMOVED, URL, CitationIndex, remove_urls
from deepcritical.stages.framing import REPORT_TEXT_CHARS, EvidenceView
from deepcritical.stages.strength import DIRECTIONS, strength_of

DEMO_BANNER = (
    "> **DEMO MODE: SYNTHETIC SOURCES.** Every source cited in this report is synthetic demo data served "
    "offline by DeepCritical's stand-ins, not real literature. It shows how DeepCritical works; it is not "
    "medical evidence."
)
# Inline specials; the block-level ones (#, -, +, >, =, "1.") matter only at the start of a line.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
# An id written bare in model text (pmid:…, pmcid:…, doi:…), which the renderer turns into a reference number.
CITED_ID = re.compile(r"\b(?:pmid|pmcid|doi):[^\s,;()\[\]]*[^\s,;()\[\].]", re.IGNORECASE)
_LINE_START = re.compile(r"^(?:([#+\-=])|(\d+)([.)]))")


def defang(text: str) -> str:
    """Make URL-like text unlinkable (``http[:]//``, ``www[.]``) so no renderer turns it into a link."""

    def neutral(match: re.Match[str]) -> str:
        return match.group(0).replace("://", "[:]//", 1).replace("www.", "www[.]", 1)

    return URL.sub(neutral, text)


def escape(text: str) -> str:
    """Plain, inert text on one line: Markdown specials backslash-escaped, HTML specials as entities."""
    flat = " ".join(defang(text).split())
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", flat)
    escaped = _LINE_START.sub(lambda m: f"\\{m.group(1)}" if m.group(1) else f"{m.group(2)}\\{m.group(3)}", escaped)
    return html.escape(escaped, quote=False)


def source_error(name: str, error: str) -> str:
    """A source's error without its leading "<name>: ", for where the name is already shown."""
    prefix = f"{name}:"
    return error[len(prefix) :].strip() if error.startswith(prefix) else error


class ModelText:
    """Renders model-written text: a URL of a collected item becomes its reference number (or its
    defanged id when the report does not cite it); any other URL is removed."""

    def __init__(self, evidence: Mapping[str, Evidence], numbers: Mapping[str, int]) -> None:
        self._index = CitationIndex(evidence)
        self._numbers = numbers

    def _url(self, url: str) -> str:
        evidence_id = self._index.resolve(url)
        if evidence_id is None:
            return LINK_REMOVED
        return f"[{self._numbers[evidence_id]}]" if evidence_id in self._numbers else evidence_id

    def _id(self, match: re.Match[str]) -> str:
        evidence_id = self._index.resolve(match.group(0))
        if evidence_id is None or evidence_id not in self._numbers:
            return match.group(0)
        return f"[{self._numbers[evidence_id]}]"

    def __call__(self, text: str) -> str:
        return escape(CITED_ID.sub(self._id, remove_urls(text, self._url)))


def code_span(text: str) -> str:
    """An inline code span that holds ``text`` verbatim, whatever backticks it contains."""
    flat = " ".join(text.split())
    runs = [len(run) for run in re.findall(r"`+", flat)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def safe_link(url: str) -> str | None:
    """An http(s) URL percent-encoded so it cannot end a Markdown link early, or None."""
    parts = urlsplit(url.strip())
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return quote(url.strip(), safe=":/?#@!$&'*+,;=%-._~")


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


BASIS_WORDS = {
    "publication_type": "from its publication types",
    "mesh": "from its MeSH headings",
    "text": "from its title and abstract",
    "source": "from its source",
}


def grade_text(grade: Grade) -> str:
    """'randomised controlled trial, humans, n = 80; OCEBM level 2 (from its publication types)'."""
    level = f"OCEBM level {grade.level}" if grade.level is not None else "outside the OCEBM scale"
    basis = f" ({BASIS_WORDS[grade.basis]})" if grade.basis else " (not graded)"
    return f"{grade.label}; {level}{basis}"


def citation_mark(number: int, item: Evidence | None) -> str:
    """A reference number, with the passage's place when the item is a passage: '3, Results', '5, p. 7'."""
    passage = item.passage if item is not None else None
    if passage is None:
        return str(number)
    if passage.page is not None:
        return f"{number}, p. {passage.page}"
    return f"{number}, {escape(passage.section)}" if passage.section else str(number)


# A passage of a PubMed Central article links to its words on the article's page (a text fragment).
PMC_ARTICLE = "https://pmc.ncbi.nlm.nih.gov/articles/{pmcid}/"
FRAGMENT_WORDS = 6


def passage_link(item: Evidence) -> str | None:
    """The web page of a passage of a PMC article, scrolled to the passage's opening words; None otherwise."""
    if item.passage is None or not item.citation.pmcid:
        return None
    words = item.content.split()[:FRAGMENT_WORDS]
    fragment = quote(" ".join(words), safe="") if words else ""
    return PMC_ARTICLE.format(pmcid=item.citation.pmcid) + (f"#:~:text={fragment}" if fragment else "")


def _reference(number: int, item: Evidence, recalled: bool, demo: bool = False) -> str:
    citation = item.citation
    authors = ", ".join(citation.authors[:3]) + (" et al." if len(citation.authors) > 3 else "")
    venue = citation.journal or citation.source
    parts = [f"{number}. "]
    if authors:
        parts.append(f"{escape(authors)} ")
    parts.append(f"({escape(citation.date)}). {escape(citation.title.rstrip('. '))}. *{escape(venue)}*.")
    parts.append(f" Design: {escape(grade_text(item.grade))}.")
    if item.expression_of_concern:
        parts.append(" **The journal has published an expression of concern about this article.**")
    origin = "recalled from an earlier run, " if recalled else ""
    parts.append(f" Evidence id: {code_span(item.id)}; {origin}found by {escape(', '.join(item.found_by))}.")
    if item.passage is not None:
        place = f"page {item.passage.page}" if item.passage.page else item.passage.section
        span = f"characters {item.passage.start}-{item.passage.end}" if item.passage.start is not None else ""
        parts.append(f" Passage: {escape(', '.join(part for part in (place, span) if part))}.")
    if demo:  # a synthetic PMID or DOI names no real page: a link would open PubMed's "not found", or another paper
        parts.append(" (synthetic demo record: no web page)")
        return "".join(parts)
    link = passage_link(item) or safe_link(citation.url)
    parts.append(f" [Link]({link})" if link else " (no web link)")
    return "".join(parts)


def best_grade(ids: Sequence[str], evidence: Mapping[str, Evidence]) -> Grade | None:
    """The strongest grade among the items behind a finding: the lowest OCEBM level in humans, then items
    outside the scale, animal and cell studies last."""
    grades = [evidence[i].grade for i in ids if i in evidence]

    def rank(grade: Grade) -> tuple[int, int]:
        preclinical = grade.population in ("animals", "in_vitro")
        return (grade.level if grade.level is not None and not preclinical else 6, 1 if preclinical else 0)

    return min(grades, key=rank) if grades else None


def _findings(
    findings: Sequence[Finding],
    numbers: Mapping[str, int],
    text: ModelText,
    empty: str,
    evidence: Mapping[str, Evidence],
) -> list[str]:
    if not findings:
        return [empty]
    lines = []
    for finding in findings:
        marks = "; ".join(citation_mark(numbers[i], evidence.get(i)) for i in finding.evidence_ids if i in numbers)
        grade = best_grade(finding.evidence_ids, evidence)
        shown = f" *({escape(grade.label)})*" if grade is not None and grade.basis is not None else ""
        said = f' "{escape(finding.quote)}"' if finding.quote else ""
        lines.append(f"- {text(finding.statement)}{said} \\[{marks}\\]{shown}")
    return lines


def _flagged_item(item: Evidence, demo: bool) -> str:
    link = None if demo else safe_link(item.citation.url)  # a synthetic record has no page
    where = f" [Link]({link})" if link else ""
    return f"{escape(item.citation.title.rstrip('. '))} ({escape(item.citation.date)}), {code_span(item.id)}.{where}"


def _flags(evidence: Mapping[str, Evidence], demo: bool = False) -> list[str]:
    """A visible warning listing every retracted item collected (they support no finding), and the items
    under an expression of concern."""
    retracted = [item for item in evidence.values() if item.retracted]
    concerned = [item for item in evidence.values() if item.expression_of_concern and not item.retracted]
    lines: list[str] = []
    if retracted:
        lines += [
            f"> **Warning: {len(retracted)} retracted publication(s) found.** A retracted publication supports no "
            "finding in this report; it is listed here so that it is not mistaken for evidence:",
            ">",
            *(f"> - **Retracted:** {_flagged_item(item, demo)}" for item in retracted),
            "",
        ]
    if concerned:
        lines += [
            f"> **Caution: {len(concerned)} publication(s) under an expression of concern.** The journal has "
            "questioned their reliability; read any finding they support with care:",
            ">",
            *(f"> - **Expression of concern:** {_flagged_item(item, demo)}" for item in concerned),
            "",
        ]
    return lines


def _cell(ids: Sequence[str], numbers: Mapping[str, int]) -> str:
    if not ids:
        return "0"
    cited = [str(numbers[i]) for i in ids if i in numbers]
    return f"{len(ids)} \\[{', '.join(cited)}\\]" if cited else str(len(ids))


def strength_table(question: str, evidence: Mapping[str, Evidence], numbers: Mapping[str, int]) -> list[str]:
    """The items the report was written from, by design (strongest first) and by the direction of their
    result. Cells give the count and the reference numbers of those the report cites."""
    strength = strength_of(question, [EvidenceView.of(item, REPORT_TEXT_CHARS) for item in evidence.values()])
    lines = [
        "| Design | OCEBM 2011 level | Favourable | Null | Unfavourable | No clear result |",
        "|---|---|---|---|---|---|",
    ]
    for label, cells in strength.rows:
        counts = " | ".join(_cell(cells.get(way, []), numbers) for way in (*DIRECTIONS, None))
        lines.append(f"| {escape(label[0].upper() + label[1:])} | {escape(strength.level_text(label))} | {counts} |")
    if not strength.rows:
        lines = ["No collected item mentions the question's key terms, so none is placed in the table."]
    notes = [
        "Each item's design comes from its publication types, MeSH headings or text, and the direction of its "
        "result from the wording of the sentence that states it (read in code, not appraised); numbers in "
        "brackets are references cited above."
    ]
    if strength.off_topic:
        notes.append(
            f"{len(strength.off_topic)} collected item(s) that do not mention the question's key terms are left out."
        )
    if strength.registrations:
        notes.append(
            f"{len(strength.registrations)} trial registration(s) are left out: they state plans, not results."
        )
    if strength.retracted:
        notes.append(f"{len(strength.retracted)} retracted publication(s) are left out.")
    return [*lines, "", " ".join(notes)]


def _assessment(assessment: Assessment, text: ModelText) -> list[str]:
    lines = []
    for name, aspect in (
        ("Mechanism", assessment.mechanism),
        ("Clinical evidence", assessment.clinical),
        ("Safety and contrary evidence", assessment.safety),
    ):
        lines.append(f"- **{name}: {aspect.score}/10.** {text(aspect.reason)}")
    verdict = "sufficient" if assessment.sufficient else "not sufficient"
    lines.append(f"- **Verdict:** {verdict}, confidence {assessment.confidence:.2f}.")
    return lines


VERDICT_WORDS = {
    "yes": "Yes",
    "no": "No",
    "maybe": "Maybe",
    "supported": "Supported",
    "refuted": "Refuted",
    "mixed": "Mixed",
    "insufficient": "Insufficient evidence",
}


def verdict_block(verdict: Verdict, numbers: Mapping[str, int]) -> list[str]:
    """The report's first section: the verdict, its confidence, who gave it, and what it rests on."""
    who = "given by the report model" if verdict.by == "model" else "computed in code"
    marks = [str(numbers[i]) if i in numbers else code_span(i) for i in verdict.evidence_ids]
    rests = f" It rests on {', '.join(marks)}" if marks else " No collected item bears on it"
    strongest = ""
    if verdict.strongest_design:
        level = f", OCEBM level {verdict.strongest_level}" if verdict.strongest_level else ""
        strongest = f"; the strongest design behind it: {escape(verdict.strongest_design)}{level}"
    return [
        "## Verdict",
        "",
        f"**{VERDICT_WORDS[verdict.label]}** (confidence {verdict.confidence:.2f}, {who}).{rests}{strongest}.",
        "",
    ]


def render_markdown(report: ResearchReport, evidence: Mapping[str, Evidence], context: RenderContext) -> str:
    """The report as Markdown. ``report`` must already be citation-checked against ``evidence``."""
    references = [evidence[i] for i in report.references if i in evidence]
    numbers = {item.id: number for number, item in enumerate(references, start=1)}
    text = ModelText(evidence, numbers)
    lines = [f"# {escape(report.question)}", ""]
    if context.demo:
        lines += [DEMO_BANNER, ""]
    meta = [
        f"{label} {code_span(value)}" for label, value in (("run", context.run_id), ("model", context.model)) if value
    ]
    if meta:
        lines += [" · ".join(meta), ""]
    if context.verdict is not None:
        lines += verdict_block(context.verdict, numbers)
    if context.degraded:
        lines += [
            "> **Part of this run was done in code because the language model failed.** "
            + " ".join(f"{escape(reason[0].upper() + reason[1:])}." for reason in context.degraded),
            "",
        ]
    lines += ["## Answer in brief", "", text(report.answer_brief) or "No answer could be given.", ""]
    lines += _flags(evidence, context.demo)
    lines += [
        "## Key findings",
        "",
        *_findings(report.key_findings, numbers, text, "No finding could be supported.", evidence),
        "",
    ]
    none_found = "None among the evidence reviewed."
    contrary = _findings(report.contrary_evidence, numbers, text, none_found, evidence)
    lines += ["## Contrary evidence", "", *contrary, ""]
    if evidence:
        # The items the report was written from, so the table and the answer in brief count the same items.
        pooled = {i: evidence[i] for i in context.pool if i in evidence} or evidence
        lines += ["## Strength of evidence", "", *strength_table(report.question, pooled, numbers), ""]
    if context.assessment is not None:
        lines += ["## How the judge rated the evidence", "", *_assessment(context.assessment, text), ""]
    # Errors are code-written and shown escaped (URLs defanged) under "Why the run stopped", never here.
    limitations = [f"- {text(item)}" for item in (*report.limitations, *context.notes)]
    lines += ["## Limitations", "", *(limitations or ["- None stated."]), ""]
    lines += ["## Why the run stopped", "", escape(STOP_EXPLANATIONS.get(context.stop_reason, context.stop_reason))]
    lines.append("")
    counts = ", ".join(f"{escape(name)} {count}" for name, count in context.sources.items()) or "none"
    lines.append(f"- Iterations: {context.iterations}; evidence collected by source: {counts}.")
    for name, error in context.failed_sources.items():
        lines.append(f"- Source problem, {escape(name)}: {escape(source_error(name, error))}")
    lines += [f"- Problem: {escape(problem)}" for problem in context.problems]
    lines += ["", "## References", ""]
    recalled = set(context.recalled)
    lines += [
        _reference(number, item, item.id in recalled, context.demo) for number, item in enumerate(references, start=1)
    ] or ["None."]
    return "\n".join(lines).rstrip() + "\n"
