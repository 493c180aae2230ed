"""Evidence models shared by every slice: sources produce them, the store keeps them, agents cite them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

from deepcritical.options import ALL_SOURCES as ALL_SOURCES
from deepcritical.options import KNOWN_SOURCES as KNOWN_SOURCES
from deepcritical.options import SourceName as SourceName

# How a person calls each source (the page's checkboxes, descriptions for a calling model): the source table's.
from deepcritical.source_table import SOURCE_LABELS as SOURCE_LABELS
from deepcritical.vocabulary import DESIGN_LABELS as DESIGN_LABELS
from deepcritical.vocabulary import DESIGNS as DESIGNS
from deepcritical.vocabulary import POPULATION_LABELS as POPULATION_LABELS
from deepcritical.vocabulary import Design as Design
from deepcritical.vocabulary import GradeBasis as GradeBasis
from deepcritical.vocabulary import Population as Population
from deepcritical.vocabulary import StudyDesign as StudyDesign

DOI_PATTERN = re.compile(r"10\.\d{4,9}/\S+", re.IGNORECASE)
_DOI_IN_URL = re.compile(r"^https?://(?:dx\.)?doi\.org/(10\.\d{4,9}/\S+)$", re.IGNORECASE)
# Publishers' article paths name the DOI too: https://journal.org/doi/10.1234/abc/full
_DOI_IN_PATH = re.compile(
    r"^https?://[^/]+/(?:\S*/)?doi/(?:abs/|full/|pdf/|epdf/)?(10\.\d{4,9}/[^?#\s]+?)"
    r"(?:/(?:full|abstract|pdf|epdf))?/?(?:[?#].*)?$",
    re.IGNORECASE,
)
# A PubMed record's page, old style (www.ncbi.nlm.nih.gov/pubmed/N) or new (pubmed.ncbi.nlm.nih.gov/N).
PUBMED_URL = re.compile(r"^https?://(?:www\.)?(?:pubmed\.)?ncbi\.nlm\.nih\.gov/(?:pubmed/)?(\d+)/?$", re.IGNORECASE)


def normalize_url(url: str) -> str:
    """Canonical form of a URL for identity: scheme and host lower-cased, no fragment,
    no trailing slash, no ``utm_*`` tracking parameters, remaining parameters kept in order."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # e.g. an unbalanced IPv6 bracket: keep the text as its own identity
        return url.strip()
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not k.lower().startswith("utm_")]
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, urlencode(query), ""))


def normalize_doi(doi: str) -> str:
    """DOIs are case-insensitive; strip resolver prefixes so one paper has one DOI string."""
    doi = doi.strip()
    doi = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:)", "", doi, flags=re.IGNORECASE)
    return doi.lower()


# --- Study design and level of evidence: the vocabulary is ``deepcritical.vocabulary`` ---

# How much each basis can be trusted, for choosing between two grades of one merged item.
_BASIS_RANK: dict[GradeBasis | None, int] = {"publication_type": 4, "mesh": 3, "text": 2, "source": 1, None: 0}


class Grade(BaseModel):
    """What kind of study an item is, its level on the OCEBM 2011 scale, in whom, and what said so."""

    model_config = ConfigDict(frozen=True)

    design: StudyDesign = "unknown"
    level: int | None = Field(
        default=None, ge=1, le=5, description="OCEBM 2011 level (1 best, 5 weakest); None: outside the scale"
    )
    population: Population = "unknown"
    basis: GradeBasis | None = Field(
        default=None, description="What set the design: publication types, MeSH, the text or the source; None: ungraded"
    )
    phase: str | None = Field(default=None, description="Trial phase when known: '1', '2', '2/3', '3', '4', 'early 1'")
    sample_size: int | None = Field(
        default=None, ge=1, description="Participants (n), when the text or registry states it"
    )

    @property
    def label(self) -> str:
        """'randomised controlled trial, humans, n = 80': design (and phase), population, size."""
        design = DESIGN_LABELS[self.design]
        if self.phase and self.design in ("randomized_controlled_trial", "clinical_trial", "registered_trial"):
            design += f" (phase {self.phase})"
        parts = [design]
        if self.population != "unknown":
            parts.append(POPULATION_LABELS[self.population])
        if self.sample_size is not None:
            parts.append(f"n = {self.sample_size:,}")
        return ", ".join(parts)

    def better_of(self, other: Grade) -> Grade:
        """The grade set by the more trustworthy basis (this one on a tie), with a phase or sample size it
        lacks taken from the other."""
        kept, spare = (other, self) if _BASIS_RANK[other.basis] > _BASIS_RANK[self.basis] else (self, other)
        filled = {name: getattr(spare, name) for name in ("phase", "sample_size") if getattr(kept, name) is None}
        return kept.model_copy(update={k: v for k, v in filled.items() if v is not None})


