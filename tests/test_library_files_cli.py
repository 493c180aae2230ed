"""``deepcritical library add PATH...`` as a user runs it: a folder of mixed files, one line for the file that
cannot be read and exit 1, a second add that changes nothing, the documents listed, one removed."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from helpers.commands import run_cli

RIS = (
    "TY  - JOUR\nTI  - Aspirin for primary prevention in older adults\nPY  - 2018\nN1  - PMID: 30221597\n"
    "AB  - Aspirin led to more major haemorrhage than placebo and did not prolong disability-free survival.\nER  - \n"
)

pytestmark = pytest.mark.slow  # every test here runs the command in a child process
NOTES = "# Notes\n\n## Methods\n\nWe pooled 12 trials of statins in sepsis.\n\n## Results\n\nNo mortality benefit.\n"


def _env() -> dict[str, str]:
    # The code under test is this checkout's when the caller put its src on PYTHONPATH.
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


@pytest.mark.model
def test_library_add_a_folder_then_again_then_list_and_remove(tmp_path: Path) -> None:
    folder = tmp_path / "papers"
    (folder / "notes").mkdir(parents=True)
    (folder / "zotero.ris").write_text(RIS)
    (folder / "notes" / "statins.md").write_text(NOTES)
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    home = tmp_path / "home"

    first = run_cli("library", "add", str(folder), home=home, env=_env())
    assert first.returncode == 1, first.stderr
    assert f"{folder / 'broken.pdf'}: not a readable PDF" in first.stderr
    assert "2 of 3 file(s) read: 2 document(s) added" in " ".join(first.stdout.split())

    again = run_cli("library", "add", str(folder / "zotero.ris"), str(folder / "notes"), home=home, env=_env())
    assert again.returncode == 0, again.stderr
    assert "0 document(s) added, 0 updated, 2 unchanged" in " ".join(again.stdout.split())

    listed = run_cli("library", "documents", "--json", home=home, env=_env())
    assert listed.returncode == 0, listed.stderr
    documents = {row["id"]: row for row in json.loads(listed.stdout)["documents"]}
    assert documents["pmid:30221597"]["format"] == "ris"
    assert documents["pmid:30221597"]["full_text"] is False
    markdown = next(row for row in documents.values() if row["format"] == "markdown")
    assert markdown["source_path"] == str(folder / "notes" / "statins.md")

    searched = run_cli("search", "statins sepsis mortality", "--sources", "library", "--json", home=home, env=_env())
    assert searched.returncode == 0, searched.stderr
    sections = {item["passage"]["section"] for item in json.loads(searched.stdout)["evidence"]}
    assert "Results" in sections

    found = run_cli("library", "search", "statins sepsis mortality", "--json", home=home, env=_env())
    assert found.returncode == 0, found.stderr
    assert "Results" in {item["passage"]["section"] for item in json.loads(found.stdout)["passages"]}
    nowhere = run_cli("library", "search", "statins", "--collection", "nothing", home=home, env=_env())
    assert nowhere.returncode == 2
    assert "no document collection 'nothing'" in nowhere.stderr

    exported = run_cli("library", "export", "--collection", "documents", home=home, env=_env())
    assert exported.returncode == 0, exported.stderr
    lines = [json.loads(line) for line in exported.stdout.splitlines()]
    assert {line["passage"]["document_id"] for line in lines} == set(documents)

    removed = run_cli("library", "remove", "pmid:30221597", home=home, env=_env())
    assert removed.returncode == 0, removed.stderr
    gone = run_cli("library", "remove", "pmid:30221597", home=home, env=_env())
    assert gone.returncode == 2
    assert "no document 'pmid:30221597'" in gone.stderr


@pytest.mark.model
def test_a_demo_run_reads_full_text_and_cites_a_passage_with_its_section(tmp_path: Path) -> None:
    home, out = tmp_path / "home", tmp_path / "run"
    question = "Do SGLT2 inhibitors improve outcomes in heart failure?"
    first = run_cli("research", question, "--demo", "--out", str(out), home=home, env=_env())
    assert first.returncode == 0, first.stderr
    assert "Full text: " in " ".join(first.stdout.split() + first.stderr.split())
    record = json.loads((out / "run.json").read_text())
    passages = {item["id"]: item["passage"] for item in record["evidence"] if item.get("passage")}
    assert passages
    cited = {i for finding in record["report"]["key_findings"] for i in finding["evidence_ids"]} & set(passages)
    assert cited, "no finding cites a full-text passage"
    report = (out / "report.md").read_text()
    sections = {passages[i]["section"] for i in cited}
    assert any(re.search(rf"\\\[\d+, {re.escape(section)}(; [^\]]*)?\\\]", report) for section in sections)
    assert all(passage["start"] is not None and passage["end"] > passage["start"] for passage in passages.values())

    again = run_cli("research", question, "--demo", "--out", str(tmp_path / "again"), home=home, env=_env())
    assert again.returncode == 0, again.stderr
    assert "from the library" in " ".join(again.stdout.split() + again.stderr.split())


def test_a_corpus_is_read_under_the_same_limits_as_every_file(tmp_path: Path) -> None:
    """A ``.jsonl`` corpus had no size, memory or time limit (one 100 MB line took 6.5 GB and ran on past
    300 s): now its size is checked first and it is parsed in the parser worker; each bad file is one reason."""
    from deepcritical.documents.reader import Limits
    from deepcritical.errors import ConfigError, DocumentError
    from deepcritical.service.library_add import corpus_parts

    def read_corpus(path: Path, limits: Limits) -> list[Any]:
        return [document for part in corpus_parts(path, limits) for document in part]

    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"_id": "d1", "title": "Statins", "text": "No mortality benefit in sepsis."}) + "\n")
    huge = tmp_path / "huge.jsonl"
    huge.write_text(json.dumps({"_id": "d2", "text": "y" * 300_000}) + "\n")
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 5000 + "]" * 5000 + "\n")
    limits = Limits(max_bytes=200_000)
    assert [document.id for document in read_corpus(good, limits)] == ["d1"]
    with pytest.raises(DocumentError, match=r"more than the limit of .* \(DEEPCRITICAL_LIBRARY_MAX_FILE_MB\)"):
        read_corpus(huge, limits)
    with pytest.raises(DocumentError, match="nested too deeply"):
        read_corpus(deep, limits)
    (tmp_path / "prose.jsonl").write_text("not json\n")
    with pytest.raises(ConfigError, match=r"prose.jsonl, line 1: not JSON"):
        read_corpus(tmp_path / "prose.jsonl", limits)


@pytest.mark.model
def test_library_add_refuses_each_bad_file_alone_and_keeps_the_others(tmp_path: Path) -> None:
    """A nested JSON file and a bad corpus used to abort the whole add, blaming the store directory."""
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "deep.json").write_bytes(b"[" * 5000 + b"]" * 5000)
    (folder / "deep.bib").write_bytes(b"@article{x, title=" + b"{" * 5000 + b"}" * 5000 + b"}\n")
    (folder / "statins.md").write_text(NOTES)
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 5000 + "]" * 5000 + "\n")
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"_id": "d1", "title": "Statins", "text": "No mortality benefit in sepsis."}) + "\n")
    result = run_cli("library", "add", str(deep), str(good), str(folder), home=tmp_path / "home", env=_env())
    assert result.returncode == 1, result.stderr
    for bad in (deep, folder / "deep.json", folder / "deep.bib"):
        assert f"{bad}: nested too deeply to read (a hostile or broken file); not read" in result.stderr
    assert "store" not in result.stderr
    assert "1 passage(s) added" in result.stdout
    assert "1 of 3 file(s) read: 1 document(s) added" in " ".join(result.stdout.split())


@pytest.mark.model
def test_library_add_embed_later_stores_at_once_and_library_embed_fills_in_the_vectors(tmp_path: Path) -> None:
    """A large export is stored without waiting for the embedding model (``--embed later`` here, what ``auto``
    does past 250 records): the add says how many passages wait and which command embeds them; a search finds
    the record by its words meanwhile; ``library embed`` embeds them, and a second run has nothing to do."""
    export = tmp_path / "zotero.ris"
    export.write_text(RIS)
    home = tmp_path / "home"

    bad = run_cli("library", "add", "--embed", "tomorrow", str(export), home=home, env=_env())
    assert bad.returncode == 2
    assert "--embed 'tomorrow' is not one of auto, now, later" in bad.stderr

    added = run_cli("library", "add", "--embed", "later", str(export), home=home, env=_env())
    assert added.returncode == 0, added.stderr
    assert "1 passage(s) written; 1 passage(s) not embedded yet" in " ".join(added.stdout.split())
    assert "deepcritical library embed --collection documents" in " ".join(added.stderr.split())

    searched = run_cli("search", "aspirin haemorrhage", "--sources", "library", "--json", home=home, env=_env())
    assert searched.returncode == 0, searched.stderr
    assert [item["citation"]["pmid"] for item in json.loads(searched.stdout)["evidence"]] == ["30221597"]
    listed = run_cli("library", "documents", "--json", home=home, env=_env())
    assert [row["passages_not_embedded"] for row in json.loads(listed.stdout)["documents"]] == [1]

    embedded = run_cli("library", "embed", home=home, env=_env())
    assert embedded.returncode == 0, embedded.stderr
    assert "1 passage(s) of the collection documents embedded" in " ".join(embedded.stdout.split())
    again = run_cli("library", "embed", home=home, env=_env())
    assert again.returncode == 0, again.stderr
    assert "every passage of the collection documents is embedded" in again.stdout
    listed = run_cli("library", "documents", "--json", home=home, env=_env())
    assert [row["passages_not_embedded"] for row in json.loads(listed.stdout)["documents"]] == [0]
    missing = run_cli("library", "embed", "--collection", "elsewhere", home=home, env=_env())
    assert missing.returncode == 1
    assert "no document collection 'elsewhere'" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1


def test_a_corpus_record_is_cut_into_passages_and_read_part_by_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One record of megabytes was stored as one passage (a 48 MB passage, 730 MB of store, 5.5 GB of memory
    in the add): it is cut into passages as every other format is, and a corpus is read in parts of bounded
    size, so the add holds one part at a time whatever the file's size."""
    import tracemalloc

    from deepcritical.documents.passages import MAX_CHARS
    from deepcritical.documents.reader import Limits
    from deepcritical.service import library_add

    sentence = "Statins reduced mortality by 12% in 40 trials of sepsis. "
    corpus = tmp_path / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"_id": "big", "title": "One long record", "text": sentence * 40_000}) + "\n")
        for number in range(60_000):
            handle.write(json.dumps({"_id": f"d{number}", "text": f"Record {number}. " + sentence * 3}) + "\n")
    monkeypatch.setattr(library_add, "CORPUS_PART_BYTES", 256 * 1024)
    tracemalloc.start()
    try:
        parts = records = longest = 0
        shapes = {}
        for part in library_add.corpus_parts(corpus, Limits(max_bytes=50 * 2**20)):
            parts += 1
            records += len(part)
            longest = max(longest, *(len(p.text) for document in part for p in document.passages))
            for document in part:
                if document.id in ("big", "d7"):
                    shapes[document.id] = [p.text for p in document.passages]
            del part
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = corpus.stat().st_size
    assert records == 60_001
    assert len(shapes["big"]) >= 2_000  # 2.3 MB of text in passages of at most MAX_CHARS
    assert " ".join(shapes["big"]) == (sentence * 40_000).strip()  # cut between sentences, nothing lost
    assert longest <= MAX_CHARS
    assert shapes["d7"] == [("Record 7. " + sentence * 3).strip()]
    assert parts > 30
    # The whole file (15 MB) never sits in this process: one part at a time, the largest being the long
    # record's 2.3 MB as passages (about 8 MB with the bytes it came in).
    assert size > 15 * 10**6
    assert peak < 10 * 2**20, (peak, size)


@pytest.mark.model
def test_library_add_with_a_bad_corpus_exits_1_naming_it(tmp_path: Path) -> None:
    """``library add bad.jsonl good.md`` exited 0: the Markdown's result overwrote the corpus's failure."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    good = tmp_path / "good.md"
    good.write_text(NOTES)
    result = run_cli("library", "add", str(bad), str(good), home=tmp_path / "home", env=_env())
    assert result.returncode == 1, result.stderr
    assert f"{bad}, line 1: not JSON" in " ".join(result.stderr.split()) or f"{bad}: line 1" in result.stderr
    assert "1 file(s) not read" in result.stderr
    assert "1 of 1 file(s) read: 1 document(s) added" in " ".join(result.stdout.split())
