"""The one redaction: every configured secret blanked out of a text before it is shown, logged or kept.

Provider and source errors may echo a request (a URL with ``api_key=``, a header), so text is redacted
where it enters (an error body, an exception's message, a log record), before anything cuts it short:
a cut made first could leave a prefix of a secret that no longer matches the whole secret. What is
serialised (events, the outcome, a run's status) goes through the redactor once more, and that second
pass also blanks what a cut made elsewhere could have left: a secret's first characters (at least
``MIN_SECRET_CHARS``) at the end of a text or just before an ellipsis, and its last characters at the
start of a text or just after one.

A secret travels in more forms than its own: percent-encoded in a query string, as the base64 of
``user:password`` in the ``Authorization: Basic`` header httpx builds from a URL's credentials, split by
a line break where a server wrapped its message (or by a space where the wrap was folded), and masked
the way providers echo a key (``sk-abc1…cdef``, ``sk-abc1****cdef``). Each is blanked: the encodings are
secrets of their own, a split one is found in the text with its whitespace removed, and a masked one is a
head before, and a tail after, the mask (``…``, ``...``, ``***``), which the cut-end pass blanks.
"""

from __future__ import annotations

import base64
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar
from urllib.parse import quote, unquote, urlsplit

from pydantic import AnyHttpUrl, BaseModel, SecretStr

from deepcritical.config import Settings

MASK = "***"
# A variable of the environment whose value is a secret, by its name: what pydantic-ai's providers (and the
# SDKs under them) read their keys from ends so (``GROQ_API_KEY``, ``HF_TOKEN``, ``HEROKU_INFERENCE_KEY``,
# ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``). Every other variable is read for the credentials of a URL it
# may hold (``OLLAMA_BASE_URL=http://user:password@…``). ``tests/test_redaction.py`` reads every variable
# pydantic-ai's providers read and checks that each is one of these, or listed in ``PROVIDER_SECRETS`` or
# ``PROVIDER_SETTINGS``.
ENVIRONMENT_SECRET_SUFFIXES = ("_API_KEY", "_TOKEN", "_KEY", "_SECRET", "_PASSWORD")
# What pydantic-ai's providers read as a secret under a name that does not end so.
PROVIDER_SECRETS = frozenset({"AWS_BEARER_TOKEN_BEDROCK"})
# What pydantic-ai's providers read that is not a secret (a region, a project, a version, a file's path): left
# alone, so that "us-east-1" or "2024-10-21" is not blanked from every message.
PROVIDER_SETTINGS = frozenset(
    {
        "AWS_CONNECT_TIMEOUT",
        "AWS_DEFAULT_REGION",
        "AWS_READ_TIMEOUT",
        "AWS_REGION",
        "AZURE_VOICELIVE_API_VERSION",
        "CLOUDFLARE_ACCOUNT_ID",
        "CODEX_HOME",
        "COLUMNS",
        "GITHUB_COPILOT_INTEGRATION_ID",
        "GOOGLE_APPLICATION_CREDENTIALS",  # the path of a credentials file, not its content
        "GOOGLE_CLOUD_LOCATION",
        "GOOGLE_CLOUD_PROJECT",
        "LOCALAPPDATA",
        "OPENAI_API_VERSION",
        "OPENROUTER_APP_TITLE",
        "SNOWFLAKE_ACCOUNT",
        "XDG_CACHE_HOME",
    }
)
# A variable named as a secret holds one from this length: "SORT_KEY=name" is not a key, and blanking "name"
# everywhere would garble every message; no provider's key is that short.
MIN_ENVIRONMENT_SECRET_CHARS = 8
# A URL's user name alone is taken for a secret from this length: a token sent as the user
# (``https://ghp_…@host``), not "admin" or "git", which would blank ordinary words.
MIN_TOKEN_USER_CHARS = 16
# Shorter values would blank ordinary words; no real key is that short.
MIN_SECRET_CHARS = 4
# What a cut leaves beside the part it kept: an ellipsis (one character or three dots), or a quote that
# closes a ``repr`` of the cut text.
# A provider's masked echo of a key (``sk-abc1****cdef``) is a cut on both sides of its asterisks.
_CUT_END = re.compile(r"…|\.\.\.|\*{3,}")
_CUT_START = re.compile(r"…|\.\.\.|\*{3,}")
ModelT = TypeVar("ModelT", bound=BaseModel)


def _unchanged(text: str) -> str:
    return text