class Registration(BaseModel):
    """A trial registry entry's facts (ClinicalTrials.gov), as the registry states them."""

    model_config = ConfigDict(frozen=True)

    status: str | None = None
    study_type: str | None = None
    phases: tuple[str, ...] = ()
    allocation: str | None = None
    enrollment: int | None = None
    enrollment_type: str | None = None
    conditions: tuple[str, ...] = ()
    interventions: tuple[str, ...] = ()
    start_date: str | None = None
    completion_date: str | None = None
    has_results: bool = False
    sponsor: str | None = None
    result_pmids: tuple[str, ...] = Field(default=(), description="PMIDs the registry lists as results publications")
    other_pmids: tuple[str, ...] = Field(default=(), description="Background and derived publications")


class Citation(BaseModel):
    """Where a piece of evidence came from, with enough metadata to cite it."""

    model_config = ConfigDict(frozen=True)

    source: SourceName = Field(description="The source that first returned this item")
    title: str = Field(min_length=1, max_length=500)
    url: str = Field(min_length=1, description="Link to the item, as the source gave it")
    date: str = Field(default="Unknown", description="Publication date (YYYY, YYYY-MM, YYYY-MM-DD or 'Unknown')")
    authors: tuple[str, ...] = ()
    journal: str | None = None
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    publication_types: tuple[str, ...] = ()
    mesh_headings: tuple[str, ...] = Field(default=(), description="MeSH descriptor names, as indexed")
    nct_id: str | None = Field(default=None, description="ClinicalTrials.gov identifier of the trial this reports")
    cited_by_count: int | None = Field(default=None, ge=0, description="Citations counted by Europe PMC")
    open_access: bool | None = None
    registration: Registration | None = Field(default=None, description="Set for a trial registry entry")

    @field_validator("doi")
    @classmethod
    def _canonical_doi(cls, value: str | None) -> str | None:
        return normalize_doi(value) if value else None


class Passage(BaseModel):
    """Where a passage of a document in a local collection (``deepcritical library add``) sits: which
    collection and document, which passage of it, and, when known, its section, page and character span.
    A document may have many passages; each is its own evidence item, citing the document."""

    model_config = ConfigDict(frozen=True)

    collection: str = Field(min_length=1)
    document_id: str = Field(min_length=1)
    passage_id: str = Field(default="0", min_length=1)
    section: str | None = None
    # Within its section: a structured abstract's label ("Objective", "Results"), a subsection's title.
    subsection: str | None = None
    page: int | None = Field(default=None, ge=1)
    start: int | None = Field(default=None, ge=0, description="First character of the passage in the document")
    end: int | None = Field(default=None, ge=0)


def passage_url(passage: Passage) -> str:
    """The stable address of a passage: ``library://COLLECTION/DOCUMENT`` (``/PASSAGE`` after the first)."""
    tail = "" if passage.passage_id == "0" else f"/{passage.passage_id}"
    return f"library://{passage.collection}/{passage.document_id}{tail}"


def _pmid_of(citation: Citation) -> str | None:
    if citation.pmid:
        return citation.pmid
    match = PUBMED_URL.match(citation.url.strip())
    return match.group(1) if match else None


