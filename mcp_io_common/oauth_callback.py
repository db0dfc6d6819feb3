"""The loopback callback listener's I/O-free parts and ``BrowserOAuth``'s flows, shared
by both shells' ``BrowserOAuth`` (issue 21 item 5; RFC 8252 § 7.3: a native app
receives the authorization response on a loopback redirect URI).

The listener only carries bytes: it hands the redirect's full query, repeated
parameters included, to ``OAuthProvider.complete_authorization_flow``, where the
checks live (the recorded ``state``, RFC 9207 ``iss``, a repeated parameter refused:
AUTH-29). What is here: where to listen, reading one request's head (bounded), the two
answers, and the steps of ``authorize``/``authenticate`` as flows (issue 22): they
yield what waits (:class:`OpenBrowser`, :class:`AwaitRedirect`, an exchange), which each
shell performs, blocking or awaited.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import time
import webbrowser
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, TypeVar, Union
from urllib.parse import urlsplit

from mcp_proto.oauth import (
    AuthorizationResponse,
    HttpRequest,
    OAuthCallbackError,
    OAuthCallbackPortInUseError,
    OAuthCallbackTimeoutError,
    OAuthProvider,
    OpenAuthorization,
    Token,
    check_redirect_uri,
)

from .oauth_exchange import exchanges

__all__ = [
    "CALLBACK_TIMEOUT",
    "MAX_REQUEST_HEAD",
    "NOT_FOUND",
    "RECEIVED",
    "AwaitRedirect",
    "BrowserEffect",
    "BrowserFlow",
    "BrowserOAuthBase",
    "OpenBrowser",
    "RequestHead",
    "aligned_redirect_uri",
    "callback_query",
    "listen_address",
    "listen_error",
]

T = TypeVar("T")

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


def _loopback_address(host: str) -> str | None:
    """The address to listen on for a loopback redirect host, else ``None``."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return None
    return host if ip.is_loopback else None


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
    address = _loopback_address(host)
    if address is None:
        raise ValueError(f"the redirect URI's host {host!r} is not loopback")
    return address, parts.port, parts.path or "/"


def aligned_redirect_uri(
    redirect_uri: str, callback_port: int | None, callback_path: str | None
) -> str:
    """The redirect URI the callback server receives (AUTH-2): ``redirect_uri`` with
    the port and path the callback server was given, when given.

    The callback server decides its port and path, so a provider whose redirect URI
    differs only there is aligned to it (Ruby's ``BrowserOAuth`` does the same); its
    scheme and host stay. A redirect URI the server cannot receive at all (HTTPS, a
    private-use scheme, a host that is not loopback) is refused.

    Raises:
        ValueError: such a redirect URI, a port outside 1..65535, a path without ``/``.
    """
    if callback_port is not None and not (
        isinstance(callback_port, int) and not isinstance(callback_port, bool)
    ):
        raise ValueError(f"callback_port must be an int, not {type(callback_port).__name__}")
    if callback_port is not None and not 0 < callback_port < 65536:
        raise ValueError(f"callback_port {callback_port} is not a TCP port (1..65535)")
    if callback_path is not None and not callback_path.startswith("/"):
        raise ValueError(f"callback_path {callback_path!r} must start with '/'")
    parts = urlsplit(redirect_uri)
    host = parts.hostname or ""
    if parts.scheme != "http" or _loopback_address(host) is None:
        raise ValueError(
            f"BrowserOAuth listens on a loopback http redirect URI, not {redirect_uri!r}"
        )
    port = callback_port if callback_port is not None else parts.port
    if port is None:
        raise ValueError(f"the redirect URI {redirect_uri!r} names no port: give callback_port")
    path = callback_path if callback_path is not None else (parts.path or "/")
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return parts._replace(netloc=netloc, path=path).geturl()


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


class RequestHead:
    """One request's head as it arrives on the listener, at most
    :data:`MAX_REQUEST_HEAD` bytes: :meth:`feed` each chunk read, then :meth:`answer`."""

    def __init__(self) -> None:
        self._data = b""

    def feed(self, chunk: bytes) -> bool:
        """Keep ``chunk``; whether to read on (not at the connection's end, an empty
        chunk, nor once the head is complete or past the bound)."""
        self._data += chunk
        data = self._data
        return bool(chunk) and b"\r\n\r\n" not in data and len(data) <= MAX_REQUEST_HEAD

    def answer(self, path: str) -> tuple[str | None, bytes]:
        """The callback's query (``None``: not the callback on ``path``, or a head past
        the bound, refused unread) and the bytes to send back."""
        data = self._data
        query = callback_query(data, path) if len(data) <= MAX_REQUEST_HEAD else None
        return query, RECEIVED if query is not None else NOT_FOUND


def _open_browser(url: str) -> bool:
    # Looked up at each call (not bound at import): a test or a host may replace it.
    return webbrowser.open(url)


def listen_error(host: str, port: int, exc: OSError) -> OAuthCallbackError:
    """The error of a callback listener that could not open: a port in use is its own
    type (AUTH-2), with a one-line message saying what to do."""
    if exc.errno == errno.EADDRINUSE:
        return OAuthCallbackPortInUseError(
            f"the OAuth callback port {port} on {host} is in use by another process; "
            "free it or give BrowserOAuth another callback_port",
            reason="port_in_use",
        )
    return OAuthCallbackError(
        f"the OAuth callback listener could not open on {host}:{port} "
        f"({exc.strerror or type(exc).__name__})",
        reason="listen",
    )


