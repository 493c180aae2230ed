"""The few SVG pieces the run's plots are drawn from, written by hand: a plot is a handful of lines,
boxes and labels, and hand-written SVG costs no import time and no install size (measured against
matplotlib in bench/plots_bench.py; phases/16_statistics.md). Every text is escaped: a study's title
is outside text."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from deepcritical.text import collapse_whitespace, shorten

# A presentation attribute, not a style: a page whose CSP allows no inline style still applies it.
FONT = "Helvetica,Arial,DejaVu Sans,sans-serif"
# The width of an average character at 12 px, to fit labels into columns without a font engine.
CHAR_WIDTH = 6.6


def number(value: float) -> str:
    """A coordinate as SVG takes it: at most two decimals, no trailing zeros."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def text(
    x: float, y: float, body: str, *, size: int = 12, anchor: str = "start", weight: str = "normal", width: int = 0
) -> str:
    """One line of escaped text; cut to ``width`` pixels (with an ellipsis) when given."""
    if width:
        body = shorten(body, max(int(width / (CHAR_WIDTH * size / 12)), 4))
    return (
        f'<text x="{number(x)}" y="{number(y)}" font-size="{size}" text-anchor={quoteattr(anchor)} '
        f"font-weight={quoteattr(weight)}>{escape(collapse_whitespace(body))}</text>"
    )


def line(x1: float, y1: float, x2: float, y2: float, *, stroke: str = "#222", width: float = 1, dash: str = "") -> str:
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return (
        f'<line x1="{number(x1)}" y1="{number(y1)}" x2="{number(x2)}" y2="{number(y2)}" '
        f'stroke="{stroke}" stroke-width="{number(width)}"{dashed}/>'
    )


def rect(x: float, y: float, w: float, h: float, *, fill: str = "none", stroke: str = "#222", ident: str = "") -> str:
    named = f" id={quoteattr(ident)}" if ident else ""
    return (
        f'<rect{named} x="{number(x)}" y="{number(y)}" width="{number(w)}" height="{number(h)}" '
        f'fill="{fill}" stroke="{stroke}"/>'
    )


def document(width: float, height: float, title: str, body: list[str]) -> str:
    """A standalone SVG document with an accessible title."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{number(width)}" height="{number(height)}" '
        f'viewBox="0 0 {number(width)} {number(height)}" role="img" font-family="{FONT}">'
        f"<title>{escape(title)}</title>"
        f'<rect width="100%" height="100%" fill="#fff"/>' + "".join(body) + "</svg>\n"
    )
