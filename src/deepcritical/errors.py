"""The project's exceptions: every failure a caller should handle derives from DeepCriticalError."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from typing import Any, Self
from urllib.parse import urlsplit, urlunsplit


class DeepCriticalError(Exception):
    """Base class for every error DeepCritical raises on purpose."""


class ConfigError(DeepCriticalError):
    """The configuration is invalid; the message names the variable to fix."""


class MissingKeyError(ConfigError):
    """A live model's API key is not set; the message names the variable to set."""


class SearchError(DeepCriticalError):
    """A search source failed: unreachable, timed out, or answered something unusable.

    ``reason`` says what happened, ``source`` which source it happened to; the text of the error is
    ``"source: reason"``, written here only (the handler keeps the two apart, as a ``SourceFailure``)."""

    def __init__(self, reason: str, *, source: str | None = None) -> None:
        super().__init__(f"{source}: {reason}" if source else reason)
        self.reason = reason
        self.source = source

    def restated(self, reason: str, *, source: str) -> Self:
        """The same failure (same class, same attributes) with another reason, attributed to ``source``."""
        clone = copy.copy(self)
        clone.reason, clone.source = reason, source
        clone.args = (f"{source}: {reason}",)
        return clone


class SourceHTTPError(SearchError):
    """A source answered with an HTTP error status that retrying did not cure; ``status`` says which, so a
    source can explain what that status means for it (ClinicalTrials.gov's 403, for example)."""

    def __init__(self, reason: str, status: int = 0, *, source: str | None = None) -> None:
        super().__init__(reason, source=source)
        self.status = status


class RateLimitError(SearchError):
    """A search source kept refusing with HTTP 429 after the retries ran out, or asked for a longer wait
    than a search can give."""


class UnusableResponseError(SearchError):
    """A source answered with something that usually passes when asked again: a maintenance page instead
    of data, an empty or cut-off body. Retried with back-off before it fails a search."""


class ResponseTooLargeError(SearchError):
    """A source sent a body over the size a search reads (``sources.base.MAX_BODY_BYTES``)."""


class SourceDisabledError(SearchError):
    """A source cannot run with the current configuration (for example no base URL)."""


class EmbeddingError(DeepCriticalError):
    """The embedding model could not be loaded or could not embed the given text."""


class StoreError(DeepCriticalError):
    """The evidence store could not be opened, written or read."""


class DiskFullError(StoreError):
    """The evidence store could not be written because its disk (or the user's quota) is full: not a failure
    of the run's work, which stops where it is, its last checkpoint kept, to be resumed once there is space."""


class ResearchError(DeepCriticalError):
    """A research run could not produce a result (for example the LLM kept failing)."""


class DocumentError(DeepCriticalError):
    """A file could not be read as a document: unknown or broken format, over a limit, or no text."""


def without_credentials(url: str) -> str:
    """``https://user:pass@host/x`` as ``https://host/x``."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


# A value shown in a configuration error keeps no URL credentials (``https://user:pass@host``), up to the
# last ``@``: a password typed with an unencoded ``/`` or ``@`` in it goes too.
_CREDENTIALS = re.compile(r"//.*@")


def describe_invalid(
    errors: Iterable[Mapping[str, Any]], flags: Mapping[str, str], secret_variables: frozenset[str]
) -> str:
    """A settings validation's errors in one line (a ``ConfigError``'s text), each named by its flag, else its
    variable; the value is shown without URL credentials, and never for a key, a token or a secret variable."""
    lines = []
    for item in errors:
        variable = ".".join(str(part) for part in item["loc"][:1]) or "settings"
        variable = flags.get(variable, variable)
        value = item.get("input")
        secret = "key" in variable.lower() or "token" in variable.lower() or variable in secret_variables
        shown = "" if isinstance(value, dict) or secret else f" (got {_CREDENTIALS.sub('//***@', repr(value))})"
        lines.append(f"{variable}: {item['msg']}{shown}")
    return "; ".join(lines)