def _doi_of(citation: Citation) -> str | None:
    if citation.doi:
        return citation.doi
    url = citation.url.strip()
    match = _DOI_IN_URL.match(url) or _DOI_IN_PATH.match(url)
    return normalize_doi(match.group(1)) if match else None


def evidence_id(citation: Citation) -> str:
    """A stable identity: ``pmid:…`` when known, else ``doi:…``, else ``url:`` plus the normalised URL.

    A PubMed or doi.org link counts as the PMID or DOI it names. A passage of a local collection is
    its own item (``url:library://…``) even when its document carries a PMID or DOI: a document's
    passages are many items.
    """
    if citation.source == "library":
        return f"url:{normalize_url(citation.url)}"
    if pmid := _pmid_of(citation):
        return f"pmid:{pmid}"
    if doi := _doi_of(citation):
        return f"doi:{doi}"
    return f"url:{normalize_url(citation.url)}"


def identity_keys(citation: Citation) -> frozenset[str]:
    """Every identity an item has (its PMID, its DOI, its normalised URL): two items that share any
    one are the same item, e.g. a PubMed record with a DOI and a web page at that DOI's link.

    A registry entry also has the PMID of its first results publication: the trial and the paper that
    reports it are one item. Only the first, so that two papers of one trial are never merged into one."""
    keys = {f"url:{normalize_url(citation.url)}"}
    if citation.source == "library":
        return frozenset(keys)
    if pmid := _pmid_of(citation):
        keys.add(f"pmid:{pmid}")
    if doi := _doi_of(citation):
        keys.add(f"doi:{doi}")
    if citation.registration is not None and citation.registration.result_pmids:
        keys.add(f"pmid:{citation.registration.result_pmids[0]}")
    return frozenset(keys)


_FILLABLE = ("doi", "pmid", "pmcid", "journal", "nct_id", "cited_by_count", "open_access", "registration")


def unite_sources(first: Sequence[SourceName], second: Sequence[SourceName]) -> tuple[SourceName, ...]:
    """Both lists of sources, in order, without repeats."""
    return tuple(dict.fromkeys((*first, *second)))


class Evidence(BaseModel):
    """A piece of evidence retrieved from a source. Immutable: merging makes a new one."""

    model_config = ConfigDict(frozen=True)

    content: str = Field(min_length=1, description="The text: an abstract, a snippet or a passage")
    citation: Citation
    relevance: float = Field(default=0.0, ge=0.0, le=1.0, description="Source-side relevance, 0 to 1")
    found_by: tuple[SourceName, ...] = Field(default=(), description="Every source that returned this item")
    grade: Grade = Field(default_factory=Grade, description="Study design, level of evidence and population")
    retracted: bool = Field(default=False, description="The publication has been retracted: it supports nothing")
    expression_of_concern: bool = Field(default=False, description="The journal has published an expression of concern")
    passage: Passage | None = Field(default=None, description="For a local collection's item: where the passage sits")

    @model_validator(mode="after")
    def _found_by_includes_origin(self) -> Evidence:
        if self.citation.source not in self.found_by:
            object.__setattr__(self, "found_by", (self.citation.source, *self.found_by))
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def id(self) -> str:
        return evidence_id(self.citation)

    @property
    def identity_keys(self) -> frozenset[str]:
        return identity_keys(self.citation)

    def with_sources(self, sources: Sequence[SourceName]) -> Evidence:
        """The same item, also credited to ``sources`` (order kept, no repeats)."""
        return self.model_copy(update={"found_by": unite_sources(self.found_by, sources)})

    def merged_with(self, other: Evidence) -> Evidence:
        """The same item seen again, merged by ``merge_records`` (the one policy)."""
        return merge_records(self, other)


def _standing(item: Evidence) -> tuple[bool, bool, int, int, int]:
    """How well a record identifies and grades its study: a PMID, then a DOI, then the firmer basis for its
    grade and the better level, then the longer text."""
    grade = item.grade
    return (
        _pmid_of(item.citation) is not None,
        _doi_of(item.citation) is not None,
        _BASIS_RANK[grade.basis],
        -(grade.level or 6),
        len(item.content),
    )


