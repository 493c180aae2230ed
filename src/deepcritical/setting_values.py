"""The forms a setting's value takes, each with its check and its message: a blank variable is unset, a list
is comma-separated, a Redis URL names its scheme and port, a retention is a duration of at least an hour, an
API token is long enough not to be guessed. ``config.Settings`` declares its fields with them."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, AnyHttpUrl, BeforeValidator, SecretStr

from deepcritical.options import MIN_RETENTION, parse_duration

MIN_API_TOKEN_CHARS = 16


def _blank_is_unset(value: Any) -> Any:
    """``VAR=`` (as a .env template leaves it) means unset, not an empty URL or an empty key."""
    return None if isinstance(value, str) and not value.strip() else value


def _split_csv(value: Any) -> Any:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def _redis_scheme(value: SecretStr | None) -> SecretStr | None:
    if value is None:
        return value
    parts = urlsplit(value.get_secret_value())
    if parts.scheme not in ("redis", "rediss", "unix"):
        raise ValueError("expected a redis://, rediss:// or unix:// URL, e.g. redis://127.0.0.1:6379/0")
    try:
        parts.port  # noqa: B018 - parsed here, once, rather than as a traceback in each worker
    except ValueError:
        raise ValueError("the port must be a number from 0 to 65535, e.g. redis://127.0.0.1:6379/0") from None
    return value


def _duration(value: Any) -> Any:
    return parse_duration(value) if isinstance(value, str) else value


def _outlasts_a_run(value: timedelta | None) -> timedelta | None:
    # Applied at every start: shorter than a run could take a running run's collection away.
    if value is not None and value < MIN_RETENTION:
        raise ValueError("keep run collections at least 1h (or 'never')")
    return value


def _long_enough(value: SecretStr | None) -> SecretStr | None:
    # A short bearer token can be guessed by trying; 16 characters of a random token are not.
    if value is not None and len(value.get_secret_value()) < MIN_API_TOKEN_CHARS:
        raise ValueError(f"use at least {MIN_API_TOKEN_CHARS} characters (e.g. the output of `openssl rand -hex 16`)")
    return value


BLANK_IS_UNSET = BeforeValidator(_blank_is_unset)
TextOrUnset = Annotated[str | None, BLANK_IS_UNSET]
SecretOrUnset = Annotated[SecretStr | None, BLANK_IS_UNSET]
UrlOrUnset = Annotated[AnyHttpUrl | None, BLANK_IS_UNSET]
DateOrUnset = Annotated[date | None, BLANK_IS_UNSET]
# A list from one variable, ``a, b,c`` (beside NoDecode, so that pydantic-settings does not read it as JSON).
SPLIT_COMMAS = BeforeValidator(_split_csv)
RedisUrl = Annotated[SecretStr | None, BLANK_IS_UNSET, AfterValidator(_redis_scheme)]
Retention = Annotated[timedelta | None, BeforeValidator(_duration), AfterValidator(_outlasts_a_run)]
ApiToken = Annotated[SecretStr | None, BLANK_IS_UNSET, AfterValidator(_long_enough)]
