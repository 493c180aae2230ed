"""The demo corpus: synthetic records the DEMO_MODE stand-ins serve, one model per source's wire format.

The corpus ships inside the package (``corpus.json``) and is read through ``importlib.resources`` so that
it is found in an installed wheel as well as in a checkout. It is read-only data, loaded once per process.
"""

from __future__ import annotations

import functools
import re
from datetime import date
from importlib import resources
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

RecordKind = Literal["pubmed", "web", "searxng", "you", "clinicaltrials", "europepmc"]
RECORD_KINDS: tuple[RecordKind, ...] = ("pubmed", "web", "searxng", "you", "clinicaltrials", "europepmc")
Aspect = Literal["mechanism", "clinical", "safety"]
Stance = Literal["supports", "contradicts", "mixed", "neutral"]

DEMO_TITLE_PREFIX = "[DEMO] "
DEMO_PMID_RANGE = range(99000001, 99001000)
DEMO_DOI_PREFIX = "10.99999/demo."
DEMO_HOST = "demo.deepcritical.invalid"
DEMO_NCT_RANGE = range(99000001, 99001000)  # NCT99000001 ... NCT99000999
DEMO_PREPRINT_PREFIX = "PPR99"

# PubMed abstracts and titles carry the inline markup real records use (<i>, <sup>, <sub>, <b>, <u>).
INLINE_TAGS = ("i", "b", "u", "sup", "sub")
_INLINE_MARKUP = re.compile(r"</?(?:" + "|".join(INLINE_TAGS) + r")>")


def strip_markup(text: str) -> str:
    """Text without the inline markup tags, as a reader (or a search index) sees it."""
    return _INLINE_MARKUP.sub("", text)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Record(_Model):
    id: str
    topic: str
    aspect: Aspect
    stance: Stance = Field(description="What the record's finding says about the topic's question")
    study: str | None = Field(default=None, description="Records describing the same study share this key")
    doi: str | None = None
    injection_test: bool = Field(default=False, description="The text holds a prompt-injection attempt on purpose")
    note: str | None = None
    title: str
    entered: date | None = Field(
        default=None,
        description="When the record appeared at its source (the demo clock hides it before); None: always",
    )


class AbstractSection(_Model):
    label: str | None = None
    text: str


def _abstract_text(sections: tuple[AbstractSection, ...]) -> str:
    return strip_markup(" ".join(f"{s.label}: {s.text}" if s.label else s.text for s in sections))


class PersonAuthor(_Model):
    last_name: str
    fore_name: str
    initials: str


class CollectiveAuthor(_Model):
    collective_name: str


class Journal(_Model):
    title: str
    iso_abbreviation: str
    volume: str | None = None
    issue: str | None = None


class PubDate(_Model):
    """Either Year/Month/Day or PubMed's free-text ``MedlineDate`` (e.g. "2019 Nov-Dec")."""

    year: str | None = None
    month: str | None = None
    day: str | None = None
    medline_date: str | None = None


class PubmedRecord(_Record):
    kind: Literal["pubmed"]
    pmid: str
    abstract: tuple[AbstractSection, ...] = ()
    authors: tuple[PersonAuthor | CollectiveAuthor, ...]
    journal: Journal
    pub_date: PubDate
    publication_types: tuple[str, ...]
    pmcid: str | None = None
    language: str = "eng"
    mesh_headings: tuple[str, ...] = Field(default=(), description="MeSH descriptors; none for an in-process record")
    nct_id: str | None = Field(default=None, description="A ClinicalTrials.gov number in the record's DataBankList")
    retraction_in: str | None = Field(default=None, description="PMID of the retraction notice")
    expression_of_concern_in: str | None = Field(default=None, description="PMID of the expression of concern")
    retracted_on: date | None = Field(
        default=None, description="When the retraction was issued: before it (demo clock), the record is not retracted"
    )

    @property
    def text(self) -> str:
        return _abstract_text(self.abstract)


class WebRecord(_Record):
    """A DuckDuckGo text result (ddgs: title/href/body)."""

    kind: Literal["web"]
    url: str
    body: str

    @property
    def text(self) -> str:
        return self.body


class SearxngRecord(_Record):
    kind: Literal["searxng"]
    url: str
    content: str
    engine: str
    engines: tuple[str, ...]
    category: str = "general"
    template: str = "default.html"
    published_date: str | None = None

    @property
    def text(self) -> str:
        return self.content


class YouRecord(_Record):
    kind: Literal["you"]
    url: str
    description: str
    snippets: tuple[str, ...]
    page_age: str | None = None

    @property
    def text(self) -> str:
        return " ".join((self.description, *self.snippets))


class TrialIntervention(_Model):
    type: str
    name: str


class TrialReference(_Model):
    pmid: str
    type: Literal["RESULT", "BACKGROUND", "DERIVED"]
    citation: str


