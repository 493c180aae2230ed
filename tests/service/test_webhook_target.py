"""A webhook reaches public addresses only: refused at ``watch add`` and again at delivery (DNS can change),
connected to the address checked, no redirect followed; an operator's opt-in lets a receiver on their own
network be alerted. No test here touches the network: the resolver is a stand-in, the receiver on loopback."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import pytest
from structlog.testing import capture_logs

from deepcritical.service.watch_alerts import send_webhook
from deepcritical.service.watches import WatchError
from deepcritical.service.watches_sqlite import WatchStore
from deepcritical.service.webhook_target import is_public

T0 = datetime(2026, 7, 1, 12, tzinfo=UTC)
QUESTION = "Does aspirin reduce stroke?"
PUBLIC = "93.184.215.14"


async def no_sleep(seconds: float) -> None:
    return None


def answering(table: dict[str, str]) -> Any:
    """A stand-in for ``socket.getaddrinfo``: each name's one address; any other name does not resolve."""

    def getaddrinfo(host: str, port: object, *args: object, **kwargs: object) -> list[Any]:
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        family = socket.AF_INET6 if ":" in table[host] else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (table[host], port or 0))]

    return getaddrinfo


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:6379/",
        "http://localhost:8000/hook",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.7/hook",
        "http://192.168.1.1/",
        "http://172.16.0.1/",
        "http://100.64.0.1/",  # shared address space (carrier-grade NAT)
        "http://0.0.0.0:8000/",
        "http://224.0.0.1/",
        "http://240.0.0.1/",
        "http://[::1]:8000/",
        "http://[fe80::1]/",
        "http://[fc00::1]/",
        "http://[::ffff:127.0.0.1]/",  # IPv4 inside IPv6
        "http://[64:ff9b::a9fe:a9fe]/",  # NAT64 of 169.254.169.254
        "http://2130706433/",  # 127.0.0.1 as one number: the resolver reads it so
        "http://127.1/",
        "http://metadata.internal/computeMetadata/v1/",  # a name that resolves inside
    ],
)
def test_a_webhook_inside_a_network_is_refused_at_add(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    real = socket.getaddrinfo
    fake = answering({"metadata.internal": "169.254.169.254"})
    monkeypatch.setattr(
        socket, "getaddrinfo", lambda host, *a, **k: fake(host, *a, **k) if "internal" in host else real(host, *a, **k)
    )
    store = WatchStore(tmp_path / "w.sqlite")
    with pytest.raises(WatchError, match=r"^webhook http://") as caught:
        store.add(QUESTION, webhook=url + "?token=abc123", now=T0)
    assert caught.value.field == "webhook"
    assert "DEEPCRITICAL_WEBHOOK_ALLOW_PRIVATE" in caught.value.message
    assert "abc123" not in caught.value.message  # the URL's path and query (a token) are not repeated
    assert "\n" not in caught.value.message
    assert store.watches() == []


def test_a_public_name_is_accepted_and_a_private_one_only_with_the_opt_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", answering({"hooks.example.org": PUBLIC, "hooks.lan": "10.1.2.3"}))
    store = WatchStore(tmp_path / "w.sqlite")
    assert store.add(QUESTION, webhook="https://hooks.example.org/x", now=T0).webhook == "https://hooks.example.org/x"
    with pytest.raises(WatchError, match=r"10\.1\.2\.3"):
        store.add(QUESTION, webhook="https://hooks.lan/x", now=T0)
    kept = store.add(QUESTION, webhook="https://hooks.lan/x", now=T0, allow_private_webhook=True)
    assert kept.webhook == "https://hooks.lan/x"


@pytest.mark.parametrize(
    ("address", "public"),
    [(PUBLIC, True), ("2606:4700::1111", True), ("8.8.8.8", True), ("169.254.169.254", False), ("::", False)],
)
def test_is_public(address: str, public: bool) -> None:
    assert is_public(address) is public


async def test_delivery_checks_the_host_again_and_refuses_when_dns_now_points_inside() -> None:
    sent: list[httpx2.Request] = []

    async def rebound(host: str, port: int) -> list[str]:
        return ["169.254.169.254"]  # the name resolved to a public address when the watch was added

    def handle(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(200)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handle)) as client:
        with capture_logs() as logs:
            delivered = await send_webhook(
                "https://hooks.example.org/x?token=abc123", {"event": "watch.changed"}, None,
                client=client, resolve=rebound, sleep=no_sleep,
            )  # fmt: skip
    assert delivered is False
    assert sent == []  # nothing left the server
    refused = [entry for entry in logs if entry["event"] == "watch_webhook_refused"]
    assert refused
    assert "169.254.169.254" in refused[0]["reason"]
    assert "abc123" not in str(logs)


async def test_delivery_connects_to_the_address_it_checked_with_the_name_as_host() -> None:
    sent: list[httpx2.Request] = []
    answers = iter([[PUBLIC], ["127.0.0.1"]])  # a rebinding DNS server: a second lookup would answer loopback

    async def rebinding(host: str, port: int) -> list[str]:
        return next(answers)

    def handle(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(503 if len(sent) < 2 else 204)

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handle)) as client:
        delivered = await send_webhook(
            "https://hooks.example.org:8443/x", {"event": "watch.changed"}, None,
            client=client, resolve=rebinding, sleep=no_sleep,
        )  # fmt: skip
    assert delivered
    assert [request.url.host for request in sent] == [PUBLIC, PUBLIC]
    assert {request.headers["host"] for request in sent} == {"hooks.example.org:8443"}
    assert sent[0].extensions["sni_hostname"] == "hooks.example.org"


async def test_a_redirect_from_the_receiver_is_not_followed() -> None:
    sent: list[httpx2.Request] = []

    async def public(host: str, port: int) -> list[str]:
        return [PUBLIC]

    def handle(request: httpx2.Request) -> httpx2.Response:
        sent.append(request)
        return httpx2.Response(307, headers={"location": "http://169.254.169.254/latest/meta-data/"})

    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handle), follow_redirects=True) as client:
        delivered = await send_webhook(
            "https://hooks.example.org/x", {"event": "watch.changed"}, None,
            client=client, resolve=public, attempts=2, sleep=no_sleep,
        )  # fmt: skip
    assert not delivered
    assert {request.url.host for request in sent} == {PUBLIC}


class Receiver:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                outer.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    hook = Receiver()
    thread = threading.Thread(target=hook.server.serve_forever, daemon=True)
    thread.start()
    yield hook
    hook.server.shutdown()
    hook.server.server_close()


async def test_a_loopback_receiver_is_alerted_only_with_the_opt_in(receiver: Receiver) -> None:
    async with httpx2.AsyncClient(trust_env=False) as client:
        refused = await send_webhook(receiver.url, {"event": "watch.changed"}, None, client=client, sleep=no_sleep)
        assert not refused
        assert receiver.bodies == []
        delivered = await send_webhook(
            receiver.url, {"event": "watch.changed"}, None, client=client, allow_private=True, sleep=no_sleep
        )
    assert delivered
    assert len(receiver.bodies) == 1
