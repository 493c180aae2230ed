"""Where a watch's webhook may point: a public address, unless the operator trusts an internal receiver.

A webhook is a request the server makes to a URL a client gave (``watch add --webhook``, ``POST
/api/watches``, MCP's ``watch_add``). Left alone, ``http://169.254.169.254/…`` (a cloud's metadata service),
``http://127.0.0.1:6379/`` or a router's page would be reached from inside the server's network. So the host is
resolved and every address it has must be public: not loopback, private, link-local, shared (CGNAT),
reserved, multicast or unspecified, an IPv4 address written as IPv6 (``::ffff:127.0.0.1``, 6to4, NAT64)
judged as the IPv4 address it carries. It is checked when the watch is added and again at each delivery (a
name's DNS answer can change in between), and the delivery connects to the very address it checked (no
second lookup for a rebinding DNS server to answer differently). ``DEEPCRITICAL_WEBHOOK_ALLOW_PRIVATE=true``
lifts the rule for a deployment whose receiver is on its own network.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

Resolver = Callable[[str, int], Awaitable[list[str]]]
NAT64 = ipaddress.ip_network("64:ff9b::/96")
SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: inside someone's network


class WebhookTargetError(ValueError):
    """A webhook URL the server will not send to; the message says why, without the URL's path or query."""


def _ipv4_inside(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public(text: str) -> bool:
    """True for an address the open internet routes to, and nothing inside a network."""
    address: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(text.split("%")[0])
    if isinstance(address, ipaddress.IPv6Address) and (inner := _ipv4_inside(address)) is not None:
        address = inner
    inside = (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
        or (isinstance(address, ipaddress.IPv4Address) and address in SHARED)
    )
    return address.is_global and not inside


def _literal(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


def resolve_now(host: str, port: int) -> list[str]:
    """The addresses ``host`` has, by the system's resolver (numeric forms such as ``127.1`` or ``2130706433``
    included: the resolver reads them as the C library does, so they are judged as what they reach)."""
    answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(answer[4][0]) for answer in answers]


async def resolve_later(host: str, port: int) -> list[str]:
    answers = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(answer[4][0]) for answer in answers]


def _host_and_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise WebhookTargetError("its port is not a number from 0 to 65535") from None
    if not parts.hostname:
        raise WebhookTargetError("the URL has no host")
    return parts.hostname, port


def _judge(host: str, addresses: list[str], allow_private: bool) -> str:
    """The first address to connect to; WebhookTargetError when any address of the host is not public."""
    if not addresses:
        raise WebhookTargetError(f"{host} has no address")
    if not allow_private:
        inside = next((address for address in addresses if not is_public(address)), None)
        if inside is not None:
            raise WebhookTargetError(
                f"{host} is at {inside}, a loopback, private, link-local or reserved address "
                "(set DEEPCRITICAL_WEBHOOK_ALLOW_PRIVATE=true to alert a receiver on your own network)"
            )
    return addresses[0]


def check_target(url: str, *, allow_private: bool, resolve: Callable[[str, int], list[str]] = resolve_now) -> None:
    """Refuse a webhook URL whose host is (or resolves to) an address inside a network. A name that does not
    resolve now is accepted: it reaches nothing, and each delivery checks it again."""
    host, port = _host_and_port(url)
    literal = _literal(host)
    if literal is not None:
        _judge(host, [literal], allow_private)
        return
    try:
        addresses = resolve(host, port)
    except (OSError, UnicodeError):
        return
    _judge(host, addresses, allow_private)


async def delivery_address(url: str, *, allow_private: bool, resolve: Resolver = resolve_later) -> str:
    """The address a delivery connects to, resolved now and checked; WebhookTargetError when refused or when
    the host has no address."""
    host, port = _host_and_port(url)
    literal = _literal(host)
    if literal is not None:
        return _judge(host, [literal], allow_private)
    try:
        addresses = await resolve(host, port)
    except (OSError, UnicodeError):
        raise WebhookTargetError(f"{host} does not resolve") from None
    return _judge(host, addresses, allow_private)
