"""What a file becomes: a document (its metadata and its text as blocks along its structure) and the
passages it is split into, each with its place in the document (section, page, character offsets).

A parser produces ``ParsedDocument``s: metadata plus ``Block``s (a paragraph, a caption, a heading's text)
in reading order. ``passages.split`` joins the blocks into the document's one text and cuts it into
passages whose offsets point into that text, so a quote can be checked against the passage it cites.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from deepcritical.models import DOI_PATTERN, normalize_doi

DocumentFormat = Literal["pdf", "jats", "bioc", "ris", "bibtex", "csljson", "markdown", "text", "html"]
BlockKind = Literal["paragraph", "caption", "abstract", "title"]

_PMID = re.compile(r"^\d{1,9}$")
_PMCID = re.compile(r"^(?:PMC)?(\d{1,9})$", re.IGNORECASE)


def clean_pmid(value: str | None) -> str | None:
    """A PMID as digits, or None when ``value`` is not one."""
    text = (value or "").strip()
    return text if _PMID.match(text) else None


def clean_pmcid(value: str | None) -> str | None:
    """A PMCID as ``PMC`` and digits (JATS writes the bare number), or None."""
    match = _PMCID.match((value or "").strip())
    return f"PMC{match.group(1)}" if match else None


def clean_doi(value: str | None) -> str | None:
    """A DOI in the project's canonical form (lower case, no resolver prefix), or None."""
    text = normalize_doi(value or "")
    return text if text.startswith("10.") and "/" in text else None


def doi_in(text: str) -> str | None:
    """The first DOI written in ``text`` (the punctuation after it left out), clean, or None."""
    found = DOI_PATTERN.search(text)
    return clean_doi(found.group(0).rstrip(".,;)")) if found else None


class DocumentMeta(BaseModel):
    """What is known about a document: bibliographic metadata and its identifiers, normalised so that a
    PMID, DOI or PMCID here is the same string a PubMed record carries."""

    model_config = ConfigDict(frozen=True)

    title: str = ""
    authors: tuple[str, ...] = ()
    date: str = "Unknown"  # YYYY, YYYY-MM or YYYY-MM-DD
    journal: str | None = None
    doi: str | None = None
    pmid: str | None = None
    pmcid: str | None = None
    publication_types: tuple[str, ...] = Field(default=(), description="PubMed-style types, when the file says")
    keywords: tuple[str, ...] = ()
    url: str | None = None


class Block(BaseModel):
    """One piece of a document's text in reading order, with where it sits."""

    model_config = ConfigDict(frozen=True)

    text: str
    section: str | None = Field(default=None, description="The top-level heading it sits under ('Results')")
    subsection: str | None = Field(default=None, description="The innermost heading below that, if any")
    page: int | None = Field(default=None, ge=1, description="1-based page, for a paged format (PDF)")
    kind: BlockKind = "paragraph"


class ParsedDocument(BaseModel):
    """A parser's output for one document (a file can hold several: a RIS export, a BioC collection)."""

    model_config = ConfigDict(frozen=True)

    format: DocumentFormat
    meta: DocumentMeta
    blocks: tuple[Block, ...]
    references: tuple[str, ...] = Field(default=(), description="The reference list, one entry per line")
    pages: int | None = Field(default=None, description="Page count of a paged format")
    full_text: bool = Field(default=True, description="False for a record that carries only an abstract or title")

    @property
    def identity(self) -> str | None:
        """``pmid:…``, else ``doi:…``, else ``pmcid:…``, as PubMed items are identified; None without any."""
        if self.meta.pmid:
            return f"pmid:{self.meta.pmid}"
        if self.meta.doi:
            return f"doi:{self.meta.doi}"
        if self.meta.pmcid:
            return f"pmcid:{self.meta.pmcid}"
        return None


class Passage(BaseModel):
    """A span of a document's text: what is embedded, searched and cited."""

    model_config = ConfigDict(frozen=True)

    document_id: str
    index: int = Field(ge=0, description="Position among the document's passages")
    text: str = Field(min_length=1)
    start: int = Field(ge=0, description="Offset of the first character in the document's text")
    end: int = Field(ge=0, description="Offset after the last character")
    section: str | None = None
    subsection: str | None = None
    page: int | None = None
    kind: BlockKind = "paragraph"

    @property
    def id(self) -> str:
        return f"{self.document_id}#{self.index}"

    @property
    def place(self) -> str | None:
        """Where the passage sits, as a citation names it: 'p. 7' for a paged document, else its section."""
        if self.page is not None:
            return f"p. {self.page}"
        return self.section


class Document(BaseModel):
    """A parsed document ready for the library: its identity, metadata, text and passages."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="pmid:…, doi:…, pmcid:… when known, else file:<content hash prefix>")
    content_hash: str = Field(description="SHA-256 of the file's bytes (of the record, for a multi-record file)")
    source_path: str | None = None
    format: DocumentFormat
    meta: DocumentMeta
    text: str
    passages: tuple[Passage, ...]
    references: tuple[str, ...] = ()
    pages: int | None = None
    full_text: bool = True
