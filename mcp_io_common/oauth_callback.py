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
import logging
import webbrowser
from collections.abc import Callable
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit

from mcp_proto.oauth import OAuthCallbackError, OAuthProvider, OpenAuthorization

__all__ = [
    "CALLBACK_TIMEOUT",
    "MAX_REQUEST_HEAD",
    "NOT_FOUND",
    "RECEIVED",
    "BrowserOAuthBase",
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


def _open_browser(url: str) -> bool:
    # Looked up at each call (not bound at import): a test or a host may replace it.
    return webbrowser.open(url)


class BrowserOAuthBase:
    """What both shells' ``BrowserOAuth`` share: the arguments and their checks, the
    provider's handler installed, the URL shown when no browser is opened, the errors.
    Each shell adds ``handle``/``authorize`` (blocking, or ``async``): the waiting."""

    _LOGGER: ClassVar[str] = "mcp_io_common.oauth"

    def __init__(
        self,
        provider: OAuthProvider,
        *,
        callback_port: int | None = None,
        callback_path: str | None = None,
        logger: logging.Logger | None = None,
        timeout: float = CALLBACK_TIMEOUT,
        auto_open_browser: bool = True,
        opener: Callable[[str], Any] | None = None,
    ) -> None:
        host, port, path = listen_address(provider.redirect_uri)
        if callback_port is not None and callback_port != port:
            raise ValueError(f"callback_port {callback_port} is not the redirect URI's {port}")
        if callback_path is not None and callback_path != path:
            raise ValueError(f"callback_path {callback_path!r} is not the redirect URI's")
        self.provider = provider
        self.host, self.port, self.path = host, port, path
        self.timeout = timeout
        self.auto_open_browser = auto_open_browser
        self._open = opener or _open_browser
        self._logger = logger or logging.getLogger(self._LOGGER)
        if provider.handler is None:
            provider.handler = self.handle

    handle: Callable[[Any], Any]  # each shell's: blocking, or a coroutine function

    @staticmethod
    def _browser_step(effect: Any) -> OpenAuthorization:
        """The effect, if it is the browser step (the only one a browser answers)."""
        if not isinstance(effect, OpenAuthorization):
            raise OAuthCallbackError(
                "BrowserOAuth answers only the browser step (no assertion source)",
                reason="no_handler",
            )
        return effect

    def _show_url(self, url: str) -> None:
        """``auto_open_browser=False``: the user opens the URL."""
        self._logger.warning("open this URL to authorize: %s", url)

    def _timed_out(self, redirect_uri: str) -> OAuthCallbackError:
        return OAuthCallbackError(
            f"no authorization response reached {redirect_uri} within {self.timeout:g} s",
            reason="timeout",
        )
