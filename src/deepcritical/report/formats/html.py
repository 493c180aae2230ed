"""The report as an HTML page of its own, to keep beside the run's files (its figures are shown from them):
the page's HTML (``report.html``) in a document with a small style sheet and no script."""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from deepcritical.report.document import Heading, ReportDocument, plain
from deepcritical.report.html import to_html

_STYLE = Markup(
    "body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}"
    "table{border-collapse:collapse;display:block;overflow-x:auto}td,th{border:1px solid #ccc;padding:.3rem .5rem}"
    ".figure-box{overflow-x:auto}blockquote{border-left:4px solid #b45309;margin:1rem 0;padding:.2rem 1rem}"
)


@dataclass(frozen=True)
class HtmlPageWriter:
    name: str = "html"
    suffix: str = ".html"
    media_type: str = "text/html; charset=utf-8"

    def write(self, document: ReportDocument) -> str:
        title = next((plain(block.runs) for block in document.blocks if isinstance(block, Heading)), "Report")
        body = Markup(to_html(document, files="", standalone=True))  # written by the HTML writer: every run escaped
        return str(
            Markup(
                '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
                '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n{}</body>\n</html>\n"
            ).format(title, _STYLE, body)
        )


WRITER = HtmlPageWriter()
