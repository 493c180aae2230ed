"""The webhook: signed, retried with back-off, and a failure is logged, never raised; the feed escapes
what papers say."""

from __future__ import annotations

import hashlib
import hmac
import json
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

import httpx2
from pydantic import SecretStr
from structlog.testing import capture_logs

from deepcritical.service.watch_alerts import SIGNATURE_HEADER, atom_feed, send_webhook
from deepcritical.service.watches import Watch, WatchOptions, WatchRun

URL = "https://hooks.example.org/deepcritical?token=abc123"


async def no_sleep(seconds: float) -> None:
    return None


async def public(host: str, port: int) -> list[str]:
    """The receiver's name resolves to a public address (no DNS lookup in a test)."""
    return ["93.184.215.14"]


async def test_a_webhook_is_retried_until_it_answers_and_signed_each_time() -> None:
    seen: list[httpx2.Request] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request)
        return httpx2.Response(503 if len(seen) < 3 else 200)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handle)) as client:
        delivered = await send_webhook(
            URL,
            {"event": "watch.changed", "n": 1},
            SecretStr("s3cret"),
            client=client,
            resolve=public,
            sleep=no_sleep,
        )
    assert delivered
    assert len(seen) == 3
    body = seen[-1].content
    assert json.loads(body) == {"event": "watch.changed", "n": 1}
    expected = hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert {request.headers[SIGNATURE_HEADER] for request in seen} == {f"sha256={expected}"}


async def test_an_unreachable_webhook_is_logged_after_its_attempts_and_never_raises() -> None:
    attempts = 0

    def refuse(request: httpx2.Request) -> httpx2.Response:
        nonlocal attempts
        attempts += 1
        raise httpx2.ConnectError("connection refused", request=request)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(refuse)) as client:
        with capture_logs() as logs:
            delivered = await send_webhook(
                URL, {"event": "watch.changed"}, None, client=client, resolve=public, attempts=3, sleep=no_sleep
            )
    assert not delivered
    assert attempts == 3
    failed = [entry for entry in logs if entry["event"] == "watch_webhook_failed"]
    assert failed
    assert failed[0]["host"] == "hooks.example.org"
    assert "abc123" not in json.dumps(logs, default=str)  # the URL's token is never logged


def test_the_feed_has_one_entry_per_changed_run_and_escapes_titles() -> None:
    at = datetime(2026, 7, 1, 12, tzinfo=UTC)
    watch = Watch(
        id="w-1",
        question="Does <b>X</b> & Y work?",
        interval=timedelta(days=7),
        options=WatchOptions(),
        webhook=None,
        created=at,
        next_due=at,
    )
    runs = [
        WatchRun(run_at=at.replace(month=3), folder="/a", verdict="yes", confidence=0.6, counted=3, changed=False),
        WatchRun(
            run_at=at,
            folder="/b",
            verdict="no",
            confidence=0.7,
            counted=4,
            changed=True,
            summary=["new: <script>alert(1)</script>", "VERDICT CHANGED: yes (0.60) -> no (0.70)"],
        ),
    ]
    root = ET.fromstring(atom_feed(watch, runs, now=at))
    ns = {"a": "http://www.w3.org/2005/Atom"}
    entries = root.findall("a:entry", ns)
    assert len(entries) == 1
    assert entries[0].findtext("a:title", namespaces=ns) == "Verdict changed: Does <b>X</b> & Y work?"
    assert entries[0].find("a:category", ns) is not None
    assert "<script>alert(1)</script>" in (entries[0].findtext("a:content", namespaces=ns) or "")


def test_the_feed_stays_well_formed_with_characters_xml_forbids() -> None:
    """The probe's two: an ESC in a paper's title (in a run's summary) and U+FFFE in the watch's question."""
    at = datetime(2026, 7, 1, 12, tzinfo=UTC)
    watch = Watch(
        id="w-1", question="Does X\ufffe work?", interval=timedelta(days=7), options=WatchOptions(), webhook=None,
        created=at, next_due=at,
    )  # fmt: skip
    run = WatchRun(
        run_at=at, folder="/b", verdict="no", confidence=0.7, counted=4, changed=True,
        summary=["new: A trial\x1b[31m of X\x00 in \x0bY", "retracted: \ud800Z\uffff"],
    )  # fmt: skip
    feed = atom_feed(watch, [run], now=at)
    root = ET.fromstring(feed)  # a parser takes it: well-formed XML 1.0
    ns = {"a": "http://www.w3.org/2005/Atom"}
    assert root.findtext("a:title", namespaces=ns) == "DeepCritical watch: Does X work?"
    assert root.findtext("a:entry/a:content", namespaces=ns) == "new: A trial[31m of X in Y\nretracted: Z"