@dataclass(frozen=True)
class OpenBrowser:
    """Open ``url`` in the user's browser (``opener``: ``webbrowser.open`` by default,
    which may block; the Trio shell runs it in a thread). The reply is ignored."""

    url: str = field(repr=False)


@dataclass(frozen=True)
class AwaitRedirect:
    """Wait at most ``timeout`` seconds, from now, on the open listener for the
    redirect; the reply is its query string, or ``None`` when none arrived in time."""

    timeout: float


#: What ``BrowserOAuth``'s flows yield: the two above and the provider's exchanges
#: (an ``HttpRequest``, answered with an ``HttpResponse``).
BrowserEffect = Union[OpenBrowser, AwaitRedirect, HttpRequest]
BrowserFlow = Generator[BrowserEffect, Any, T]


class BrowserOAuthBase:
    """What both shells' ``BrowserOAuth`` share: the arguments and their checks, the
    provider's redirect URI aligned to the callback server, the handler installed, the
    URL shown when no browser is opened, the errors, and the steps of ``handle``,
    ``authorize`` and ``authenticate`` as flows. Each shell adds those methods
    (blocking, or ``async``), which run the flows with the listener open: the waiting."""

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
        self._logger = logger or logging.getLogger(self._LOGGER)
        before = provider.redirect_uri
        aligned = aligned_redirect_uri(before, callback_port, callback_path)
        if aligned != before:
            provider.redirect_uri = check_redirect_uri(aligned)
            self._logger.info(
                "OAuth redirect URI aligned to the callback server: %s (was %s)", aligned, before
            )
        host, port, path = listen_address(provider.redirect_uri)
        self.provider = provider
        self.host, self.port, self.path = host, port, path
        self.timeout = timeout
        self.auto_open_browser = auto_open_browser
        self._open = opener or _open_browser
        if provider.handler is None:
            provider.handler = self.handle

    handle: Callable[[Any], Any]  # each shell's: blocking, or a coroutine function

    def _handler_flow(self, effect: Any) -> BrowserFlow[AuthorizationResponse]:
        """``handle``'s flow: the browser step (the only effect a browser answers; any
        other is refused before the listener opens) as :meth:`_authorize_flow`."""
        if not isinstance(effect, OpenAuthorization):
            raise OAuthCallbackError(
                "BrowserOAuth answers only the browser step (no assertion source)",
                reason="no_handler",
            )
        return self._authorize_flow(effect.url, effect.redirect_uri)

    def _authorize_flow(self, url: str, redirect_uri: str) -> BrowserFlow[AuthorizationResponse]:
        """``authorize``'s flow: the user sent to ``url``, the redirect awaited (at most
        ``timeout`` seconds); returns what arrived, for the provider to check."""
        query = yield from self._redirect(url, redirect_uri, self.timeout, self.auto_open_browser)
        return AuthorizationResponse(f"{redirect_uri}?{query}", time.time())

    def _authenticate_flow(
        self, timeout: float | None, auto_open_browser: bool | None
    ) -> BrowserFlow[Token]:
        """``authenticate``'s flow, its arguments (``None``: the constructor's) and the
        provider's grant checked now, before the shell opens the listener."""
        grant = self.provider.grant
        if grant != "authorization_code":  # a user in a browser
            raise ValueError(
                f"authenticate() runs the authorization code flow; this provider's grant is "
                f"{grant!r} (a connection obtains that token by itself)"
            )
        wait = self.timeout if timeout is None else timeout
        show = self.auto_open_browser if auto_open_browser is None else auto_open_browser
        return self._authenticate(wait, show)

    def _authenticate(self, wait: float, show: bool) -> BrowserFlow[Token]:
        """Discovery and registration (``start_authorization_flow``: no 401 is in hand),
        the browser and the redirect, then the code exchanged
        (``complete_authorization_flow``: ``state`` and ``iss`` checked); returns the
        stored token. The shell has the listener open before the first exchange."""
        provider = self.provider
        start = provider.start_authorization_flow(None, time.time())
        url, state = yield from exchanges(start, self._logger)
        assert isinstance(url, str) and isinstance(state, str)  # no token: no refresh
        redirect_uri = provider.redirect_uri
        query = yield from self._redirect(url, redirect_uri, wait, show)
        finish = provider.complete_authorization_flow(
            f"{redirect_uri}?{query}", expected_state=state, now=time.time()
        )
        return (yield from exchanges(finish, self._logger))

    def _redirect(self, url: str, redirect_uri: str, wait: float, show: bool) -> BrowserFlow[str]:
        """The user sent to ``url`` (the browser opened, or with ``show`` false the URL
        logged for the user to open), then the redirect's query awaited.

        Raises:
            OAuthCallbackTimeoutError: nothing reached ``redirect_uri`` in ``wait`` s.
        """
        if show:
            yield OpenBrowser(url)
        else:
            self._logger.warning("open this URL to authorize: %s", url)
        query = yield AwaitRedirect(wait)
        if query is None:
            raise OAuthCallbackTimeoutError(
                f"no authorization response reached {redirect_uri} within {wait:g} s",
                reason="timeout",
            )
        assert isinstance(query, str)
        return query
