"""The values the settings and the command line share, importable without pydantic: the command line
declares its options with these at import, and ``deepcritical --help`` must not pay for the settings
model (pydantic-settings) it never reads."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Literal

# The sources by name, the default ones and every one: from the source table (which imports nothing).
from deepcritical.source_table import ALL_SOURCES as ALL_SOURCES
from deepcritical.source_table import KNOWN_SOURCES as KNOWN_SOURCES
from deepcritical.source_table import SourceName as SourceName

TimeRange = Literal["day", "week", "month", "year"]
OutputMode = Literal["auto", "tool", "native", "prompted"]
EmbeddingBackend = Literal["auto", "onnx", "onnx-int8", "torch"]
# The model a live run asks unless DEEPCRITICAL_MODEL names another: one its provider serves without a
# deprecation in pydantic-ai's profile (tests/agents/test_llm.py fails the day it gets one). Here, not in
# config.py, so that --help reads it without loading the settings.
DEFAULT_MODEL = "google:gemini-3.5-flash-lite"
# The result reader a run reads its studies with (``reading.results``): linear by default (phases/16_result_reader.md).
ReaderName = Literal["linear", "transformer"]
_DURATION = re.compile(r"(?P<amount>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>s|m|h|d|w)")
_DURATION_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_NEVER = frozenset({"never", "off", "none", "0"})
MIN_RETENTION = timedelta(hours=1)
MAX_DURATION_DAYS = timedelta.max.days


def parse_duration(text: str) -> timedelta | None:
    """``30d``, ``12h``, ``90m``, ``2w``, ``45s`` as a timedelta; ``never``/``off``/``0`` as None (keep
    forever). Anything else raises ValueError naming the accepted forms."""
    value = text.strip().lower()
    if value in _NEVER:
        return None
    match = _DURATION.fullmatch(value)
    if match is None:
        raise ValueError("expected a duration such as 30d, 12h, 90m, 2w, or 'never'")
    try:
        return timedelta(**{_DURATION_UNITS[match["unit"]]: float(match["amount"])})
    except OverflowError:  # beyond timedelta's range (about 2.7 million years)
        raise ValueError(f"too long: at most {MAX_DURATION_DAYS} days") from None