class Redactor:
    """Replaces each secret (longest first, so a secret that contains another goes whole) with ``***``,
    then any cut-off end of one (see the module's docstring)."""

    def __init__(self, secrets: Iterable[SecretStr | str | None]) -> None:
        values: set[str] = set()
        for secret in secrets:
            value = secret.get_secret_value() if isinstance(secret, SecretStr) else secret
            if value is not None and len(value.strip()) >= MIN_SECRET_CHARS:
                values.add(value.strip())
                # A URL-encoded copy travels in query strings (``api_key=a%2Bb``).
                values.update(encoded for encoded in (_percent_encoded(value.strip()),) if encoded)
        self._secrets = sorted(values, key=len, reverse=True)

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return self._without_parts(text)

    def _without_parts(self, text: str) -> str:
        """Blank what is left of a secret after the whole ones: one broken by whitespace, and a cut end of
        one. Both are looked for in the text without its whitespace (where a broken secret is whole again,
        and a cut end is where it was), then blanked in the text from their first character to their last."""
        compact = "".join(text.split())
        suspects = [s for s in self._secrets if s[:MIN_SECRET_CHARS] in compact or s[-MIN_SECRET_CHARS:] in compact]
        if not suspects:
            return text
        spans = [(start, start + len(secret)) for secret in suspects for start in _occurrences(compact, secret)]
        spans += self._cut_ends(compact, suspects)
        if not spans:
            return text
        kept = [index for index, char in enumerate(text) if not char.isspace()]
        return _masked(text, [(kept[start], kept[end - 1] + 1) for start, end in spans])

    def _cut_ends(self, text: str, suspects: list[str]) -> list[tuple[int, int]]:
        """Where a secret's head ends where a cut did (the text's end, an ellipsis or a mask, a closing quote
        at the end) and where a secret's tail starts where one did (the text's start, an ellipsis or a mask)."""
        ends = {len(text), len(text.rstrip("'\"")), *(match.start() for match in _CUT_END.finditer(text))}
        starts = {0, *(match.end() for match in _CUT_START.finditer(text))}
        spans: list[tuple[int, int]] = []
        for secret in suspects:
            lengths = range(len(secret) - 1, MIN_SECRET_CHARS - 1, -1)
            for end in ends:
                length = next((n for n in lengths if n <= end and text.startswith(secret[:n], end - n)), 0)
                if length:
                    spans.append((end - length, end))
            for start in starts:
                length = next((n for n in lengths if text.startswith(secret[-n:], start)), 0)
                if length:
                    spans.append((start, start + length))
        return spans

    def value(self, value: Any) -> Any:
        """``value`` (a string, or lists and dicts of them, as JSON holds them) with every string redacted."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        return value

    def model(self, model: ModelT) -> ModelT:
        """A copy of a pydantic model (an event, an outcome) with every string in it redacted: the last
        pass before it is serialised."""
        if not self._secrets:
            return model
        return type(model).model_validate(self.value(model.model_dump(mode="json")))

    @classmethod
    def for_settings(cls, settings: Settings) -> Redactor:
        """Every ``SecretStr`` the settings hold, every password inside a URL they hold (with the Basic-auth
        token it makes), every variable of the environment named as a secret (``ENVIRONMENT_SECRET_SUFFIXES``:
        a pydantic-ai provider without ``DEEPCRITICAL_MODEL_API_KEY`` reads its own key from there, such as
        ``GROQ_API_KEY``, ``HF_TOKEN`` or ``HEROKU_INFERENCE_KEY``), and the credentials of a URL in any
        variable (a provider's ``*_BASE_URL``)."""
        secrets: list[SecretStr | str | None] = []
        for name, value in os.environ.items():
            if is_secret_variable(name) and len(value.strip()) >= MIN_ENVIRONMENT_SECRET_CHARS:
                secrets.append(value)
            if "@" in value:
                secrets.extend(url_secrets(value.strip()))
        for name in type(settings).model_fields:
            value = getattr(settings, name)
            if isinstance(value, SecretStr):
                secrets.append(value)
                secrets.extend(url_secrets(value.get_secret_value()))
            elif isinstance(value, AnyHttpUrl):
                secrets.extend(url_secrets(str(value)))
        for endpoint in settings.endpoints.values():
            secrets.extend(url_secrets(str(endpoint.base_url)))
        return cls(secrets)


def is_secret_variable(name: str) -> bool:
    """Whether the environment variable ``name`` holds a secret (``ENVIRONMENT_SECRET_SUFFIXES``)."""
    upper = name.upper()
    return upper in PROVIDER_SECRETS or (upper.endswith(ENVIRONMENT_SECRET_SUFFIXES) and upper not in PROVIDER_SETTINGS)


def url_secrets(url: str | None) -> list[str]:
    """The secrets a URL's credentials put on the wire: the password (or a user name long enough to be a
    token sent as the user), and the token of the ``Authorization: Basic`` header httpx sends for
    ``user:password@`` (padded and not)."""
    try:
        parts = urlsplit(url or "")
    except ValueError:
        return []
    user = unquote(parts.username or "")
    if not parts.password and len(user) < MIN_TOKEN_USER_CHARS:
        return []
    password = unquote(parts.password or "")
    pair = f"{user}:{password}"
    tokens = {
        base64.b64encode(pair.encode(encoding)).decode("ascii")
        for encoding in ("utf-8", "latin-1")
        if _fits(pair, encoding)
    }
    plain = [password] if password else [user] if len(user) >= MIN_TOKEN_USER_CHARS else []
    return [*plain, *tokens, *(token.rstrip("=") for token in tokens)]


def _fits(text: str, encoding: str) -> bool:
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def _occurrences(text: str, secret: str) -> Iterator[int]:
    start = text.find(secret)
    while start >= 0:
        yield start
        start = text.find(secret, start + 1)


def _masked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each span (merged where they touch) replaced by the mask."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    for start, end in reversed(merged):  # from the right, so the earlier spans keep their place
        text = text[:start] + MASK + text[end:]
    return text


def _percent_encoded(value: str) -> str | None:
    encoded = quote(value, safe="")
    return encoded if encoded != value else None


class RedactingFilter(logging.Filter):
    """A logging filter that redacts every record that passes it, whichever logger it comes from: the
    message with its arguments merged in, and the traceback text. Installed on the root handlers."""

    def __init__(self, redact: Callable[[str], str] = _unchanged) -> None:
        super().__init__()
        self.redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a record whose arguments do not fit its format: keep it, as text
            message = f"{record.msg} {record.args}"
        record.msg, record.args = self.redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
            record.exc_info = None  # the redacted text is what is printed, never a fresh format of it
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True
