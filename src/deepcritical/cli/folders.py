"""Whether a folder a command will write can be written, checked before anything heavy loads (the server's
runs folder, a run's ``--out``): the standard library only."""

from __future__ import annotations

import tempfile
from pathlib import Path

from deepcritical.errors import ConfigError


def ensure_writable(directory: Path, what: str = "--out") -> None:
    """Fail before the run, not after it, when its outputs could not be written."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as error:
        raise ConfigError(f"{what} {directory}: cannot write there ({error.strerror or error})") from error
