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

import errno
import ipaddress
import logging
import webbrowser
from collections.abc import Callable
from typing import Any, ClassVar, Final
from urllib.parse import urlsplit

from mcp_proto import deprecations
from mcp_proto.errors import MCPError, RequestTimeoutError, TransportError
from mcp_proto.oauth import (
    Flow,
    HttpRequest,
    HttpResponse,
    Notice,
    OAuthCallbackError,
    OAuthCallbackPortInUseError,
    OAuthCallbackTimeoutError,
    OAuthProvider,
    OpenAuthorization,
    check_redirect_uri,
)

from .notices import write_notice

__all__ = [
    "CALLBACK_TIMEOUT",
    "EXCHANGE_TIMEOUTS",
    "MAX_REQUEST_HEAD",
    "NOT_FOUND",
    "RECEIVED",
    "BrowserOAuthBase",
    "FlowRun",
    "aligned_redirect_uri",
    "callback_query",
    "exchange_error",
    "listen_address",
    "listen_error",
    "log_notice",
]

#: How long ``BrowserOAuth`` waits for the browser by default (§E5 ``timeout=300``).
CALLBACK_TIMEOUT: Final = 300.0
#: How long each exchange ``authenticate`` runs itself (metadata, registration, token)
#: may take per phase (httpcore's connect/read/write/pool timeouts).
EXCHANGE_TIMEOUTS: Final = dict.fromkeys(("connect", "read", "write", "pool"), 30.0)
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


def _open_browser(url: str) -> bool:
    # Looked up at each call (not bound at import): a test or a host may replace it.
    return webbrowser.open(url)


class FlowRun:
    """Steps one of the provider's flows (``start_authorization_flow``,
    ``complete_authorization_flow``) run by ``BrowserOAuth.authenticate`` outside a
    connection: :meth:`next` returns the next HTTP exchange the flow needs, or ``None``
    once it returned (:attr:`result`). Notices are logged (a deprecation once per
    process, through ``mcp_proto.deprecations``: DEP-7); any other effect is refused,
    since these flows ask the host for nothing but exchanges."""

    def __init__(self, flow: Flow[Any], logger: Any) -> None:
        self._flow = flow
        self._logger = logger
        self.result: Any = None

    def next(self, reply: HttpResponse | None) -> HttpRequest | None:
        value: Any = reply
        while True:
            try:
                effect = self._flow.send(value)
            except StopIteration as done:
                self.result = done.value
                return None
            value = None
            if isinstance(effect, HttpRequest):
                return effect
            if isinstance(effect, Notice):
                log_notice(self._logger, effect)
                continue
            self._flow.close()
            raise OAuthCallbackError(
                f"the OAuth flow asked for {type(effect).__name__} outside a connection",
                reason="no_handler",
            )

    def close(self) -> None:
        self._flow.close()


def log_notice(logger: Any, notice: Notice) -> None:
    """A flow's notice on the host's logger: a deprecation once per process through
    the registry (DEP-7, DEP-11), a migration as a WARNING, the rest at INFO."""
    if notice.kind == "deprecation" and notice.deprecation:
        deprecations.announce(notice.deprecation, lambda text: write_notice(logger, text))
        return
    level = logging.WARNING if notice.kind == "migration" else logging.INFO
    logger.log(level, "OAuth: %s", notice.message)


def exchange_error(request: HttpRequest, exc: BaseException) -> MCPError:
    """The typed error of an exchange that failed under ``authenticate`` (no
    connection machine to map it): a timeout is a ``RequestTimeoutError``, the rest a
    ``TransportError``; the message names the step and its URL, never a body."""
    what = f"OAuth {request.purpose.replace('_', ' ')} request to {request.url}"
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
        return RequestTimeoutError(f"{what}: no answer in time ({detail})")
    return TransportError(f"{what}: failed ({detail})")


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


class BrowserOAuthBase:
    """What both shells' ``BrowserOAuth`` share: the arguments and their checks, the
    provider's redirect URI aligned to the callback server, the handler installed, the
    URL shown when no browser is opened, the errors. Each shell adds
    ``handle``/``authorize``/``authenticate`` (blocking, or ``async``): the waiting."""

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

    @staticmethod
    def _browser_step(effect: Any) -> OpenAuthorization:
        """The effect, if it is the browser step (the only one a browser answers)."""
        if not isinstance(effect, OpenAuthorization):
            raise OAuthCallbackError(
                "BrowserOAuth answers only the browser step (no assertion source)",
                reason="no_handler",
            )
        return effect

    def _check_grant(self) -> None:
        """``authenticate`` runs the authorization code flow: a user in a browser."""
        grant = self.provider.grant
        if grant != "authorization_code":
            raise ValueError(
                f"authenticate() runs the authorization code flow; this provider's grant is "
                f"{grant!r} (a connection obtains that token by itself)"
            )

    def _show_url(self, url: str) -> None:
        """``auto_open_browser=False``: the user opens the URL."""
        self._logger.warning("open this URL to authorize: %s", url)

    def _timed_out(self, redirect_uri: str, timeout: float | None = None) -> OAuthCallbackError:
        waited = self.timeout if timeout is None else timeout
        return OAuthCallbackTimeoutError(
            f"no authorization response reached {redirect_uri} within {waited:g} s",
            reason="timeout",
        )
