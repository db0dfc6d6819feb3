"""Following an HTTP redirect: the same request again at the URL a 307/308 names.

A server mounted under a path answers the path without its trailing slash with a
redirect (Starlette's ``Mount("/mcp", app)``: ``POST /mcp`` → 307 ``/mcp/``), and other
clients (the SDKs' HTTP libraries) follow it. Only the redirects that keep the method
and the body are followed, and only to the same origin (``mcp_proto.http.
redirect_target``); any other is judged as a failed response, its error naming where
it pointed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from ..http import MAX_REDIRECTS, redirect_target
from ._exchange import Exchange, Role
from .frames import StartExchange

if TYPE_CHECKING:
    from ._http import HttpTransport

__all__ = ["follow"]


def follow(
    transport: HttpTransport, ex: Exchange, status: int, location: str | None
) -> Exchange | None:
    """``ex`` got a 3xx head with ``location`` (its ``Location`` header): if it is a
    307/308 to the same origin, send the same request again at the new URL as a new
    exchange in ``ex``'s place, and return it. The
    connection's URL becomes the new one when it was the one redirected (later
    requests, the GET stream and the closing DELETE go there directly). ``None``: not
    followed; ``ex.location`` then holds a redirect's ``Location`` for its error."""
    request, ex.request = ex.request, None  # (not held while the body is read)
    ex.location = location
    if request is None:
        return None
    target = redirect_target(request.url, status, ex.location)
    if target is None or ex.redirects >= MAX_REDIRECTS:
        return None
    transport._drop(ex)  # its body is not wanted
    again = attrs.evolve(ex, xid=transport._xid(), redirects=ex.redirects + 1, location=None)
    transport._ex[again.xid] = again
    if ex.role is Role.GET:
        transport._get_xid = again.xid
    if ex.role is Role.POST and request.url == transport.url:
        transport.url = target  # the endpoint moved (a GET is only the stream's)
    port = transport.port
    port.diagnostic(
        "info",
        f"server {port.name!r}: {request.url} redirects to {target} (HTTP {status}); "
        "requests go there",
    )
    transport._start(
        again,
        StartExchange(
            again.xid,
            request.method,
            target,
            request.headers,
            request.body,
            request.read_timeout,
            request.streaming,
        ),
    )
    return again
