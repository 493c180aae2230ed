"""The reference list: one entry per study (its abstract's record, the passages used), with its design
and grade, a link to its page (a PMC passage scrolled to its words), and the marks that cite it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import quote

from deepcritical.models import Evidence, Grade, Passage
from deepcritical.stages.markdown import code_span, escape, safe_link
from deepcritical.stages.studies import lead

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


def reference_entry(number: int, study: Sequence[Evidence], recalled: bool, demo: bool = False) -> str:
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
