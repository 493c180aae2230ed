"""The report as HTML for the page: a finished run's folder has its report as a document (``report.json``),
which ``report.html`` writes as HTML beside the Markdown writer (``report.md``), so both say the same. A folder
written by an earlier version without a document is brought to this one by ``deepcritical runs upgrade``."""

from __future__ import annotations

from pathlib import Path

import structlog
from markupsafe import Markup
from pydantic import ValidationError

from deepcritical.report.document import REPORT_DOCUMENT_FILE, ReportDocument
from deepcritical.report.html import to_html

logger = structlog.get_logger(__name__)
UPGRADE = Markup(
    "<p>This run's folder was written by an earlier version of DeepCritical and has no report document. "
    "Run <code>deepcritical runs upgrade</code> to show its report here; its <code>report.md</code> is "
    "unchanged.</p>"
)


def folder_report_html(folder: Path, files: str | None = None) -> str:
    """The HTML of the report in a finished run's folder (``files``: where the run's files are served, for its
    figure links), or a note saying how to upgrade a folder without a readable document."""
    path = folder / REPORT_DOCUMENT_FILE
    try:
        return to_html(ReportDocument.model_validate_json(path.read_bytes()), files)
    except FileNotFoundError:
        return str(UPGRADE)
    except ValidationError as error:
        logger.warning("report_document_unreadable", run=folder.name, errors=error.error_count())
        return str(UPGRADE)
