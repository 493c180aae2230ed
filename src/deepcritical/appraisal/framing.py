"""How evidence and run state are put in front of a model: as data, in delimited JSON-lines blocks.

Every ``<``, ``>`` and ``&`` inside a value is written as a JSON unicode escape, so no text from the
web or a paper can close a block, open another or pose as an instruction: a line inside a block is
always exactly one JSON object. The demo models read the same blocks back with ``parse_block``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from deepcritical.models import Evidence, normalize_doi
from deepcritical.text import collapse_whitespace, shorten

EVIDENCE_TAG = "evidence_items"
BRIEF_TAG = "run_brief"
DEFAULT_TEXT_CHARS = 1200
# The slice of text the Report agent and a draft built in code read. The strength table reads more
# (STUDY_TEXT_CHARS), so a run's report written in code is quoted again from the table's own text
# (``extractive.code_findings``): a slice may read a study another way than its whole abstract.
REPORT_TEXT_CHARS = 1000
# The slice a study's result is read from (the counted table and the verdict): its whole abstract.
STUDY_TEXT_CHARS = 8000


@dataclass(frozen=True)
class EvidenceView:
    """One evidence item as a model sees it: identity, provenance, its grade (study design, OCEBM 2011 level,
    population, participants) and whether it was retracted, and a bounded slice of text."""

    id: str
    title: str
    source: str
    date: str
    text: str
    found_by: list[str] = field(default_factory=list)
    publication_types: list[str] = field(default_factory=list)
    design: str = "unknown"
    level: int | None = None
    population: str = "unknown"
    n: int | None = None
    retracted: bool = False
    expression_of_concern: bool = False
    # A full-text passage's section ("Results", "Introduction"), and the study it belongs to (``study_key``):
    # an abstract and its article's passages share it.
    section: str | None = None
    document: str = ""
    # The record's MeSH descriptors: an index names the drug class an abstract names only by its member
    # ("Sodium-Glucose Transporter 2 Inhibitors" for an abstract that says "empagliflozin").
    mesh: tuple[str, ...] = ()

    # Within its section: a structured abstract's label ("Objective"), a subsection's title.
    subsection: str | None = None

    @property
    def states_no_result(self) -> bool:
        """A passage from a section that reports no result of the paper's own (introduction, methods, an
        abstract's objective...)."""
        return no_result_section(self.section, self.subsection)

    @classmethod
    def of(cls, item: Evidence, max_chars: int = DEFAULT_TEXT_CHARS) -> EvidenceView:
        text = shorten_abstract(collapse_whitespace(item.content), max_chars)
        return cls(
            id=item.id,
            title=collapse_whitespace(item.citation.title)[:300],
            source=item.citation.source,
            date=item.citation.date,
            text=text,
            found_by=list(item.found_by),
            publication_types=list(item.citation.publication_types),
            design=item.grade.design,
            level=item.grade.level,
            population=item.grade.population,
            n=item.grade.sample_size,
            retracted=item.retracted,
            expression_of_concern=item.expression_of_concern,
            section=item.passage.section if item.passage is not None else None,
            subsection=item.passage.subsection if item.passage is not None else None,
            document=study_key(item),
            mesh=item.citation.mesh_headings,
        )


def study_key(item: Evidence) -> str:
    """The study an item reports, by the identity its abstract is collected under: a full-text passage by its
    article's PMID, else its DOI, else its document; any other item is its own study (its id is PMID-first,
    then DOI, as ``models.evidence_id`` makes it)."""
    if item.passage is None:
        return item.id
    if item.citation.pmid:
        return f"pmid:{item.citation.pmid}"
    if item.citation.doi:
        return f"doi:{normalize_doi(item.citation.doi)}"
    return item.passage.document_id


_NO_RESULT_SECTION = re.compile(
    r"^(?:\d+[.)]?\s*)?(?:introduction|background|(?:materials|patients|subjects)? ?(?:and )?methods?|study design|"
    r"front matter|back matter|references|acknowledge?ments?|funding|abbreviations)\b"
)


# A structured abstract's labels under which it states no result of its own (its "OBJECTIVE:", "METHODS:"...).
_NO_RESULT_LABEL = re.compile(
    r"^(?:\d+[.)]?\s*)?(?:introduction|background|context|rationale|objectives?|aims?|purpose|hypothes\w*"
    r"|(?:materials?|patients|subjects)? ?(?:and )?methods?|methodology|design|setting|participants|patients"
    r"|interventions?|study design|main outcome measures?|outcome measures?)\b"
)

