"""Files into documents: the format chosen by extension (and, for .xml and .json, by content), each file
read under limits (size, pages, parse time) in a separate worker process, hashed, and split into passages.

A file is untrusted input (a PDF especially: PDFium is C++). Parsing happens in a worker process with a
memory ceiling, so a file that hangs the parser or exhausts memory costs that worker, not the caller: the
worker is ended at the time limit and a new one takes the next file. A file that cannot be read gives
one line (which file, why); the others go on.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import multiprocessing.pool
import resource
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from deepcritical.config import Settings
from deepcritical.documents import bioc, jats, pdf, references, text
from deepcritical.documents.model import Document, DocumentFormat, ParsedDocument
from deepcritical.documents.passages import split
from deepcritical.errors import DeepCriticalError, DocumentError

T = TypeVar("T")

EXTENSIONS: dict[str, DocumentFormat | None] = {
    ".pdf": "pdf",
    ".nxml": "jats",
    ".xml": None,  # JATS or BioC, by the root element
    ".json": None,  # BioC or CSL-JSON, by its keys
    ".ris": "ris",
    ".bib": "bibtex",
    ".bibtex": "bibtex",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
}
SUPPORTED = ", ".join(sorted(EXTENSIONS))
HASH_PREFIX_CHARS = 16
# A RIS export is parsed and stored this many records at a time: each part is one store batch or two, and
# the parse time limit holds for a part, so a 20,000-record export is never near it.
RIS_PART_RECORDS = 250
_TOO_DEEP = "nested too deeply to read (a hostile or broken file); not read"


@dataclass(frozen=True)
class Limits:
    """How much of an untrusted file is read: bytes, pages (PDF), parse seconds, worker memory."""

    max_bytes: int = 50 * 1024 * 1024
    max_pages: int = 1000
    max_seconds: float = 60.0
    max_memory_bytes: int = 2 * 1024 * 1024 * 1024


def limits_from(settings: Settings) -> Limits:
    """The limits the settings set (DEEPCRITICAL_LIBRARY_MAX_FILE_MB, _MAX_PAGES, _PARSE_SECONDS)."""
    return Limits(
        max_bytes=int(settings.library_max_file_mb * 2**20),
        max_pages=settings.library_max_pages,
        max_seconds=settings.library_parse_seconds,
    )


def too_large(size: int, limits: Limits) -> DocumentError:
    return DocumentError(
        f"{size / 2**20:.1f} MB, more than the limit of {limits.max_bytes / 2**20:.3g} MB "
        "(DEEPCRITICAL_LIBRARY_MAX_FILE_MB)"
    )


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sniffed_format(suffix: str, data: bytes) -> DocumentFormat:
    """The format of a .xml or .json file from its content; others from the extension."""
    known = EXTENSIONS.get(suffix.lower())
    if known is not None:
        return known
    head = data[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if suffix.lower() == ".xml":
        if b"<collection" in head and b"<article" not in head:
            return "bioc"
        if b"<article" in head or b"<pmc-articleset" in head or b"JATS" in head:
            return "jats"
        raise DocumentError("XML that is neither a JATS article nor a BioC collection")
    if suffix.lower() == ".json":
        return "bioc" if b'"documents"' in data and b'"passages"' in data else "csljson"
    raise DocumentError(f"unsupported file type {suffix or '(no extension)'}; supported: {SUPPORTED}")


def parse_bytes(form: DocumentFormat, data: bytes, limits: Limits) -> list[ParsedDocument]:
    """The documents in ``data`` read as ``form`` (runs in the worker process)."""
    if form == "pdf":
        return [pdf.parse_pdf(data, max_pages=limits.max_pages, max_seconds=limits.max_seconds)]
    if form == "jats":
        return [jats.parse_jats(data)]
    if form == "bioc":
        return bioc.parse_bioc(data)
    if form == "ris":
        return references.parse_ris(data)
    if form == "bibtex":
        return references.parse_bibtex(data)
    if form == "csljson":
        return references.parse_csljson(data)
    if form == "markdown":
        return [text.parse_markdown(data)]
    if form == "html":
        return [text.parse_html(data)]
    return [text.parse_text(data)]


def _limit_memory(max_bytes: int) -> None:
    """The worker's address-space ceiling: a file that would take more fails with MemoryError there."""
    resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))


def _ready() -> bool:
    return True


