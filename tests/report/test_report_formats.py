"""The report's formats (``report.formats``): each is found by its module alone, writes the run's document with
every text run escaped, and ``deepcritical export --format NAME`` writes it from a run folder's report.json."""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from deepcritical.cli.app import EXIT_USAGE, app
from deepcritical.report import formats
from deepcritical.report.document import REPORT_DOCUMENT_FILE, Figure, ReportDocument, heading, paragraph, strong
from deepcritical.report.formats import DocumentWriter, document_writers
from deepcritical.report.markdown_writer import to_markdown

HOSTILE = "<script>alert(1)</script> # not a heading"
DOCUMENT = ReportDocument(
    blocks=[
        heading("Does <b>drug X</b> help?", level=1),
        paragraph(strong("Yes"), f" says a paper: {HOSTILE}"),
        Figure(file="prisma.svg", alt="PRISMA 2020-style flow diagram"),
    ]
)


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_every_format_module_defines_a_writer_with_its_own_name_and_suffix() -> None:
    writers = document_writers()
    assert {"markdown", "html"} <= set(writers)
    assert all(isinstance(writer, DocumentWriter) for writer in writers.values())
    assert len({writer.suffix for writer in writers.values()}) == len(writers)


def test_the_markdown_format_is_report_md() -> None:
    assert document_writers()["markdown"].write(DOCUMENT) == to_markdown(DOCUMENT)


def test_the_html_page_escapes_what_papers_say_and_shows_figures_from_the_run_folder() -> None:
    page = document_writers()["html"].write(DOCUMENT)
    parsed = _Elements()
    parsed.feed(page)
    tags = [tag for tag, _ in parsed.tags]
    assert "script" not in tags  # a paper's markup is text
    assert "b" not in tags
    assert "&lt;script&gt;" in page
    assert "<title>Does &lt;b&gt;drug X&lt;/b&gt; help?</title>" in page
    assert ("img", {"class": "figure", "src": "prisma.svg", "alt": "PRISMA 2020-style flow diagram"}) in parsed.tags


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    (tmp_path / REPORT_DOCUMENT_FILE).write_text(DOCUMENT.model_dump_json(), encoding="utf-8")
    return tmp_path


def test_export_writes_the_report_as_a_page_beside_its_files(run_dir: Path) -> None:
    target = run_dir / "report.html"
    result = CliRunner().invoke(app, ["export", str(run_dir), "--format", "html", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert target.read_text(encoding="utf-8") == document_writers()["html"].write(DOCUMENT)
    assert "the report" in result.output


def test_export_of_a_folder_without_a_report_document_says_how_to_make_one(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["export", str(tmp_path), "--format", "markdown"])
    assert result.exit_code == EXIT_USAGE
    assert f"no report.json in {tmp_path}" in result.output
    assert "deepcritical runs upgrade" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_new_format_is_one_module(run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module dropped into the formats package is a format of ``export``: no other file names it."""
    package = tmp_path / "more_formats"
    package.mkdir()
    (package / "plain_words.py").write_text(
        "from dataclasses import dataclass\n"
        "from deepcritical.report.document import ReportDocument\n\n\n"
        "@dataclass(frozen=True)\n"
        "class Words:\n"
        '    name: str = "words"\n'
        '    suffix: str = ".words"\n'
        '    media_type: str = "text/plain"\n\n'
        "    def write(self, document: ReportDocument) -> str:\n"
        '        return f"{len(document.blocks)} blocks"\n\n\n'
        "WRITER = Words()\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(formats, "__path__", [*formats.__path__, str(package)])
    monkeypatch.delitem(sys.modules, "deepcritical.report.formats.plain_words", raising=False)
    result = CliRunner().invoke(app, ["export", str(run_dir), "--format", "words"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "3 blocks"
    unknown = CliRunner().invoke(app, ["export", str(run_dir), "--format", "nope"])
    assert "words" in unknown.output.splitlines()[-1]


def test_a_format_module_without_a_writer_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "broken_formats"
    package.mkdir()
    (package / "half_done.py").write_text("NAME = 'half'\n", encoding="utf-8")
    monkeypatch.setattr(formats, "__path__", [*formats.__path__, str(package)])
    with pytest.raises(TypeError, match="half_done defines no WRITER"):
        document_writers()


def test_export_of_a_folder_that_does_not_exist_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    result = CliRunner().invoke(app, ["export", str(missing), "--format", "html"])
    assert result.exit_code == EXIT_USAGE
    assert f"RUN {missing}: no such folder" in result.output
    assert len(result.output.strip().splitlines()) == 1