_NAMES_RESULTS = re.compile(r"\b(?:results?|findings?)\b")


def no_result_section(section: str | None, subsection: str | None = None) -> bool:
    """Whether a full text's section (its title) reports no result of the paper's own: introduction, methods...;
    or, in an abstract, its ``subsection`` (a structured abstract's label: objective, methods...). A library's
    JATS or PDF abstract keeps its labels there, not in its text as PubMed's "OBJECTIVE: ..." does."""
    if section is not None and _states_none(_NO_RESULT_SECTION, section):
        return True
    return (
        subsection is not None and "abstract" in (section or "").lower() and _states_none(_NO_RESULT_LABEL, subsection)
    )


def _states_none(titles: re.Pattern[str], title: str) -> bool:
    """The title is one of ``titles`` and names no result: "Methods and Results" (Circulation's, the European
    Heart Journal's abstracts) and "Methods and Findings" (PLOS Medicine's) hold the results."""
    low = title.strip().lower()
    return titles.match(low) is not None and _NAMES_RESULTS.search(low) is None


_CONCLUSIONS = re.compile(r"\b(?:CONCLUSIONS?|INTERPRETATION|CONCLUSIONS AND RELEVANCE)\s*:", re.IGNORECASE)


def shorten_abstract(text: str, max_chars: int) -> str:
    """An abstract at most ``max_chars`` characters long, cut on a word (``text.shorten``). A structured
    abstract keeps its conclusions (the authors' own reading of the result) and gives up the middle of its
    methods and results."""
    if len(text) <= max_chars:
        return text
    conclusions = next((m for m in _CONCLUSIONS.finditer(text) if m.start() > 0), None)
    if conclusions is not None and len(text) - conclusions.start() < max_chars // 2:
        tail = text[conclusions.start() :]
        head = text[: max_chars - len(tail) - 1]
        # End the head on a sentence, so no quoted sentence spans the gap.
        cut = head.rfind(". ")
        head = head[: cut + 1] if cut > 0 else head.rsplit(" ", 1)[0] + " …"
        return f"{head} {tail}"
    return shorten(text, max_chars, on_word=True)


def _json_line(value: Mapping[str, Any]) -> str:
    line = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return line.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def block(tag: str, records: Iterable[Mapping[str, Any]]) -> str:
    """``<tag>``, one JSON object per line, ``</tag>``."""
    lines = [_json_line(record) for record in records]
    return "\n".join([f"<{tag}>", *lines, f"</{tag}>"])


def evidence_block(items: Iterable[Evidence], max_chars: int = DEFAULT_TEXT_CHARS) -> str:
    return block(EVIDENCE_TAG, (asdict(EvidenceView.of(item, max_chars)) for item in items))


def parse_block(text: str, tag: str) -> list[dict[str, Any]]:
    """The records of the first ``tag`` block in ``text`` (empty if there is none)."""
    match = re.search(rf"^<{tag}>\n(.*?)^</{tag}>$", text, flags=re.DOTALL | re.MULTILINE)
    if match is None:
        return []
    records = [json.loads(line) for line in match.group(1).splitlines() if line.strip()]
    return [record for record in records if isinstance(record, dict)]


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_evidence(text: str) -> list[EvidenceView]:
    views = []
    for record in parse_block(text, EVIDENCE_TAG):
        views.append(
            EvidenceView(
                id=str(record.get("id", "")),
                title=str(record.get("title", "")),
                source=str(record.get("source", "")),
                date=str(record.get("date", "")),
                text=str(record.get("text", "")),
                found_by=[str(name) for name in record.get("found_by", [])],
                publication_types=[str(kind) for kind in record.get("publication_types", [])],
                design=str(record.get("design", "unknown")),
                level=_int_or_none(record.get("level")),
                population=str(record.get("population", "unknown")),
                n=_int_or_none(record.get("n")),
                retracted=record.get("retracted") is True,
                expression_of_concern=record.get("expression_of_concern") is True,
                section=str(record["section"]) if record.get("section") else None,
                document=str(record.get("document") or record.get("id", "")),
            )
        )
    return views


def parse_brief(text: str) -> dict[str, Any]:
    records = parse_block(text, BRIEF_TAG)
    return records[0] if records else {}