def merge_records(first: Evidence, second: Evidence) -> Evidence:
    """Two records of the same item (they share a PMID, a DOI or a URL) as one: the policy every merge uses,
    in a search's results, in a run's evidence and in the store. The better-identified, better-graded record
    is kept, under its own id (a news page collected first gives way to the PubMed record of the study it
    reports); identifiers it lacks are taken from the other; sources are united; the grade set on the
    firmer basis wins; a retraction or an expression of concern from either is kept."""
    kept, spare = (first, second) if _standing(first) >= _standing(second) else (second, first)
    filled = {
        name: getattr(spare.citation, name)
        for name in _FILLABLE
        if getattr(kept.citation, name) is None and getattr(spare.citation, name) is not None
    }
    return kept.model_copy(
        update={
            "citation": kept.citation.model_copy(update=filled) if filled else kept.citation,
            "found_by": unite_sources(first.found_by, second.found_by),
            "relevance": max(first.relevance, second.relevance),
            "grade": kept.grade.better_of(spare.grade),
            # A retraction or a concern noticed by either source holds for the one item.
            "retracted": first.retracted or second.retracted,
            "expression_of_concern": first.expression_of_concern or second.expression_of_concern,
        }
    )


def merge_evidence(items: Sequence[Evidence]) -> list[Evidence]:
    """Collapse items that share any identity (PMID, DOI or normalised URL) into one that lists every
    source, in first-seen order. An item can join two earlier groups (it carries one group's DOI and
    the other's URL); then the groups become one."""
    merged: dict[int, Evidence] = {}  # by the position of each group's first item
    keys: dict[int, set[str]] = {}
    owner: dict[str, int] = {}
    for position, item in enumerate(items):
        groups = sorted({owner[key] for key in item.identity_keys if key in owner})
        target = groups[0] if groups else position
        combined, members = item, set(item.identity_keys)
        for group in groups:
            combined = merge_records(merged.pop(group), combined)
            members |= keys.pop(group)
        merged[target], keys[target] = combined, members
        owner.update(dict.fromkeys(members, target))
    return [merged[group] for group in sorted(merged)]


def count_by_source(items: Iterable[Evidence]) -> dict[str, int]:
    """How many items each source returned (an item found by two sources counts for both), by name."""
    counts: dict[str, int] = {}
    for item in items:
        for name in item.found_by:
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def first_errors(failures: Iterable[Mapping[str, str]]) -> dict[str, str]:
    """Each failed source with the first error it gave, across several searches, in first-seen order."""
    first: dict[str, str] = {}
    for failed in failures:
        for name, error in failed.items():
            first.setdefault(name, error)
    return first


class SourceFailure(BaseModel):
    """One source's failed search: which source, and why (a readable sentence without the source's name)."""

    model_config = ConfigDict(frozen=True)

    source: SourceName
    reason: str

    @property
    def line(self) -> str:
        """The failure as one readable line, ``"source: reason"``."""
        return f"{self.source}: {self.reason}"


class SearchResult(BaseModel):
    """What one query across the enabled sources produced."""

    query: str
    evidence: list[Evidence]
    sources_searched: list[SourceName]
    total_found: int = Field(ge=0, description="Items before cross-source de-duplication")
    failures: list[SourceFailure] = Field(default_factory=list, description="One per failed source")
    disabled: dict[str, str] = Field(
        default_factory=dict, description="Sources not searched because the configuration leaves them off, and why"
    )

    @property
    def errors(self) -> list[str]:
        """One readable line per failed source."""
        return [failure.line for failure in self.failures]

    @property
    def failed_sources(self) -> dict[str, str]:
        """Each failed source with its first error line."""
        failed: dict[str, str] = {}
        for failure in self.failures:
            failed.setdefault(failure.source, failure.line)
        return failed

    @property
    def answered_sources(self) -> list[SourceName]:
        failed = self.failed_sources
        return [name for name in self.sources_searched if name not in failed]