class ClinicalTrialsRecord(_Record):
    """A ClinicalTrials.gov registry entry (API v2 study), with the registry's enumerated values."""

    kind: Literal["clinicaltrials"]
    nct_id: str
    official_title: str
    brief_summary: str
    overall_status: str
    study_type: Literal["INTERVENTIONAL", "OBSERVATIONAL"]
    phases: tuple[str, ...] = ()
    allocation: str | None = None
    enrollment: int
    enrollment_type: Literal["ACTUAL", "ESTIMATED"]
    conditions: tuple[str, ...]
    interventions: tuple[TrialIntervention, ...]
    start_date: str
    completion_date: str | None = None
    first_posted: str
    has_results: bool = False
    sponsor: str
    references: tuple[TrialReference, ...] = ()

    @property
    def text(self) -> str:
        return self.brief_summary


class EuropePmcRecord(_Record):
    """A record only Europe PMC holds here: a preprint (source ``PPR``). PubMed records are served by the
    Europe PMC stand-in too, from their PubMed form."""

    kind: Literal["europepmc"]
    ppr_id: str
    abstract: tuple[AbstractSection, ...]
    authors: tuple[str, ...] = Field(description="Europe PMC's 'fullName' form: 'Lastname AB'")
    publisher: str
    first_publication_date: str
    publication_types: tuple[str, ...] = ("Preprint",)

    @property
    def text(self) -> str:
        return _abstract_text(self.abstract)


Record = PubmedRecord | WebRecord | SearxngRecord | YouRecord | ClinicalTrialsRecord | EuropePmcRecord
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def month_number(month: str | None) -> int | None:
    """A PubMed month ("Mar", "march") as its number; None for none or another form."""
    key = (month or "")[:3].lower()
    return _MONTHS.index(key) + 1 if key in _MONTHS else None


def entry_date(record: Record) -> date:
    """When the record entered its source: ``entered`` when the corpus says, else its own dates (a PubMed
    record's publication date, a preprint's first publication, a registration's first posting); a record
    with no date at all counts as long there."""
    if record.entered is not None:
        return record.entered
    if isinstance(record, PubmedRecord):
        year = record.pub_date.year or (record.pub_date.medline_date or "")[:4]
        return date(int(year), month_number(record.pub_date.month) or 1, 1) if year.isdigit() else date.min
    if isinstance(record, EuropePmcRecord):
        return date.fromisoformat(record.first_publication_date[:10])
    if isinstance(record, ClinicalTrialsRecord):
        text = record.first_posted
        return date.fromisoformat(text if len(text) == 10 else f"{text[:7]}-01")
    if isinstance(record, SearxngRecord) and record.published_date:
        return date.fromisoformat(record.published_date[:10])
    if isinstance(record, YouRecord) and record.page_age:
        return date.fromisoformat(record.page_age[:10])
    return date.min


def as_of(record: Record, today: date) -> Record | None:
    """The record as its source shows it on ``today``: None before it entered (``entry_date``: the date the
    corpus marks, else the record's own, so a trial published after the demo's today is not there yet); a
    PubMed record whose retraction was issued later is not retracted yet (no notice, no ``Retracted
    Publication`` type)."""
    if entry_date(record) > today:
        return None
    if isinstance(record, PubmedRecord) and record.retracted_on is not None and record.retracted_on > today:
        types = tuple(kind for kind in record.publication_types if kind != "Retracted Publication")
        return record.model_copy(update={"retraction_in": None, "publication_types": types})
    return record


class Topic(_Model):
    id: str
    label: str
    question: str


class Corpus(_Model):
    version: int
    notice: str
    topics: tuple[Topic, ...]
    records: tuple[Annotated[Record, Field(discriminator="kind")], ...]

    def of_kind(self, kind: RecordKind) -> list[Record]:
        return [record for record in self.records if record.kind == kind]


@functools.cache
def load_corpus() -> Corpus:
    """The shipped corpus, parsed and validated once per process."""
    text = resources.files("deepcritical.demo").joinpath("corpus.json").read_text(encoding="utf-8")
    return Corpus.model_validate_json(text)


@functools.cache
def _pubmed_by_pmid() -> dict[str, PubmedRecord]:
    return {r.pmid: r for r in load_corpus().records if isinstance(r, PubmedRecord)}


def pubmed_record(pmid: str, today: date | None = None) -> PubmedRecord | None:
    """The PubMed record with this PMID, or None (as E-utilities silently skips unknown ids); with
    ``today``, as the source shows it that day (None before it entered)."""
    record = _pubmed_by_pmid().get(pmid.strip())
    if record is None or today is None:
        return record
    shown = as_of(record, today)
    return shown if isinstance(shown, PubmedRecord) else None


def topic_question(topic_id: str) -> str:
    """The research question a topic was written for (used by demos and tests)."""
    for topic in load_corpus().topics:
        if topic.id == topic_id:
            return topic.question
    raise KeyError(topic_id)
