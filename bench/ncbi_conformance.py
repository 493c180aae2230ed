"""Conformance figures of the PubMed parsers over the real NCBI responses in ../shared/data/ncbi.

    python bench/ncbi_conformance.py [path/to/shared/data]

Prints, over every efetch file: records parsed / records with title and abstract (counted
independently with ElementTree) / evidence produced, and over every esearch file: files parsed
to ids / files answered with a SearchError.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from deepcritical.errors import SearchError
from deepcritical.sources.ncbi_esearch import parse_esearch
from deepcritical.sources.ncbi_parse import parse_efetch

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def has_text(element: ET.Element | None) -> bool:
    return element is not None and bool("".join(element.itertext()).strip())


def main(data: Path) -> int:
    ncbi = data / "ncbi"
    efetch_files = sorted(ncbi.glob("efetch_*/*.xml"))
    if not efetch_files:
        print(f"no NCBI data under {ncbi}", file=sys.stderr)
        return 1
    files = records = with_title_and_abstract = evidence = without_abstract = errors = 0
    for path in efetch_files:
        files += 1
        for record in ET.parse(path).getroot().findall("PubmedArticle"):
            article = record.find("MedlineCitation/Article")
            if article is not None and has_text(article.find("ArticleTitle")):
                with_title_and_abstract += any(has_text(part) for part in article.findall("Abstract/AbstractText"))
        try:
            batch = parse_efetch(path.read_text(encoding="utf-8"))
        except SearchError as error:
            errors += 1
            print(f"  {path.relative_to(ncbi)}: {error}")
            continue
        records += batch.records
        evidence += len(batch.evidence)
        without_abstract += batch.without_abstract

    esearch_ok = esearch_errors = 0
    for path in sorted(ncbi.glob("esearch/*")):
        try:
            parse_esearch(path.read_text(encoding="utf-8"))
            esearch_ok += 1
        except SearchError as error:
            esearch_errors += 1
            print(f"  {path.relative_to(ncbi)}: SearchError: {error}")

    print(f"efetch files: {files} ({errors} raised SearchError)")
    print(f"records parsed / records with title and abstract / evidence produced: "
          f"{records} / {with_title_and_abstract} / {evidence}")  # fmt: skip
    print(f"records left out for want of an abstract: {without_abstract}")
    print(f"esearch files: {esearch_ok} parsed to ids, {esearch_errors} answered with a SearchError")
    return 0 if evidence == with_title_and_abstract and errors == 0 else 2


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DATA))
