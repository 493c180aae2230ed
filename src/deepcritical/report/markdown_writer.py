"""A report document (``report.document``) as Markdown, for ``report.md`` and MCP: every text run escaped once
by ``report.markdown`` (no HTML, no links, no emphasis, no headings of its own), a block's first characters
so that they open no block; citations as escaped brackets ("\\[1, 4\\]"), so no renderer reads a link."""

from __future__ import annotations

from collections.abc import Sequence

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
from deepcritical.report.markdown import code_span, escape_inline, escape_line_start, safe_link


def inline_markdown(runs: Sequence[Inline]) -> str:
    """Runs as Markdown inside a line."""
    out = []
    for run in runs:
        if isinstance(run, Text):
            out.append(escape_inline(run.text))
        elif isinstance(run, Code):
            out.append(code_span(run.text))
        elif isinstance(run, Cite):
            marks = (f"{ref.number}, {escape_inline(ref.place)}" if ref.place else str(ref.number) for ref in run.refs)
            out.append(f"\\[{run.separator.join(marks)}\\]")
        elif isinstance(run, Link):
            url = safe_link(run.url)
            out.append(f"[{escape_inline(run.text)}]({url})" if url else escape_inline(run.text))
        elif isinstance(run, FileLink):
            out.append(f"[{run.name}]({run.name})" if is_run_figure(run.name) else escape_inline(run.name))
        else:
            mark = "**" if run.style == "strong" else "*"
            out.append(f"{mark}{inline_markdown(run.runs)}{mark}")
    return "".join(out)


def line(runs: Sequence[Inline]) -> str:
    """Runs as one line of Markdown that opens no block of its own."""
    return escape_line_start(inline_markdown(runs).strip())


def _items(items: Sequence[Item], indent: str = "") -> list[str]:
    out = []
    for entry in items:
        out.append(f"{indent}- {line(entry.runs)}")
        out += _items(entry.items, indent + "  ")
    return out


def block_lines(block: Block) -> list[str]:
    """One block's lines, without the blank line that separates blocks."""
    if isinstance(block, Heading):
        return [f"{'#' * block.level} {line(block.runs)}"]
    if isinstance(block, Paragraph):
        return [line(block.runs)]
    if isinstance(block, BulletList):
        return _items(block.items)
    if isinstance(block, References):
        return [f"{number}. {line(entry.runs)}" for number, entry in enumerate(block.items, start=1)]
    if isinstance(block, Table):
        rows = [f"| {' | '.join(escape_inline(cell) for cell in block.header)} |", f"|{'---|' * len(block.header)}"]
        return rows + [f"| {' | '.join(line(cell) for cell in row)} |" for row in block.rows]
    if isinstance(block, Quote):
        inner = blocks_markdown(block.blocks).splitlines()
        return [f"> {text}" if text else ">" for text in inner]
    if isinstance(block, Figure):
        return [
            f"![{escape_inline(block.alt)}]({block.file})"
            if is_run_figure(block.file)
            else line([Text(text=block.alt)])
        ]
    raise TypeError(f"not a report block: {type(block).__name__}")


def blocks_markdown(blocks: Sequence[Block]) -> str:
    """Blocks as Markdown, one blank line between them, ending with a newline."""
    return "\n\n".join("\n".join(block_lines(block)) for block in blocks) + "\n"


def to_markdown(document: ReportDocument) -> str:
    """The whole report as Markdown (``report.md``)."""
    return blocks_markdown(document.blocks)
