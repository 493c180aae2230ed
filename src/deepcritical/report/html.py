"""A report document (``report.document``) as an HTML fragment for the page, beside the Markdown writer
(``report.markdown_writer``) and from the same document, so the page shows what ``report.md`` says.

Every text run is escaped exactly once, by markupsafe: a run is a ``str``, the writer's markup is ``Markup``,
and ``Markup.format`` and ``Markup.join`` escape what is not already markup. A link is kept only when it goes
to http(s) (opening outside the page), a figure only when it is one of the run's own files: it is an ``<img>``
with no source but ``data-run-file``, which the page fetches with its token (app.js), and a link to a figure
file downloads it from the run (``files``: where the run's files are served). A citation of reference N links
to the reference list's item N (``ref-N``). The study-results table is marked ``sortable``. The elements are
the ones the Markdown renderer made before (``web/report_html.py``), so the page's style sheet applies."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from markupsafe import Markup, escape

from deepcritical.report.document import (
    Block,
    BulletList,
    Cite,
    Code,
    Figure,
    FileLink,
    Heading,
    Inline,
    Item,
    Link,
    Paragraph,
    Quote,
    References,
    ReportDocument,
    Table,
    Text,
    is_run_figure,
)

OUTSIDE = Markup(' rel="noopener noreferrer nofollow" target="_blank"')


def reference_id(number: int) -> str:
    """The reference list's item N: what a citation of N links to."""
    return f"ref-{number}"


def http_url(url: str) -> bool:
    parts = urlsplit(url.strip())
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


