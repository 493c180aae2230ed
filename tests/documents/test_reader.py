"""Reading files: a folder of mixed formats, one line per file that cannot be read while the others go
on, the same file giving the same documents, and the limits (size, parse time) an untrusted file meets."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from deepcritical.documents.reader import Limits, ParserWorker, files_under, read_bytes, read_files, sniffed_format
from deepcritical.errors import DocumentError

RIS = b"TY  - JOUR\nTI  - Aspirin in older adults\nN1  - PMID: 30000001\nAB  - Bleeding was higher.\nER  - \n"


@pytest.fixture
def library_folder(tmp_path: Path, fulltext_data: Path) -> Path:
    folder = tmp_path / "papers"
    (folder / "pdf").mkdir(parents=True)
    (folder / "jats").mkdir()
    shutil.copy(fulltext_data / "pdf" / "pasa.pdf", folder / "pdf" / "pasa.pdf")
    shutil.copy(next((fulltext_data / "jats").glob("*.nxml")), folder / "jats" / "article.nxml")
    (folder / "zotero.ris").write_bytes(RIS)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7 this is not really a pdf")
    (folder / "figure.png").write_bytes(b"\x89PNG")  # not a document type: not read, not an error
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "notes.md").write_text("# secret")
    return folder


def test_a_folder_of_mixed_files_is_read_and_a_broken_one_gives_one_line(library_folder: Path) -> None:
    paths, refused = files_under([library_folder])
    assert refused == []
    assert sorted(path.name for path in paths) == ["article.nxml", "broken.pdf", "pasa.pdf", "zotero.ris"]
    results = {result.path.name: result for result in read_files(paths, Limits())}
    broken = results.pop("broken.pdf")
    assert broken.documents == []
    assert broken.line.startswith(str(library_folder / "broken.pdf") + ": not a readable PDF")
    assert all(result.error is None and result.documents for result in results.values())
    assert results["zotero.ris"].documents[0].id == "pmid:30000001"
    assert results["pasa.pdf"].documents[0].id.startswith("file:")
    assert results["article.nxml"].documents[0].id.startswith("pmid:")
    for result in results.values():
        for document in result.documents:
            for passage in document.passages:
                assert passage.document_id == document.id
                assert document.text[passage.start : passage.end] == passage.text


def test_missing_and_unsupported_paths_are_named(tmp_path: Path) -> None:
    (tmp_path / "slides.pptx").write_bytes(b"PK")
    paths, refused = files_under([tmp_path / "nowhere", tmp_path / "slides.pptx"])
    assert paths == []
    assert [(result.path.name, result.error) for result in refused] == [
        ("nowhere", "no such file or folder"),
        ("slides.pptx", refused[1].error),
    ]
    assert refused[1].error is not None
    assert "unsupported file type" in refused[1].error


def test_the_same_bytes_give_the_same_documents_and_a_change_a_new_hash() -> None:
    first = read_bytes(RIS, suffix=".ris", limits=Limits())
    again = read_bytes(RIS, suffix=".ris", limits=Limits())
    changed = read_bytes(RIS.replace(b"higher", b"lower"), suffix=".ris", limits=Limits())
    assert [d.content_hash for d in first] == [d.content_hash for d in again]
    assert first[0].id == changed[0].id == "pmid:30000001"
    assert first[0].content_hash != changed[0].content_hash


def test_a_file_over_the_size_limit_is_refused_unread() -> None:
    with pytest.raises(DocumentError, match=r"more than the limit of .* MB \(DEEPCRITICAL_LIBRARY_MAX_FILE_MB\)"):
        read_bytes(b"x" * 2000, suffix=".txt", limits=Limits(max_bytes=1024))


@pytest.mark.parametrize(
    ("suffix", "data", "expected"),
    [
        (".xml", b'<?xml version="1.0"?><pmc-articleset><article>', "jats"),
        (".xml", b"<collection><source>PMC</source><document>", "bioc"),
        (".json", b'[{"documents": [{"passages": []}]}]', "bioc"),
        (".json", b'[{"title": "x", "type": "article-journal"}]', "csljson"),
        (".NXML", b"<article/>", "jats"),
    ],
)
def test_xml_and_json_are_told_apart_by_content(suffix: str, data: bytes, expected: str) -> None:
    assert sniffed_format(suffix, data) == expected


def test_xml_of_another_kind_is_refused() -> None:
    with pytest.raises(DocumentError, match="neither a JATS article nor a BioC"):
        sniffed_format(".xml", b"<rss><channel/></rss>")


def test_a_parse_over_the_time_limit_is_stopped_and_the_worker_replaced() -> None:
    with ParserWorker(Limits(max_seconds=0.5)) as worker:
        with pytest.raises(DocumentError, match=r"longer than 0\.5 s"):
            worker.run(time.sleep, 30)
        assert worker.run(len, "next file") == 9  # a fresh worker takes the next file


def test_a_parser_that_fails_in_its_own_way_refuses_that_file_only() -> None:
    """Any other exception of a third-party parser on a hostile file is that file's one line, not the add's end."""
    with ParserWorker(Limits()) as worker:
        with pytest.raises(DocumentError, match=r"^the parser failed on it \(ValueError\); not read$"):
            worker.run(int, "not a number")
        assert worker.run(len, "next file") == 9


TOO_DEEP = "nested too deeply to read (a hostile or broken file); not read"
DEEP_JSON = b"[" * 5000 + b"]" * 5000
DEEP_BIBTEX = b"@article{x, title=" + b"{" * 5000 + b"a" + b"}" * 5000 + b"}\n"


def test_a_deeply_nested_file_is_refused_alone_and_the_others_are_read(tmp_path: Path) -> None:
    """5,000 ``[`` (or BibTeX braces) raised RecursionError, which ended the whole add; now that file gets
    its one line and the files after it are still read, in the same worker."""
    (tmp_path / "deep.json").write_bytes(DEEP_JSON)
    (tmp_path / "deep.bib").write_bytes(DEEP_BIBTEX)
    (tmp_path / "notes.md").write_text("# Notes\n\nNausea in 5 of 40 on drug X.\n")
    paths, _ = files_under([tmp_path])
    results = {result.path.name: result for result in read_files(paths, Limits())}
    for name in ("deep.json", "deep.bib"):
        assert results[name].line == f"{tmp_path / name}: {TOO_DEEP}"
    assert results["notes.md"].error is None
    assert results["notes.md"].documents
    with pytest.raises(DocumentError, match="nested too deeply"):
        read_bytes(DEEP_JSON, suffix=".json", limits=Limits())  # in this process too, without a worker
