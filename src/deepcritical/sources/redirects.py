"""Where a redirect from an upstream may lead: to the same host, or to a public address.

Every source's client follows redirects (publishers move pages, mirrors hand off to a CDN). A configured
upstream that answers ``302 Location: http://169.254.169.254/…`` (a cloud's metadata service) or
``http://127.0.0.1:6379/`` would otherwise send the server's next request inside its own network. So a
redirect to another host is followed only when every address that host has is a public one
(``ipaddress``'s ``is_global``); to the same host it is followed as before (a local SearXNG moving
``/search`` to ``/search/``). The check is made as each redirect arrives (an httpx response hook), before
it is followed; a name whose DNS answer changes between the check and the connection is not caught.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket

import httpx2


class RedirectRefusedError(httpx2.RequestError):
    """A redirect to another host at a non-public address: not followed."""


async def refuse_private_redirects(response: httpx2.Response) -> None:
    """An httpx response hook: raises RedirectRefusedError for a redirect this module does not follow."""
    if not response.has_redirect_location:
        return
    here = response.request.url
    there = here.join(response.headers["location"])
    if there.host.lower() == here.host.lower() or not there.host:
        return
    if not await _public(there.host):
        raise RedirectRefusedError(
            f"refused a redirect from {here.host} to {there.host}, a local or private address",
            request=response.request,
        )


async def _public(host: str) -> bool:
    """True when every address ``host`` has is public (a literal address is its own answer)."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_global
    except ValueError:
        pass
    try:
        answers = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return True  # no address: the request that follows fails to connect, reaching nothing
    addresses = {answer[4][0] for answer in answers}
    return bool(addresses) and all(ipaddress.ip_address(str(address).split("%")[0]).is_global for address in addresses)
