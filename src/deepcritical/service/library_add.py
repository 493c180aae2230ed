"""Adding files to a library collection, for every front end (``library add``, the API's upload, the MCP tool),
on the process's resources (its settings' limits, its embedding service, its store connection): files and
folders read in a worker process under the settings' limits, each document stored with its passages
(``evidence.document_files``), one line for each file that could not be read."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from deepcritical.documents import reader
from deepcritical.documents.model import Document
from deepcritical.documents.passages import MAX_CHARS
from deepcritical.documents.reader import (
    FileResult,
    Limits,
    ParserWorker,
    files_under,
    limits_from,
    read_bytes,
    stream_file,
    too_large,
)
from deepcritical.errors import DocumentError
from deepcritical.evidence import EmbeddingService, chroma, documents
from deepcritical.evidence.document_files import (
    WRITE_PASSAGES,
    Added,
    add_file_documents,
    drop_stale,
    holds_file,
)
from deepcritical.evidence.pending import count_pending, embed_pending
from deepcritical.evidence.resources import Resources
from deepcritical.jsonl import json_objects
from deepcritical.sources.fulltext import document_grade

HARD_LINK = "a hard link (it may name a file outside); not read"
# When passages get their vectors: ``now``, as they are stored (the add waits for the embedding model);
# ``later``, never during the add (``library embed`` does it); ``auto``, later for a large export (more
# records than one part, or a part of more passages than one write: see ``evidence.pending`` for why), now
# for everything else (a paper, a small export), so that what a user adds by hand is found by meaning at once.
EmbedWhen = Literal["auto", "now", "later"]
EMBED_WHEN: tuple[EmbedWhen, ...] = ("auto", "now", "later")


@dataclass
class AddSummary:
    """What adding files did."""

    files: int = 0
    read: int = 0
    added: int = 0
    replaced: int = 0
    unchanged: int = 0
    passages: int = 0
    pending: int = 0  # passages of the added files without their vector yet, this add's or an earlier one's
    failures: list[str] = field(default_factory=list)  # one line per file: "PATH: reason"

    @property
    def line(self) -> str:
        return (
            f"{self.read} of {self.files} file(s) read: {self.added} document(s) added, {self.replaced} updated, "
            f"{self.unchanged} unchanged; {self.passages} passage(s) written"
            + (f"; {self.pending} passage(s) not embedded yet" if self.pending else "")
        )


def add_paths(
    paths: Sequence[Path],
    resources: Resources,
    name: str,
    *,
    on_file: Callable[[FileResult], None] = lambda _result: None,
    on_start: Callable[[int], None] = lambda _total: None,
    on_records: Callable[[Path, int, int], None] = lambda _path, _done, _total: None,
    within: Path | None = None,
    embed: EmbedWhen = "auto",
    on_embedded: Callable[[int, int], None] = lambda _done, _total: None,
) -> AddSummary:
    """Read every file under ``paths`` into the collection ``name``; never raises for a bad file. With
    ``within``, a file whose real path (links followed) lies outside that folder is refused, unread, and so
    is a hard link (a second name of a file, which may lie anywhere on the same disk). ``on_records(path,
    stored, total)`` follows a file's records as they are stored (``total``: what a RIS export announces,
    else what is known so far). ``embed`` says when passages get their vectors (``EmbedWhen``); with ``now``, the
    add also embeds what an earlier add of the same files left pending, ``on_embedded(done, total)`` following
    it."""
    files, refused = files_under(paths)
    if within is not None:
        root = within.resolve()
        outside = [path for path in files if not path.resolve().is_relative_to(root)]
        refused += [FileResult(path=path, error="outside the library folder; not read") for path in outside]
        # A hard link has no one real path: its other name may be a file outside the folder.
        linked = [path for path in files if path not in outside and _hard_linked(path)]
        refused += [FileResult(path=path, error=HARD_LINK) for path in linked]
        files = [path for path in files if path not in outside and path not in linked]
    summary = AddSummary(files=len(files) + len(refused), failures=[result.line for result in refused])
    on_start(summary.files)
    for result in refused:
        on_file(result)
    connection, embeddings = resources.connection(), resources.embeddings
    with ParserWorker(limits_from(resources.settings)) as worker:
        for path in files:
            result = _add_file(path, worker, connection, embeddings, name, summary, on_records, embed)
            if result.error is not None:
                summary.failures.append(result.line)
            else:
                summary.read += 1
            on_file(result)
    read = [str(path.resolve()) for path in files]
    if read and embed == "now":
        embed_pending(connection, embeddings, name, source_paths=read, on_progress=on_embedded)
    # Counted in the store: a file added again after a stopped add has passages waiting that this add found
    # unchanged.
    summary.pending = count_pending(connection, name, read) if read else 0
    return summary


def _add_file(
    path: Path,
    worker: ParserWorker,
    connection: chroma.Connection,
    embeddings: EmbeddingService,
    name: str,
    summary: AddSummary,
    on_records: Callable[[Path, int, int], None],
    embed: EmbedWhen,
) -> FileResult:
    """One file stored part by part as it is read (``reader.stream_file``): each part's batches are written
    before the next part is taken, so an add that stops (an error, Ctrl+C, a killed process) keeps what it
    wrote, and adding the file again finds those records unchanged. A record given twice is counted once
    and keeps its last version."""
    kinds: dict[str, Added] = {}
    total = 0
    # A file never added before has nothing stale: reading back its 36,000 passages' metadata cost a 20,000-record
    # export 7% of its add.
    added_before = holds_file(connection, name, str(path.resolve()))

    def announced(count: int) -> None:
        nonlocal total
        total = count

    def take(part: list[Document]) -> None:
        now = embeds_now(embed, max(total, len(part)), part)
        outcome = add_file_documents(connection, embeddings, name, part, document_grade, whole_file=False, embed=now)
        for document in {document.id: document for document in part}.values():
            kind = kinds.setdefault(document.id, outcome[document.id])
            if kind == outcome[document.id] and kind != "unchanged":
                summary.passages += len(document.passages)
        on_records(path, len(kinds), max(total, len(kinds)))

    result = stream_file(path, worker.limits, worker, take, announced)
    for kind in kinds.values():
        setattr(summary, kind, getattr(summary, kind) + 1)
    if result.error is None and kinds and added_before:
        drop_stale(connection, name, str(path.resolve()), kinds)
    return result


def embeds_now(embed: EmbedWhen, records: int, part: Sequence[Document]) -> bool:
    """Whether ``part`` (of a file of ``records`` records) is embedded as it is stored (``EmbedWhen``)."""
    large = records > reader.RIS_PART_RECORDS or sum(len(document.passages) for document in part) > WRITE_PASSAGES
    return embed == "now" or (embed == "auto" and not large)


def _hard_linked(path: Path) -> bool:
    try:
        return path.stat().st_nlink > 1
    except OSError:
        return False  # gone: reading it gives its own one line


def add_upload(data: bytes, filename: str, resources: Resources, name: str) -> list[tuple[Document, Added, bool]]:
    """One uploaded file's documents, read in a worker process under the settings' limits and stored, each with
    what happened to it and whether it was embedded (a large export is not: ``embeds_now``, ``library embed``);
    raises DocumentError (the file's one reason) when it cannot be read. An upload's name is a bare name that
    another paper may share ("fulltext.md"): a document without a PMID, DOI or PMCID is identified by its
    content's hash, the name kept to show, and an upload never drops what another upload of that name stored."""
    limits = limits_from(resources.settings)
    with ParserWorker(limits) as worker:
        documents = read_bytes(
            data, suffix=Path(filename).suffix, limits=limits, worker=worker, source_path=filename, by_path=False
        )
    now = embeds_now("auto", len(documents), documents)
    outcome = add_file_documents(
        resources.connection(), resources.embeddings, name, documents, document_grade, whole_file=False, embed=now
    )
    return [(document, outcome[document.id], now) for document in documents]


# A corpus is read in parts of about this many bytes of whole lines (a longer line is a part alone): the add
# holds one part's documents at a time, whatever the file's size.
CORPUS_PART_BYTES = 4 * 2**20
_SCAN_BYTES = 2**20


def corpus_parts(path: Path, limits: Limits) -> Iterator[list[documents.Document]]:
    """A JSON Lines corpus (``library add corpus.jsonl``) read under the limits every other file is read
    under, part by part: its size first, then each part's lines parsed in the parser worker (memory ceiling,
    time limit) into documents whose text is cut into passages as every other format's is. This process only
    finds where lines end, holding nothing; a 46 MB record costs the worker, and arrives as passages. Raises
    DocumentError or ConfigError (the file's one reason, a line's number with it) as the part is read: the
    parts before it are the caller's already."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise DocumentError(f"cannot read the file ({error.strerror or error})") from None
    if size > limits.max_bytes:
        raise too_large(size, limits)
    with ParserWorker(limits) as worker:
        for start, end, first_line in _line_parts(path, CORPUS_PART_BYTES):
            yield worker.run(_corpus_part, str(path), start, end, first_line)


def _line_parts(path: Path, part_bytes: int) -> Iterator[tuple[int, int, int]]:
    """(start, end, number of the first line) of consecutive runs of whole lines, each about ``part_bytes``,
    read in blocks: no line is held."""
    start = position = 0
    line = first_line = 1
    with path.open("rb") as handle:
        while block := handle.read(_SCAN_BYTES):
            at = 0
            while (newline := block.find(b"\n", at)) >= 0:
                at = newline + 1
                line += 1
                if position + at - start >= part_bytes:
                    yield start, position + at, first_line
                    start, first_line = position + at, line
            position += len(block)
    if position > start:
        yield start, position, first_line


def _corpus_part(path: str, start: int, end: int, first_line: int) -> list[documents.Document]:
    """Runs in the parser worker: the documents of the lines between two offsets."""
    with open(path, "rb") as handle:
        handle.seek(start)
        data = handle.read(end - start)
    return [
        documents.corpus_record(record, Path(path), number, max_chars=MAX_CHARS)
        for number, record in json_objects(data.split(b"\n"), path, first_line)
    ]
