"""The one reader of JSON Lines (a corpus, a batch of questions, texts to extract from, a benchmark's claims):
one JSON object a line, blank lines skipped, and a line that is not one a ConfigError naming the file and the
line ("corpus.jsonl, line 7: not JSON (Expecting value)"), which every front end shows as one line."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from deepcritical.errors import ConfigError


def json_objects(
    lines: Iterable[str | bytes], name: object, first_line: int = 1
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line of ``lines`` (of the file ``name``, from ``first_line``)."""
    number = first_line - 1
    try:
        for number, line in enumerate(lines, start=first_line):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as error:
                raise ConfigError(f"{name}, line {number}: not JSON ({error.msg})") from None
            except UnicodeDecodeError:  # a line given as bytes
                raise ConfigError(f"{name}, line {number}: not UTF-8 text") from None
            if not isinstance(value, dict):
                raise ConfigError(f"{name}, line {number}: not a JSON object")
            yield number, value
    except UnicodeDecodeError:  # a file is decoded ahead of its lines: the bad byte is after the last line read
        raise ConfigError(f"{name}: not UTF-8 text after line {number}") from None


def jsonl_file(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of each non-blank line of the JSON Lines file ``path``."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read it ({error.strerror or error})") from None
    with handle:
        yield from json_objects(handle, path)