class ParserWorker:
    """One worker process that parses files, replaced when a file overruns the time limit."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._pool: multiprocessing.pool.Pool | None = None

    def _started(self) -> multiprocessing.pool.Pool:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")  # no copy of the caller's threads or open stores
            self._pool = context.Pool(1, initializer=_limit_memory, initargs=(self.limits.max_memory_bytes,))
            # The worker imports the parsers before its first file, so the first file's clock is its own.
            self._pool.apply(_ready)
        return self._pool

    def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in the worker, within ``limits.max_seconds``."""
        return self.submit(function, *args)()

    def submit(self, function: Callable[..., T], *args: Any) -> Callable[[], T]:
        """``function(*args)`` started in the worker now; the returned call waits for its result, at most
        until ``limits.max_seconds`` after now (the caller does other work meanwhile: a RIS export's next
        part is parsed while the part before is stored)."""
        pending = self._started().apply_async(function, args)
        deadline = time.monotonic() + self.limits.max_seconds
        return lambda: self._result(pending, deadline)

    def _result(self, pending: multiprocessing.pool.AsyncResult[T], deadline: float) -> T:
        try:
            return pending.get(timeout=max(0.0, deadline - time.monotonic()))
        except multiprocessing.TimeoutError:
            self.close()
            raise DocumentError(
                f"reading took longer than {self.limits.max_seconds:g} s (DEEPCRITICAL_LIBRARY_PARSE_SECONDS); stopped"
            ) from None
        except MemoryError:
            raise DocumentError(
                f"reading needed more than {self.limits.max_memory_bytes / 2**20:.0f} MB of memory; stopped"
            ) from None
        except RecursionError:  # a JSON or BibTeX file nested thousands deep: this file only, not the add
            raise DocumentError(_TOO_DEEP) from None
        except DeepCriticalError:
            raise
        except Exception as error:  # a third-party parser's own failure on hostile input: this file only
            raise DocumentError(f"the parser failed on it ({type(error).__name__}); not read") from None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def __enter__(self) -> ParserWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class FileResult:
    """What one file gave: its documents, or the one reason it gave none."""

    path: Path
    content_hash: str | None = None
    documents: list[Document] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0

    @property
    def line(self) -> str:
        """The file's one line for the user when it failed."""
        return f"{self.path}: {self.error}"


def build_documents(
    parsed: Sequence[ParsedDocument],
    file_hash: str,
    source_path: str | None,
    *,
    single: bool | None = None,
    by_path: bool = True,
) -> list[Document]:
    """Parsed documents with identities and passages. A document is identified by its PMID, DOI or PMCID;
    without one, a file of one document by its path (within its collection), so an edited file replaces
    its passages rather than being added beside them; a record of a multi-record file (a RIS export) by its
    own content's hash, so re-exporting the library with one more record leaves the others unchanged; a
    text without a path (a fetched article), or whose path names no one file (``by_path`` False: an upload's
    bare name, which two different papers may share), by its hash. ``single`` says whether the file holds one
    document (None: ``parsed`` is the whole file); a part of a RIS export is never a single document."""
    documents = []
    single = len(parsed) == 1 if single is None else single
    for record in parsed:
        record_hash = file_hash if single else content_hash(record.model_dump_json().encode())
        key = content_hash(source_path.encode()) if source_path and single and by_path else record_hash
        identity = record.identity or f"file:{key[:HASH_PREFIX_CHARS]}"
        # The title heads every passage's indexed text already; alone it is a passage only when it is all there is.
        blocks = [block for block in record.blocks if block.kind != "title"] or list(record.blocks)
        full, passages = split(identity, blocks)
        documents.append(
            Document(
                id=identity,
                content_hash=record_hash,
                source_path=source_path,
                format=record.format,
                meta=record.meta,
                text=full,
                passages=tuple(passages),
                references=record.references,
                pages=record.pages,
                full_text=record.full_text,
            )
        )
    return documents


def read_bytes(
    data: bytes,
    *,
    suffix: str,
    limits: Limits,
    worker: ParserWorker | None = None,
    source_path: str | None = None,
    by_path: bool = True,
) -> list[Document]:
    """The documents in ``data`` (a file's bytes, an upload, a fetched article); raises DocumentError.
    ``by_path``: see ``build_documents``."""
    form = _checked_format(data, suffix, limits)
    parsed = _parse(form, data, limits, worker)()
    if not parsed:
        raise DocumentError(f"no records with a title or text in this {form} file")
    return build_documents(parsed, content_hash(data), source_path, by_path=by_path)


def _checked_format(data: bytes, suffix: str, limits: Limits) -> DocumentFormat:
    if len(data) > limits.max_bytes:
        raise too_large(len(data), limits)
    if not data.strip():
        raise DocumentError("the file is empty")
    return sniffed_format(suffix, data)


