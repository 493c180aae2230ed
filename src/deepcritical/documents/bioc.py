"""BioC (NCBI's passage format, as the PMC and PubMed BioC APIs and PubTator serve it), JSON or XML.

A BioC document is already a list of passages, each with infons naming its section (``section_type``:
INTRO, METHODS, RESULTS...) and its kind (``type``: front, abstract, paragraph, title_1, fig_caption,
ref...). Both serialisations are read into one shape (a dict per document, a dict per passage) with the
standard library's json and lxml; the ``bioc`` package would add a dependency for the same few lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from deepcritical.documents.jats import children, name, parse_xml, words
from deepcritical.documents.model import (
    Block,
    BlockKind,
    DocumentMeta,
    ParsedDocument,
    clean_doi,
    clean_pmcid,
    clean_pmid,
)
from deepcritical.errors import DocumentError
from deepcritical.text import collapse_whitespace

SECTION_LABELS = {
    "TITLE": "Title",
    "ABSTRACT": "Abstract",
    "INTRO": "Introduction",
    "METHODS": "Methods",
    "RESULTS": "Results",
    "DISCUSS": "Discussion",
    "CONCL": "Conclusions",
    "CASE": "Case report",
    "FIG": "Figures",
    "TABLE": "Tables",
    "ACK_FUND": "Acknowledgements",
    "AUTH_CONT": "Author contributions",
    "COMP_INT": "Competing interests",
    "SUPPL": "Supplementary material",
    "APPENDIX": "Appendix",
    "ABBR": "Abbreviations",
    "REVIEW_INFO": "Review information",
}
_SKIPPED_TYPES = frozenset({"ref", "footnote", "front_footnote"})
_AUTHOR = re.compile(r"surname:([^;]*)(?:;given-names:(.*))?")


def _text(value: Any) -> str:
    return collapse_whitespace(str(value)) if value is not None else ""


def _infons(item: Mapping[str, Any]) -> dict[str, str]:
    infons = item.get("infons")
    return {str(k): _text(v) for k, v in infons.items()} if isinstance(infons, dict) else {}


def _xml_documents(data: bytes) -> list[dict[str, Any]]:
    """BioC XML as the JSON shape: documents with id, infons and passages (infons, offset, text)."""
    root = parse_xml(data, "BioC")
    if name(root) != "collection":
        raise DocumentError(f"not BioC XML: the root element is <{name(root)}>, not <collection>")

    def infons(element: Any) -> dict[str, str]:
        return {node.get("key", ""): words(node) for node in children(element, "infon")}

    return [
        {
            "id": words(next(iter(children(document, "id")), None)),
            "infons": infons(document),
            "passages": [
                {"infons": infons(passage), "text": words(next(iter(children(passage, "text")), None))}
                for passage in children(document, "passage")
            ],
        }
        for document in children(root, "document")
    ]


def _json_documents(data: bytes) -> list[dict[str, Any]]:
    try:
        loaded = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DocumentError(f"not readable BioC JSON ({error})") from None
    collections = loaded if isinstance(loaded, list) else [loaded]
    documents = [
        document
        for collection in collections
        if isinstance(collection, dict)
        for document in collection.get("documents", [])
        if isinstance(document, dict)
    ]
    if not documents and not any(isinstance(c, dict) and "documents" in c for c in collections):
        raise DocumentError("not BioC JSON: no collection with 'documents'")
    return documents


def _authors(infons: Mapping[str, str]) -> tuple[str, ...]:
    names = []
    for key in sorted((k for k in infons if k.startswith("name_")), key=lambda k: int(k[5:] or 0)):
        match = _AUTHOR.match(infons[key])
        if match:
            names.append(f"{match.group(1).strip()} {(match.group(2) or '').strip()}".strip())
    return tuple(name for name in names if name)


def _blocks(passages: Sequence[Mapping[str, Any]]) -> Iterator[Block]:
    section: str | None = None
    subsection: str | None = None
    section_type = ""
    for passage in passages:
        infons = _infons(passage)
        text = _text(passage.get("text"))
        kind_name = infons.get("type", "paragraph").lower()
        if infons.get("section_type", "") != section_type:
            section_type = infons.get("section_type", "")
            section, subsection = SECTION_LABELS.get(section_type, section_type.capitalize() or None), None
        if not text or kind_name in _SKIPPED_TYPES:
            continue
        if kind_name.startswith("title") or kind_name.startswith("abstract_title"):
            if kind_name in ("title_1", "title") and section_type not in ("TITLE", "ABSTRACT"):
                section, subsection = text, None
            elif kind_name != "title":
                subsection = text
            continue
        kind: BlockKind = "paragraph"
        if kind_name == "front":
            kind, section = "title", "Title"
        elif kind_name == "abstract" or section_type == "ABSTRACT":
            kind = "abstract"
        elif "caption" in kind_name or kind_name in ("table", "table_footnote"):
            kind = "caption"
        yield Block(text=text, section=section, subsection=subsection, kind=kind)


def _document(document: Mapping[str, Any]) -> ParsedDocument | None:
    passages = [p for p in document.get("passages", []) if isinstance(p, dict)]
    front = next((_infons(p) for p in passages if _infons(p).get("type") == "front"), {})
    title = next((_text(p.get("text")) for p in passages if _infons(p).get("type") == "front"), "")
    identifier = _text(document.get("id"))
    meta = DocumentMeta(
        title=title,
        authors=_authors(front),
        date=front.get("year", "") if re.fullmatch(r"\d{4}", front.get("year", "")) else "Unknown",
        journal=(front.get("journal") or "").split(";")[0].strip() or None,
        doi=clean_doi(front.get("article-id_doi")),
        pmid=clean_pmid(front.get("article-id_pmid")) or (clean_pmid(identifier) if not front else None),
        pmcid=clean_pmcid(front.get("article-id_pmc"))
        or clean_pmcid(identifier if identifier.startswith("PMC") else ""),
        keywords=tuple(k.strip() for k in front.get("kwd", "").split() if k.strip()),
    )
    blocks = tuple(_blocks(passages))
    if not blocks:
        return None
    body_kinds = {block.kind for block in blocks} - {"title", "abstract"}
    references = tuple(
        _text(p.get("text")) for p in passages if _infons(p).get("type") == "ref" and _text(p.get("text"))
    )
    return ParsedDocument(format="bioc", meta=meta, blocks=blocks, references=references, full_text=bool(body_kinds))


def parse_bioc(data: bytes) -> list[ParsedDocument]:
    """Every document of a BioC collection (JSON or XML, told apart by the first character)."""
    stripped = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    documents = _xml_documents(data) if stripped.startswith(b"<") else _json_documents(data)
    return [parsed for document in documents if (parsed := _document(document)) is not None]
