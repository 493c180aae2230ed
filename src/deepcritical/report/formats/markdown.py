"""The report as Markdown: what ``report.md`` holds (``report.markdown_writer``)."""

from __future__ import annotations

from dataclasses import dataclass

from deepcritical.report.document import ReportDocument
from deepcritical.report.markdown_writer import to_markdown


@dataclass(frozen=True)
class MarkdownWriter:
    name: str = "markdown"
    suffix: str = ".md"
    media_type: str = "text/markdown; charset=utf-8"

    def write(self, document: ReportDocument) -> str:
        return to_markdown(document)


WRITER = MarkdownWriter()
