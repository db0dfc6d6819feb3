"""The loopback callback listener's I/O-free parts, shared by both shells' ``BrowserOAuth``
(issue 21 item 5; RFC 8252 § 7.3: a native app receives the authorization response on
a loopback redirect URI).

The listener only carries bytes: it hands the redirect's full query, repeated
parameters included, to ``OAuthProvider.complete_authorization_flow``, where the
checks live (the recorded ``state``, RFC 9207 ``iss``, a repeated parameter refused:
AUTH-29). What is here: where to listen, reading one request's head (bounded), and the
two answers.
"""

from __future__ import annotations

import ipaddress
from typing import Final
from urllib.parse import urlsplit

__all__ = [
    "CALLBACK_TIMEOUT",
    "MAX_REQUEST_HEAD",
    "NOT_FOUND",
    "RECEIVED",
    "callback_query",
    "listen_address",
]

#: How long ``BrowserOAuth`` waits for the browser by default (§E5 ``timeout=300``).
CALLBACK_TIMEOUT: Final = 300.0
#: A request head longer than this is not a browser's redirect: refused, unread.
MAX_REQUEST_HEAD: Final = 16 * 1024

RECEIVED: Final = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nConnection: close\r\n"
    b"Cache-Control: no-store\r\n\r\n"
    b"<!doctype html><title>Authorized</title><p>The authorization response was received."
    b" You may close this window.</p>"
)
NOT_FOUND: Final = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def listen_address(redirect_uri: str) -> tuple[str, int, str]:
    """``(host, port, path)`` to listen on for ``redirect_uri``: plain HTTP on a
    loopback host with an explicit port (``localhost`` listens on 127.0.0.1).

    Raises:
        ValueError: not a loopback HTTP redirect URI with a port (HTTPS or a
            private-use scheme need the host application's own handler).
    """
    parts = urlsplit(redirect_uri)
    host = parts.hostname or ""
    if parts.scheme != "http" or parts.port is None:
        raise ValueError(
            f"BrowserOAuth listens on a loopback http redirect URI with a port, not "
            f"{redirect_uri!r}"
        )
    if host == "localhost":
        address = "127.0.0.1"
    else:
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            raise ValueError(f"the redirect URI's host {host!r} is not loopback") from None
        if not ip.is_loopback:
            raise ValueError(f"the redirect URI's host {host!r} is not loopback")
        address = host
    return address, parts.port, parts.path or "/"


def callback_query(head: bytes, path: str) -> str | None:
    """The query string of a ``GET <path>?<query>`` request head, verbatim (repeated
    parameters kept for the core to refuse); ``None`` for any other request (a
    favicon, another path, a malformed head), which is answered 404 and waited past."""
    line = head.split(b"\r\n", 1)[0]
    try:
        method, target, _version = line.decode("ascii").split(" ")
    except (UnicodeDecodeError, ValueError):
        return None
    if method != "GET":
        return None
    target_path, sep, query = target.partition("?")
    if target_path != path or not sep:
        return None
    return query
