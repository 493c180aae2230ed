"""The formats a finished report is written in: each module of this package defines ``WRITER``, a
``DocumentWriter``, and is found by ``document_writers``, so a new format is one file here. ``deepcritical
export --format NAME`` writes any of them from a run folder's ``report.json``."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Protocol, runtime_checkable

from deepcritical.report.document import ReportDocument


@runtime_checkable
class DocumentWriter(Protocol):
    """Writes a report document as one format's text."""

    @property
    def name(self) -> str:
        """What ``--format`` calls it: "markdown"."""

    @property
    def suffix(self) -> str:
        """Its file's ending: ".md"."""

    @property
    def media_type(self) -> str:
        """What it is served as: "text/markdown; charset=utf-8"."""

    def write(self, document: ReportDocument) -> str:
        """The document in this format; every text run escaped as the format requires."""


def document_writers() -> dict[str, DocumentWriter]:
    """Every format of this package, by name."""
    writers: dict[str, DocumentWriter] = {}
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda found: found.name):
        writer = getattr(importlib.import_module(f"{__name__}.{module.name}"), "WRITER", None)
        if not isinstance(writer, DocumentWriter):
            raise TypeError(f"{__name__}.{module.name} defines no WRITER with a name, suffix, media type and write")
        writers[writer.name] = writer
    return writers
