"""A watch's alerts: its Atom feed (a file in the watch's folder, served by ``serve`` too) and its
optional webhook. An alert is sent only when something changed; a verdict change is marked as such.

The webhook's body is JSON, signed with ``X-DeepCritical-Signature: sha256=<hex>`` (HMAC-SHA256 of the
exact body bytes, keyed with ``DEEPCRITICAL_WEBHOOK_SECRET``), and retried with exponential back-off. A
webhook that keeps failing is logged, never raised: the run it reports on has already succeeded. Its host is
resolved again at each delivery and must be public (``service.webhook_target``); the request goes to the very
address checked, follows no redirect and waits a few seconds at most. The body names the run by its folder
under the server's home, never by the server's own absolute path."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import xml.etree.ElementTree as ET
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import structlog
from pydantic import SecretStr

from deepcritical.service.watch_changes import Changes
from deepcritical.service.watches import Watch, WatchRun, folder_in_home
from deepcritical.service.webhook_target import Resolver, WebhookTargetError, delivery_address, resolve_later
from deepcritical.sources.retry import RetryPolicy, retry_after_seconds
from deepcritical.text import xml_text

logger = structlog.get_logger(__name__)

ATOM = "http://www.w3.org/2005/Atom"
FEED_NAME = "feed.atom"
SIGNATURE_HEADER = "X-DeepCritical-Signature"
EVENT_HEADER = "X-DeepCritical-Event"
WEBHOOK_ATTEMPTS = 4
WEBHOOK_TIMEOUT = 5.0
# A network error or any non-2xx answer is delivered again, after the receiver's Retry-After when it gave one.
WEBHOOK_DELIVERY = RetryPolicy(
    retryable=lambda error: isinstance(error, httpx2.HTTPError),
    asked=lambda error: (
        retry_after_seconds(error.response.headers) if isinstance(error, httpx2.HTTPStatusError) else None
    ),
    timed_out=lambda error: isinstance(error, httpx2.TimeoutException),
    event="watch_webhook_retry",
    attempts=WEBHOOK_ATTEMPTS,
)
ET.register_namespace("", ATOM)


def signature(secret: SecretStr, body: bytes) -> str:
    """The header value a receiver recomputes: ``sha256=`` and the hex HMAC-SHA256 of the body."""
    digest = hmac.new(secret.get_secret_value().encode("utf-8"), body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def alert_title(watch: Watch, changes: Changes) -> str:
    kind = "Verdict changed" if changes.verdict_changed else "New evidence"
    return f"{kind}: {watch.question}"


def alert_body(watch: Watch, changes: Changes, folder: Path, home: Path) -> dict[str, Any]:
    """The webhook's JSON: which watch, what changed (``changes.json``'s content) and where the run is, as a
    folder under ``home`` (the receiver has no use for the server's own paths, which name its user)."""
    return {
        "event": "watch.verdict_changed" if changes.verdict_changed else "watch.changed",
        "watch_id": watch.id,
        "question": watch.question,
        "title": alert_title(watch, changes),
        "summary": changes.summary(),
        "run_id": folder.name,
        "folder": folder_in_home(str(folder), home),
        "changes": changes.model_dump(mode="json"),
    }


async def send_webhook(
    url: str,
    body: dict[str, Any],
    secret: SecretStr | None,
    *,
    client: httpx2.AsyncClient,
    allow_private: bool = False,
    resolve: Resolver = resolve_later,
    attempts: int = WEBHOOK_ATTEMPTS,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> bool:
    """POST ``body`` to ``url``, signed when a secret is set; retried on a network error or a non-2xx
    answer. True when delivered; False (logged) after the last attempt, or at once when the host now resolves
    to an address inside a network (unless ``allow_private``). Retried under ``WEBHOOK_DELIVERY`` (the sources'
    policy); ``resolve`` is the DNS lookup and ``sleep`` the wait (tests pass ones that touch no network and do
    not sleep)."""
    target = httpx2.URL(url)
    try:
        address = await delivery_address(url, allow_private=allow_private, resolve=resolve)
    except WebhookTargetError as error:
        logger.warning("watch_webhook_refused", host=target.host, reason=str(error))
        return False
    # Connect to the address just checked (a second lookup could answer otherwise); the Host header and TLS
    # name stay the URL's, so virtual hosts and certificates work as with the name.
    pinned = target.copy_with(host=address)
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    data = json.dumps(body, ensure_ascii=False, sort_keys=True).encode("utf-8")
    headers = {
        "Content-Type": "application/json",
        EVENT_HEADER: str(body.get("event", "watch.changed")),
        "Host": target.netloc.decode("ascii"),
    }
    if secret is not None:
        headers[SIGNATURE_HEADER] = signature(secret, data)
    else:
        logger.warning("watch_webhook_unsigned", reason="DEEPCRITICAL_WEBHOOK_SECRET is not set")
    retrying = replace(WEBHOOK_DELIVERY, attempts=attempts).retrying(sleep, host=target.host)
    try:
        async for attempt in retrying:
            with attempt:
                response = await client.post(
                    pinned,
                    content=data,
                    headers=headers,
                    timeout=WEBHOOK_TIMEOUT,
                    follow_redirects=False,
                    extensions=extensions,
                )
                response.raise_for_status()
    except httpx2.HTTPError as error:
        # The URL's host only: a webhook URL may carry a token in its path or query.
        logger.warning("watch_webhook_failed", host=target.host, attempts=attempts, error=type(error).__name__)
        return False
    return True


def _text(parent: ET.Element, tag: str, text: str, **attrib: str) -> ET.Element:
    element = ET.SubElement(parent, f"{{{ATOM}}}{tag}", {name: xml_text(value) for name, value in attrib.items()})
    element.text = xml_text(text)
    return element


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def atom_feed(watch: Watch, runs: Sequence[WatchRun], *, now: datetime) -> bytes:
    """The watch's Atom feed: one entry per run in which something changed, newest first. ElementTree
    escapes every text, and ``xml_text`` drops what XML cannot hold, so a paper's title cannot break the XML."""
    feed = ET.Element(f"{{{ATOM}}}feed")
    _text(feed, "id", f"urn:deepcritical:watch:{watch.id}")
    _text(feed, "title", f"DeepCritical watch: {watch.question}")
    changed = [run for run in runs if run.changed]
    _text(feed, "updated", _stamp(changed[-1].run_at if changed else now))
    _text(_text(feed, "author", ""), "name", "DeepCritical")
    for run in reversed(changed):
        entry = ET.SubElement(feed, f"{{{ATOM}}}entry")
        verdict_moved = any(line.startswith("VERDICT CHANGED") for line in run.summary)
        _text(entry, "id", f"urn:deepcritical:watch:{watch.id}:{_stamp(run.run_at)}")
        _text(entry, "title", ("Verdict changed: " if verdict_moved else "New evidence: ") + watch.question)
        _text(entry, "updated", _stamp(run.run_at))
        if verdict_moved:
            ET.SubElement(entry, f"{{{ATOM}}}category", {"term": "verdict-changed"})
        _text(entry, "content", "\n".join(run.summary), type="text")
    return bytes(ET.tostring(feed, encoding="utf-8", xml_declaration=True))


def write_feed(folder: Path, feed: bytes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FEED_NAME
    temporary = path.with_suffix(".tmp")
    temporary.write_bytes(feed)
    temporary.replace(path)  # a reader never sees half a feed
    return path