class HtmlWriter:
    """Writes one document: ``references`` is how many it numbers, ``files`` where its run's files are served."""

    def __init__(self, references: int, files: str | None, *, standalone: bool = False) -> None:
        self.references = references
        self.files = files
        self.standalone = standalone  # a page of its own beside the run's files: figures by their file names

    def inline(self, runs: Sequence[Inline]) -> Markup:
        return Markup("").join(self._run(run) for run in runs)

    def _run(self, run: Inline) -> Markup:
        if isinstance(run, Text):
            return escape(run.text)
        if isinstance(run, Code):
            return Markup("<code>{}</code>").format(run.text)
        if isinstance(run, Cite):
            marks = (self._mark(ref.number, ref.place) for ref in run.refs)
            return Markup("[{}]").format(Markup(escape(run.separator)).join(marks))
        if isinstance(run, Link):
            if not http_url(run.url):
                return escape(run.text)
            return Markup('<a href="{}"{}>{}</a>').format(run.url.strip(), OUTSIDE, run.text)
        if isinstance(run, FileLink):
            return self._file_link(run.name)
        tag = Markup("strong" if run.style == "strong" else "em")
        return Markup("<{}>{}</{}>").format(tag, self.inline(run.runs), tag)

    def _mark(self, number: int, place: str) -> Markup:
        """A reference number linked to its entry (when the report has it), and the passage's place."""
        shown: Markup = escape(str(number))
        if 1 <= number <= self.references:
            shown = Markup('<a href="#{}" class="cite">{}</a>').format(reference_id(number), number)
        return Markup("{}, {}").format(shown, place) if place else shown

    def _file_link(self, name: str) -> Markup:
        if not is_run_figure(name):
            return escape(name)
        if self.files is None:  # without the run's address a figure link downloads nothing
            return Markup('<a data-run-file="{}">{}</a>').format(name, name)
        return Markup('<a href="{}" data-run-file="{}" download="{}">{}</a>').format(
            f"{self.files}{name}", name, name, name
        )

    def _items(self, items: Iterable[Item], numbered: bool = False) -> Markup:
        out = []
        for number, entry in enumerate(items, start=1):
            anchor = Markup(' id="{}"').format(reference_id(number)) if numbered else Markup("")
            nested = Markup("\n<ul>\n{}</ul>\n").format(self._items(entry.items)) if entry.items else Markup("")
            out.append(Markup("<li{}>{}{}</li>\n").format(anchor, self.inline(entry.runs), nested))
        return Markup("").join(out)

    def block(self, block: Block) -> Markup:
        if isinstance(block, Heading):
            tag = Markup(f"h{block.level}")
            return Markup("<{}>{}</{}>\n").format(tag, self.inline(block.runs), tag)
        if isinstance(block, Paragraph):
            return Markup("<p>{}</p>\n").format(self.inline(block.runs))
        if isinstance(block, BulletList):
            return Markup("<ul>\n{}</ul>\n").format(self._items(block.items))
        if isinstance(block, References):
            return Markup("<ol>\n{}</ol>\n").format(self._items(block.items, numbered=True))
        if isinstance(block, Table):
            return self._table(block)
        if isinstance(block, Quote):
            return Markup("<blockquote>\n{}</blockquote>\n").format(self.blocks(block.blocks))
        if isinstance(block, Figure):
            return self._figure(block)
        raise TypeError(f"not a report block: {type(block).__name__}")

    def _table(self, table: Table) -> Markup:
        """A table in its own sideways-scrolling box. Each cell carries its column's name (``data-label``), which
        a phone shows beside it when the rows are stacked as cards; the ``folded`` columns are a disclosure in the
        row's last cell ("More"), so the columns that stay fit the page's width."""
        opening = Markup('<table class="sortable">') if table.sortable else Markup("<table>")
        kept = [at for at in range(len(table.header)) if at not in table.folded]
        head = Markup("").join(Markup("<th>{}</th>\n").format(table.header[at]) for at in kept)
        if table.folded:
            head += Markup('<th class="more">More</th>\n')
        rows = Markup("").join(Markup("<tr>\n{}</tr>\n").format(self._row(table, row, kept)) for row in table.rows)
        return Markup(
            '<div class="table-box">\n{}\n<thead>\n<tr>\n{}</tr>\n</thead>\n<tbody>\n{}</tbody>\n</table>\n</div>\n'
        ).format(opening, head, rows)

    def _row(self, table: Table, row: Sequence[Sequence[Inline]], kept: Sequence[int]) -> Markup:
        # One element a cell, so a phone's card lays each cell out as its name beside its value (a cell's citation
        # links would otherwise be laid out as cells of their own).
        cells = Markup("").join(
            Markup('<td data-label="{}"><span>{}</span></td>\n').format(table.header[at], self.inline(row[at]))
            for at in kept
        )
        if not table.folded:
            return cells
        folded = Markup("").join(
            Markup("<dt>{}</dt><dd>{}</dd>").format(table.header[at], self.inline(row[at])) for at in table.folded
        )
        return cells + Markup(
            '<td class="more" data-label="More"><details><summary>More</summary><dl>{}</dl></details></td>\n'
        ).format(folded)

    def _figure(self, figure: Figure) -> Markup:
        """A run figure at its own size, in a box that scrolls sideways when the page is narrower: a figure is
        never shrunk, so its text stays the size it was drawn (12 px and up)."""
        if not is_run_figure(figure.file):
            return Markup("<p>{}</p>\n").format(figure.alt)
        if self.standalone:
            return Markup('<div class="figure-box"><img class="figure" src="{}" alt="{}"></div>\n').format(
                figure.file, figure.alt
            )
        return Markup('<div class="figure-box"><img class="figure" data-run-file="{}" alt="{}"></div>\n').format(
            figure.file, figure.alt
        )

    def blocks(self, blocks: Sequence[Block]) -> Markup:
        return Markup("").join(self.block(block) for block in blocks)


def to_html(document: ReportDocument, files: str | None = None, *, standalone: bool = False) -> str:
    """The report as an HTML fragment, safe to insert into the page; ``files``: where the run's files are
    served (``/api/runs/ID/``), for its figure links; ``standalone``: for a page beside the run's files, which
    shows its figures by their file names."""
    return str(HtmlWriter(document.references(), files, standalone=standalone).blocks(document.blocks))
