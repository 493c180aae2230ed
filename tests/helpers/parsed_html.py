"""Reading HTML the page shows, as a test checks it."""

from __future__ import annotations

from html.parser import HTMLParser


class Page(HTMLParser):
    """Every start tag with its attributes, and the text inside each element (innermost tag first)."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.open: list[str] = []
        self.texts: list[tuple[str, str]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in ("img", "br", "hr", "input", "meta", "link", "col", "wbr", "source"):
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))  # "<img ... />": nothing opens

    def handle_endtag(self, tag: str) -> None:
        assert self.open.pop() == tag  # well nested: no text closed an element

    def handle_data(self, data: str) -> None:
        self.texts.append((self.open[-1] if self.open else "", data))

    def text(self) -> str:
        return " ".join("".join(data for _, data in self.texts).split())
