"""A report as a small document: blocks (headings, paragraphs, lists, tables, quotes, figures) made of inline
runs (text, emphasis, code, citations, links). Each section of a report is built once as this model, and two
writers emit it: Markdown for ``report.md`` (``report.markdown_writer``, with ``report.markdown``'s escaping)
and HTML for the page (``report.html``). So the file and the page cannot say different things, and the page
never parses Markdown back.

Text in the model is raw, never escaped: each writer escapes it exactly once for its format. A link holds an
http(s) URL (``report.markdown.safe_link``) and a file link one of the run's own figure files; both writers
check them again. The model is stored beside ``report.md`` as ``report.json`` (``REPORT_DOCUMENT_FILE``)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

REPORT_DOCUMENT_FILE = "report.json"
DOCUMENT_VERSION = 1
# The figure files a run writes (report/figure_files.py): the only files a report shows or links.
RUN_FIGURE = re.compile(r"^(?:prisma\.svg|forest-\d{1,3}\.(?:svg|png))$")


def is_run_figure(name: str) -> bool:
    return RUN_FIGURE.match(name) is not None


class Text(BaseModel):
    kind: Literal["text"] = "text"
    text: str


class Code(BaseModel):
    """Shown verbatim: an evidence id, a run id, a command."""

    kind: Literal["code"] = "code"
    text: str


class CiteRef(BaseModel):
    model_config = ConfigDict(frozen=True)  # hashable: a finding's marks are kept once each, in order

    number: int = Field(description="The reference number")
    place: str = Field(default="", description="Where in the study: 'Results', 'p. 7'")


class Cite(BaseModel):
    """A bracketed group of reference numbers: "[1, 4]", "[3, Results; 5]"."""

    kind: Literal["cite"] = "cite"
    refs: list[CiteRef]
    separator: str = ", "


class Link(BaseModel):
    """A link out of the report: ``url`` is an http(s) URL."""

    kind: Literal["link"] = "link"
    text: str
    url: str


class FileLink(BaseModel):
    """A link to one of the run's own files (a figure), shown by its name."""

    kind: Literal["file"] = "file"
    name: str


class Styled(BaseModel):
    kind: Literal["styled"] = "styled"
    style: Literal["strong", "em"]
    runs: list[Inline]


Inline = Annotated[Text | Code | Cite | Link | FileLink | Styled, Field(discriminator="kind")]


class Heading(BaseModel):
    kind: Literal["heading"] = "heading"
    level: int = Field(ge=1, le=6)
    runs: list[Inline]


class Paragraph(BaseModel):
    kind: Literal["paragraph"] = "paragraph"
    runs: list[Inline]


class Item(BaseModel):
    """A list item, with the items nested under it."""

    runs: list[Inline]
    items: list[Item] = Field(default_factory=list)


class BulletList(BaseModel):
    kind: Literal["list"] = "list"
    items: list[Item]


class References(BaseModel):
    """The reference list: item N is reference N, the target of every citation of N."""

    kind: Literal["references"] = "references"
    items: list[Item]


class Table(BaseModel):
    kind: Literal["table"] = "table"
    header: list[str]
    rows: list[list[list[Inline]]] = Field(description="Each row's cells, each cell's runs")
    sortable: bool = Field(default=False, description="The page sorts it by a column (the study results)")
    folded: list[int] = Field(
        default_factory=list,
        description="Columns the page shows behind each row's disclosure, not as columns (report.md shows them all)",
    )


class Quote(BaseModel):
    """A set-off warning: the demo banner, retractions, a model failure."""

    kind: Literal["quote"] = "quote"
    blocks: list[Block]


class Figure(BaseModel):
    """One of the run's figure files (``prisma.svg``, ``forest-N.svg``), with its text alternative."""

    kind: Literal["figure"] = "figure"
    file: str
    alt: str


Block = Annotated[Heading | Paragraph | BulletList | References | Table | Quote | Figure, Field(discriminator="kind")]


class ReportDocument(BaseModel):
    """A whole report, as both writers read it."""

    version: int = DOCUMENT_VERSION
    blocks: list[Block]

    def references(self) -> int:
        """How many references the report numbers (a citation of a larger number links nowhere)."""
        return sum(len(block.items) for block in self.blocks if isinstance(block, References))


Styled.model_rebuild()
Item.model_rebuild()
Quote.model_rebuild()

# Builders, so a section reads like the text it writes: a plain string is a text run.
Part = str | Text | Code | Cite | Link | FileLink | Styled


def runs(*parts: Part | list[Inline]) -> list[Inline]:
    """Inline runs from strings (text), runs and lists of runs; empty strings dropped."""
    out: list[Inline] = []
    for part in parts:
        for run in part if isinstance(part, list) else [part]:
            if isinstance(run, str):
                if run:
                    out.append(Text(text=run))
            else:
                out.append(run)
    return out


def strong(*parts: Part | list[Inline]) -> Styled:
    return Styled(style="strong", runs=runs(*parts))


def em(*parts: Part | list[Inline]) -> Styled:
    return Styled(style="em", runs=runs(*parts))


def cites(numbers: list[int] | tuple[int, ...]) -> list[Inline]:
    """The one citation style, "[1, 4]": a study's number once; nothing for no number."""
    refs = [CiteRef(number=number) for number in dict.fromkeys(numbers)]
    return [Cite(refs=refs)] if refs else []


def heading(*parts: Part | list[Inline], level: int = 2) -> Heading:
    return Heading(level=level, runs=runs(*parts))


def paragraph(*parts: Part | list[Inline]) -> Paragraph:
    return Paragraph(runs=runs(*parts))


def item(*parts: Part | list[Inline], items: list[Item] | None = None) -> Item:
    return Item(runs=runs(*parts), items=items or [])


def bullets(items: list[Item]) -> BulletList:
    return BulletList(items=items)


def plain(inline: list[Inline]) -> str:
    """The runs' text as a reader sees it, without markup: "[1, 4]" for a citation."""
    out = []
    for run in inline:
        if isinstance(run, Text | Code):
            out.append(run.text)
        elif isinstance(run, Cite):
            marks = (f"{ref.number}, {ref.place}" if ref.place else str(ref.number) for ref in run.refs)
            out.append(f"[{run.separator.join(marks)}]")
        elif isinstance(run, Link):
            out.append(run.text)
        elif isinstance(run, FileLink):
            out.append(run.name)
        else:
            out.append(plain(run.runs))
    return "".join(out)
