"""The one redaction: every configured secret blanked out of a text before it is shown, logged or kept.
Provider and source errors may echo a request (a URL with ``api_key=``, a header), so any text that
leaves the process goes through a ``Redactor`` first, and before it is cut short, so a cut can never
leave a prefix of a secret behind."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import SecretStr

from deepcritical.config import Settings

MASK = "***"
# Shorter values would blank ordinary words; no real key is that short.
MIN_SECRET_CHARS = 4


class Redactor:
    """Replaces each secret (longest first, so a secret that contains another goes whole) with ``***``."""

    def __init__(self, secrets: Iterable[SecretStr | str | None]) -> None:
        values: set[str] = set()
        for secret in secrets:
            value = secret.get_secret_value() if isinstance(secret, SecretStr) else secret
            if value is not None and len(value.strip()) >= MIN_SECRET_CHARS:
                values.add(value.strip())
        self._secrets = sorted(values, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text

    @classmethod
    def for_settings(cls, settings: Settings) -> Redactor:
        """Every ``SecretStr`` the settings hold."""
        return cls(
            value for name in type(settings).model_fields if isinstance(value := getattr(settings, name), SecretStr)
        )
