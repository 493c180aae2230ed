"""Markdown rendering, done in code. Every piece of text from the web, a paper or a model is escaped
so it renders as plain text: no HTML, no links, no emphasis, no headings. The only links are the
collected sources' own URLs in the reference list."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

from deepcritical.models import Evidence, Grade, Passage
from deepcritical.outputs import STOP_EXPLANATIONS, Assessment, Finding, ResearchReport, Verdict
from deepcritical.reading.frame import QuestionFrame
from deepcritical.stages.citations import LINK_REMOVED, URL, CitationIndex, remove_urls
from deepcritical.stages.framing import STUDY_TEXT_CHARS, EvidenceView
from deepcritical.stages.ratings import cap_assessment, overcounts, untrue
from deepcritical.stages.reading import split_sentences
from deepcritical.stages.results import results_table, study_results
from deepcritical.stages.strength import DIRECTIONS, Strength, strength_of
from deepcritical.stages.studies import group_studies, lead, study_numbers, with_study_parts

DEMO_BANNER = (
    "> **DEMO MODE: SYNTHETIC SOURCES.** Every source cited in this report is synthetic demo data served "
    "offline by DeepCritical's stand-ins, not real literature. It shows how DeepCritical works; it is not "
    "medical evidence."
)
# Inline specials (``<`` opens HTML and autolinks; ``&`` only where it would start an entity such as
# ``&lt;``); the block-level ones (#, -, +, >, =, "1.") matter only at the start of a line.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~<]|&(?=#?\w+;))")
# An id written bare in model text (pmid:…, pmcid:…, doi:…), which the renderer turns into a reference number.
CITED_ID = re.compile(r"\b(?:pmid|pmcid|doi):[^\s,;()\[\]]*[^\s,;()\[\].]", re.IGNORECASE)
_LINE_START = re.compile(r"^(?:([#+\-=>])|(\d+)([.)]))")


def defang(text: str) -> str:
    """Make URL-like text unlinkable (``http[:]//``, ``www[.]``) so no renderer turns it into a link."""

    def neutral(match: re.Match[str]) -> str:
        return match.group(0).replace("://", "[:]//", 1).replace("www.", "www[.]", 1)

    return URL.sub(neutral, text)


def escape(text: str) -> str:
    """Plain, inert text on one line, escaped once, for Markdown: its specials backslash-escaped (``<`` as
    ``\\<``, so ``p<0.01`` reads as itself in the file, in MCP text and on the page; no HTML entity, which
    a reader of the Markdown or a model would see as ``p&lt;0.01``). HTML escaping is the HTML renderer's."""
    flat = " ".join(defang(text).split())
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", flat)
    return _LINE_START.sub(lambda m: f"\\{m.group(1)}" if m.group(1) else f"{m.group(2)}\\{m.group(3)}", escaped)


def source_error(name: str, error: str) -> str:
    """A source's error without its leading "<name>: ", for where the name is already shown."""
    prefix = f"{name}:"
    return error[len(prefix) :].strip() if error.startswith(prefix) else error


# While model text is rendered, each citation is a marker; runs of markers become one "[1, 4]" group at the end.
_CITE = "\ue000{}\ue001"
_DROPPED = "\ue002"
_MARKS = r"(?:\ue000\d+\ue001|\ue002)"
_GROUP = re.compile(rf"(\(\s*)?({_MARKS}(?:\s*(?:,|;|and)?\s*{_MARKS})*)(\s*\))?")
_SPACE_BEFORE_PUNCTUATION = re.compile(r" +(?=[.,;:])")


def _group(match: re.Match[str]) -> str:
    numbers = list(dict.fromkeys(re.findall(r"\ue000(\d+)\ue001", match.group(2))))
    cited = f"\\[{', '.join(numbers)}\\]" if numbers else ""
    opened, closed = match.group(1), match.group(3)
    if opened and closed:  # the brackets held only citations
        return f" {cited}" if cited else ""
    return f"{opened or ''}{cited}{closed or ''}"


def cite(numbers: Sequence[int]) -> str:
    """The one citation style: "\\[1, 4\\]" (escaped brackets, so no renderer reads a link); a study's
    number once, however many of its passages are behind it."""
    return f"\\[{', '.join(str(number) for number in dict.fromkeys(numbers))}\\]" if numbers else ""


class ModelText:
    """Renders text written by a model or by code: every id or URL of a numbered item becomes its reference
    number, one bracketed group per run of citations ("(pmid:1, [2])" -> "[4, 2]"); an id of an item the report
    does not number, or of nothing collected, is removed, as is any other URL. No raw id is left beside a number."""

    def __init__(self, evidence: Mapping[str, Evidence], numbers: Mapping[str, int]) -> None:
        self._index = CitationIndex(evidence)
        self._numbers = numbers

    def _mark(self, evidence_id: str | None) -> str:
        if evidence_id is not None and evidence_id in self._numbers:
            return _CITE.format(self._numbers[evidence_id])
        return _DROPPED

    def _url(self, url: str) -> str:
        evidence_id = self._index.resolve(url)
        return LINK_REMOVED if evidence_id is None else self._mark(evidence_id)

    def _id(self, match: re.Match[str]) -> str:
        return self._mark(self._index.resolve(match.group(0)))

    def __call__(self, text: str) -> str:
        marked = CITED_ID.sub(self._id, remove_urls(text, self._url))
        grouped = _GROUP.sub(_group, escape(marked))
        return _SPACE_BEFORE_PUNCTUATION.sub("", " ".join(grouped.split()))


def mentioned_ids(text: str, evidence: Mapping[str, Evidence]) -> list[str]:
    """The collected items a text names by id or URL, in order."""
    index = CitationIndex(evidence)
    found: list[str | None] = []

    def on_url(url: str) -> str:
        found.append(index.resolve(url))
        return ""

    found += [index.resolve(match.group(0)) for match in CITED_ID.finditer(remove_urls(text, on_url))]
    return [i for i in dict.fromkeys(found) if i is not None]


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
    # The counted set of ``pool`` over the evidence rendered with this context, when the run computed it
    # already (the verdict reads the same set): a context serves one run's evidence only.
    counted: Strength | None = None
    frame: QuestionFrame | None = None  # the question's PICO, shown under its title


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


def _reference(number: int, study: Sequence[Evidence], recalled: bool, demo: bool = False) -> str:
    """A study's one reference: its abstract's record (else its first passage's), and the passages used."""
    item = lead(study)
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
    if others := [(part.id, where) for part in study if part is not item and (where := part.passage) is not None]:
        parts.append(f" Passages used: {'; '.join(_passage_used(*other) for other in others)}.")
    if demo:  # a synthetic PMID or DOI names no real page: a link would open PubMed's "not found", or another paper
        parts.append(" (synthetic demo record: no web page)")
        return "".join(parts)
    link = passage_link(item) or safe_link(citation.url)
    parts.append(f" [Link]({link})" if link else " (no web link)")
    return "".join(parts)


def _passage_used(evidence_id: str, passage: Passage) -> str:
    """'Results, characters 1698-2147 (`url:library://…/6`)'."""
    place = f"page {passage.page}" if passage.page else passage.section or "passage"
    span = f", characters {passage.start}-{passage.end}" if passage.start is not None else ""
    return f"{escape(place + span)} ({code_span(evidence_id)})"


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
        marks = "; ".join(
            dict.fromkeys(
                citation_mark(numbers[i], evidence.get(i)) for i in dict.fromkeys(finding.evidence_ids) if i in numbers
            )
        )
        grade = best_grade(finding.evidence_ids, evidence)
        shown = f" *({escape(grade.label)})*" if grade is not None and grade.basis is not None else ""
        said = f' "{escape(finding.quote)}"' if finding.quote else ""
        cited = f" \\[{marks}\\]" if marks else ""
        lines.append(f"- {text(finding.statement)}{said}{cited}{shown}")
    return lines


def _flagged_item(item: Evidence, numbers: Mapping[str, int], demo: bool) -> str:
    link = None if demo else safe_link(item.citation.url)  # a synthetic record has no page
    where = f" [Link]({link})" if link else ""
    number = f", reference {cite([numbers[item.id]])}" if item.id in numbers else ""
    return f"{escape(item.citation.title.rstrip('. '))} ({escape(item.citation.date)}){number}.{where}"


def flagged(counted: Strength, report: ResearchReport, evidence: Mapping[str, Evidence]) -> tuple[list[str], list[str]]:
    """The retracted items and those under an expression of concern that are on the question's topic (among
    the items reviewed), and any the report cites: a flag on an unrelated paper is noise, not a warning."""
    cited = [i for finding in (*report.key_findings, *report.contrary_evidence) for i in finding.evidence_ids]
    retracted = [i for i in counted.retracted if i in evidence]
    concern = [i for i in dict.fromkeys([*counted.concern, *cited]) if i in evidence]
    return retracted, [i for i in concern if evidence[i].expression_of_concern and not evidence[i].retracted]


def _flags(
    retracted: Sequence[str],
    concern: Sequence[str],
    evidence: Mapping[str, Evidence],
    numbers: Mapping[str, int],
    demo: bool = False,
) -> list[str]:
    """A visible warning listing the on-topic retracted items (they support no finding), and the items under
    an expression of concern."""
    lines: list[str] = []
    if retracted:
        lines += [
            f"> **Warning: {len(retracted)} retracted publication(s) on this question.** A retracted publication "
            "supports no finding in this report; it is listed here so that it is not mistaken for evidence:",
            ">",
            *(f"> - **Retracted:** {_flagged_item(evidence[i], numbers, demo)}" for i in retracted),
            "",
        ]
    if concern:
        lines += [
            f"> **Caution: {len(concern)} publication(s) under an expression of concern.** The journal has "
            "questioned their reliability; read any finding they support with care:",
            ">",
            *(f"> - **Expression of concern:** {_flagged_item(evidence[i], numbers, demo)}" for i in concern),
            "",
        ]
    return lines


def _cell(ids: Sequence[str], numbers: Mapping[str, int]) -> str:
    """A count and the reference numbers of exactly the items counted."""
    return f"{len(ids)} {cite([numbers[i] for i in ids])}" if ids else "0"


def strength_table(strength: Strength, numbers: Mapping[str, int]) -> list[str]:
    """The counted items by design (strongest first) and by the direction of their result. Each cell gives
    the count and the reference numbers of exactly those items (every counted item is numbered)."""
    lines = [
        "| Design | OCEBM 2011 level | Favourable | Null | Unfavourable | No clear result |",
        "|---|---|---|---|---|---|",
    ]
    for label, cells in strength.rows:
        counts = " | ".join(_cell(cells.get(way, []), numbers) for way in (*DIRECTIONS, None))
        lines.append(f"| {escape(label[0].upper() + label[1:])} | {escape(strength.level_text(label))} | {counts} |")
    if not strength.rows:
        lines = ["No item reviewed mentions the question's key terms, so none is placed in the table."]
    notes = [
        "Each item's design comes from its publication types, MeSH headings or text, and the direction of its "
        "result from the wording of the sentence that states it (read in code, not appraised); numbers in "
        "brackets are the references counted in each cell."
    ]
    return [*lines, "", " ".join(notes)]


def counted_line(strength: Strength, collected: int) -> str:
    """Where every total of the report comes from, in one sentence."""
    stated = len(strength.stated)
    parts = [
        f"Counted: {len(strength.counted)} of the {strength.reviewed} item(s) reviewed name the question's key terms "
        f"({stated} state a result); they are the items in the strength-of-evidence table."
    ]
    aside = [
        f"{count} {what}"
        for count, what in (
            (len(strength.off_topic), "off the question's topic"),
            (len(strength.registrations), "trial registration(s) (plans, not results)"),
            (len(strength.retracted), "retracted"),
            (len(strength.same_study), "other part(s) of a study counted once (its abstract or passages)"),
        )
        if count
    ]
    if aside:
        parts.append(f"Set aside: {', '.join(aside)}.")
    if collected > strength.reviewed:
        parts.append(f"The report reviewed the {strength.reviewed} most relevant of the {collected} items collected.")
    return " ".join(parts)


def present_designs(strength: Strength, report: ResearchReport, evidence: Mapping[str, Evidence]) -> set[str]:
    """The designs of the studies in people the report counts or cites."""
    designs = {view.design for view in strength.in_humans()}
    cited = {i for finding in (*report.key_findings, *report.contrary_evidence) for i in finding.evidence_ids}
    for i in cited:
        if i in evidence and evidence[i].grade.population not in ("animals", "in_vitro"):
            designs.add(evidence[i].grade.design)
    return designs


ASPECT_NAMES = (
    ("mechanism", "Mechanism"),
    ("clinical", "Clinical evidence"),
    ("safety", "Safety and contrary evidence"),
)


def _assessment(assessment: Assessment, text: ModelText) -> list[str]:
    """The judge's scores as capped, each with what it gave and why it was capped."""
    lines = [
        "The judge rated the items it was shown in its last round (the strongest studies on the question first, then "
        "by relevance and diversity; not every "
        "item collected); each score is capped in code by what the counted studies can support.",
        "",
    ]
    for name, label in ASPECT_NAMES:
        aspect = getattr(assessment, name)
        caps = [cap for cap in assessment.caps if cap.aspect == name]
        capped = (
            f" *(the judge gave {caps[0].given:g}; capped: {text(caps[-1].reason)})*"
            if caps and caps[0].given != aspect.score
            else ""
        )
        lines.append(f"- **{label}: {aspect.score}/10.**{capped} {text(aspect.reason)}")
    decision = "sufficient" if assessment.sufficient else "not sufficient"
    stop_caps = [cap for cap in assessment.caps if cap.aspect == "sufficient"]
    note = f" *(the judge said sufficient; {text(stop_caps[-1].reason)})*" if stop_caps else ""
    lines.append(f"- **Judge's decision:** {decision}, confidence {assessment.confidence:.2f}.{note}")
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
    marks = [numbers[i] for i in dict.fromkeys(verdict.evidence_ids) if i in numbers]
    rests = f" It rests on {cite(marks)}" if marks else " No collected item bears on it"
    strongest = ""
    if verdict.strongest_design:
        level = f", OCEBM level {verdict.strongest_level}" if verdict.strongest_level else ""
        strongest = f"; the strongest design behind it: {escape(verdict.strongest_design)}{level}"
    against = [numbers[i] for i in dict.fromkeys(verdict.against_ids) if i in numbers]
    caution = (
        f" The studies at this report's best level of evidence read the other way: {cite(against)}." if against else ""
    )
    disagreement = ""
    if verdict.counted is not None:
        read = [numbers[i] for i in dict.fromkeys(verdict.counted.evidence_ids) if i in numbers]
        resting = f", resting on {cite(read)}" if read else ""
        disagreement = (
            " The counted studies' readings, weighed in code, say otherwise: "
            f"**{VERDICT_WORDS[verdict.counted.label]}** (confidence {verdict.counted.confidence:.2f}{resting})."
        )
    # A code verdict says how it weighed: by design level, size and directness, which the brief's plain
    # count by design does not, so the two may read differently.
    how = f" {escape(verdict.rationale)}" if verdict.by == "code" and verdict.rationale else ""
    return [
        "## Verdict",
        "",
        f"**{VERDICT_WORDS[verdict.label]}** (confidence {verdict.confidence:.2f}, {who}).{rests}{strongest}.{caution}"
        f"{disagreement}{how}",
        "",
    ]


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
        lines += verdict_block(context.verdict, numbers)
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
    lines += _flags(retracted, concern, evidence, numbers, context.demo)
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
        lines += ["## Strength of evidence", "", *strength_table(counted, numbers), ""]
        lines += results_table(study_results(counted, evidence), len(counted.counted), numbers, escape)
    shown = shown_assessment(context.assessment, counted)
    if shown is not None:
        lines += ["## How the judge rated the evidence", "", *_assessment(shown, text), ""]
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
        _reference(number, study, lead(study).id in recalled, context.demo)
        for number, study in enumerate(studies, start=1)
    ] or ["None."]
    return "\n".join(lines).rstrip() + "\n"
