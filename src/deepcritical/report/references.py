"""The reference list: one entry per study (its abstract's record, the passages used), with its design
and grade, a link to its page (a PMC passage scrolled to its words), and the marks that cite it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import quote, urlsplit

from deepcritical.appraisal.studies import lead
from deepcritical.models import Citation, Evidence, Grade, Passage
from deepcritical.report.document import CiteRef, Code, Inline, Item, Link, em, item, runs, strong
from deepcritical.report.markdown import safe_link

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


def citation_ref(number: int, item: Evidence | None) -> CiteRef:
    """A reference number, with the passage's place when the item is a passage: '3, Results', '5, p. 7'."""
    passage = item.passage if item is not None else None
    if passage is None:
        return CiteRef(number=number)
    if passage.page is not None:
        return CiteRef(number=number, place=f"p. {passage.page}")
    return CiteRef(number=number, place=passage.section or "")


def citation_mark(number: int, item: Evidence | None) -> str:
    """``citation_ref`` as text."""
    ref = citation_ref(number, item)
    return f"{ref.number}, {ref.place}" if ref.place else str(ref.number)


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


# Sources that find pages rather than publish them: a page found by one has its site, never the engine, as
# where it appeared.
SEARCH_ENGINES = frozenset({"web", "you", "searxng"})
NO_DATE = "no date"


def venue_of(citation: Citation) -> str | None:
    """Where the item appeared, as a reference names it: the journal; a web page's site ("www.heart.org"); the
    registry for a registration; None when nothing says (a search engine is not a journal)."""
    if citation.journal:
        return citation.journal
    if citation.source in SEARCH_ENGINES:
        host = urlsplit(citation.url).hostname if citation.url else None
        return host.removeprefix("www.") if host else None
    return "ClinicalTrials.gov" if citation.source == "clinicaltrials" else None


def dated(citation: Citation) -> str:
    """The item's date as a reference shows it: as given, or "no date" (never "Unknown")."""
    date = citation.date.strip()
    return NO_DATE if not date or date.lower() == "unknown" else date


def reference_entry(study: Sequence[Evidence], recalled: bool, demo: bool = False) -> Item:
    """A study's one reference: its abstract's record (else its first passage's), and the passages used."""
    item_ = lead(study)
    citation = item_.citation
    authors = ", ".join(citation.authors[:3]) + (" et al." if len(citation.authors) > 3 else "")
    parts: list[Inline] = []
    if authors:
        parts += runs(f"{authors} ")
    parts += runs(f"({dated(citation)}). {citation.title.rstrip('. ')}.")
    if venue := venue_of(citation):
        parts += runs(" ", em(venue), ".")
    parts += runs(f" Design: {grade_text(item_.grade)}.")
    if item_.expression_of_concern:
        parts += runs(" ", strong("The journal has published an expression of concern about this article."))
    origin = "recalled from an earlier run, " if recalled else ""
    parts += runs(" Evidence id: ", Code(text=item_.id), f"; {origin}found by {', '.join(item_.found_by)}.")
    if item_.passage is not None:
        place = f"page {item_.passage.page}" if item_.passage.page else item_.passage.section
        span = f"characters {item_.passage.start}-{item_.passage.end}" if item_.passage.start is not None else ""
        parts += runs(f" Passage: {', '.join(part for part in (place, span) if part)}.")
    if others := [(part.id, where) for part in study if part is not item_ and (where := part.passage) is not None]:
        used: list[Inline] = []
        for number, other in enumerate(others):
            used += runs("; " if number else "", *_passage_used(*other))
        parts += runs(" Passages used: ", used, ".")
    if demo:  # a synthetic PMID or DOI names no real page: a link would open PubMed's "not found", or another paper
        return item(parts, " (synthetic demo record: no web page)")
    link = passage_link(item_) or safe_link(citation.url)
    return item(parts, *([" ", Link(text="Link", url=link)] if link else [" (no web link)"]))


def _passage_used(evidence_id: str, passage: Passage) -> list[Inline]:
    """'Results, characters 1698-2147 (`url:library://…/6`)'."""
    place = f"page {passage.page}" if passage.page else passage.section or "passage"
    span = f", characters {passage.start}-{passage.end}" if passage.start is not None else ""
    return runs(f"{place + span} (", Code(text=evidence_id), ")")


def best_grade(ids: Sequence[str], evidence: Mapping[str, Evidence]) -> Grade | None:
    """The strongest grade among the items behind a finding: the lowest OCEBM level in humans, then items
    outside the scale, animal and cell studies last."""
    grades = [evidence[i].grade for i in ids if i in evidence]

    def rank(grade: Grade) -> tuple[int, int]:
        preclinical = grade.population in ("animals", "in_vitro")
        return (grade.level if grade.level is not None and not preclinical else 6, 1 if preclinical else 0)

    return min(grades, key=rank) if grades else None