def _parse(
    form: DocumentFormat, data: bytes, limits: Limits, worker: ParserWorker | None
) -> Callable[[], list[ParsedDocument]]:
    """``data`` parsed in the worker (started now, waited for by the returned call), or here without one."""
    if worker is not None:
        return worker.submit(parse_bytes, form, data, limits)

    def here() -> list[ParsedDocument]:
        try:
            return parse_bytes(form, data, limits)
        except RecursionError:
            raise DocumentError(_TOO_DEEP) from None

    return here


def _file_parts(
    result: FileResult, limits: Limits, worker: ParserWorker | None, on_total: Callable[[int], None]
) -> Iterator[list[Document]]:
    """A file's documents, part by part: a RIS export in parts of ``RIS_PART_RECORDS`` records, the next part
    parsed in the worker while the caller stores the one before; any other file in one part. Raises
    DocumentError or OSError, after the parts that could be read."""
    path = result.path
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise too_large(size, limits)
    data = path.read_bytes()
    form = _checked_format(data, path.suffix, limits)
    spans = references.ris_parts(data, RIS_PART_RECORDS) if form == "ris" else [(0, len(data))]
    on_total(references.ris_records(data) if form == "ris" else 0)
    file_hash = result.content_hash = content_hash(data)
    # The real path: ``notes.md``, ``./notes.md`` and its absolute path are one file, one document.
    source = str(path.resolve())
    pending = _parse(form, data[slice(*spans[0])], limits, worker)
    given = 0
    for position in range(len(spans)):
        try:
            parsed = pending()
        except DocumentError as error:
            raise DocumentError(f"stopped after {given} records: {error}" if given else str(error)) from None
        if position + 1 < len(spans):
            pending = _parse(form, data[slice(*spans[position + 1])], limits, worker)
        if parsed:
            given += len(parsed)
            yield build_documents(parsed, file_hash, source, single=None if len(spans) == 1 else False)
    if not given:
        raise DocumentError(f"no records with a title or text in this {form} file")


def stream_file(
    path: Path,
    limits: Limits,
    worker: ParserWorker | None,
    take: Callable[[list[Document]], None],
    on_total: Callable[[int], None] = lambda _total: None,
) -> FileResult:
    """One file read part by part, each part handed to ``take`` as soon as it is read (a 20,000-record RIS
    export is stored while it is read, never held whole); ``on_total`` gets the records a RIS export
    announces. Never raises for a bad file: a part that cannot be read ends the file with its reason,
    the parts before it taken. What ``take`` raises (the store's errors) is the caller's."""
    started = time.monotonic()
    result = FileResult(path=path)
    parts = _file_parts(result, limits, worker, on_total)
    while True:
        try:
            part = next(parts)
        except StopIteration:
            break
        except DocumentError as error:
            result.error = str(error)
            break
        except OSError as error:
            result.error = f"cannot read the file ({error.strerror or error})"
            break
        take(part)
    result.seconds = time.monotonic() - started
    return result


def read_file(path: Path, limits: Limits, worker: ParserWorker | None = None) -> FileResult:
    """One file read into documents, or the reason it could not be (and then no documents); never raises
    for a bad file."""
    documents: list[Document] = []
    result = stream_file(path, limits, worker, documents.extend)
    result.documents = documents if result.error is None else []
    return result


def files_under(paths: Iterable[Path]) -> tuple[list[Path], list[FileResult]]:
    """The files to read: each given file, and every file of a supported type under each given folder
    (recursively, hidden files and folders left out), in a stable order; and a result line for each given
    path that does not exist or is a file of an unsupported type."""
    found: list[Path] = []
    refused: list[FileResult] = []
    for given in paths:
        if given.is_dir():
            found.extend(
                sorted(
                    path
                    for path in given.rglob("*")
                    if path.is_file()
                    and path.suffix.lower() in EXTENSIONS
                    and not any(part.startswith(".") for part in path.relative_to(given).parts)
                )
            )
        elif given.is_file():
            if given.suffix.lower() in EXTENSIONS:
                found.append(given)
            else:
                refused.append(FileResult(path=given, error=f"unsupported file type; supported: {SUPPORTED}"))
        else:
            refused.append(FileResult(path=given, error="no such file or folder"))
    return list(dict.fromkeys(found)), refused


def read_files(paths: Sequence[Path], limits: Limits) -> Iterator[FileResult]:
    """Each file's result in turn, all parsed in one worker process."""
    with ParserWorker(limits) as worker:
        for path in paths:
            yield read_file(path, limits, worker)
