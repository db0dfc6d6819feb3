"""The client side of an HTTP ``CONNECT`` tunnel through a proxy, without I/O.

``CONNECT host:port`` (RFC 9110 § 9.3.6) asks an HTTP proxy for a byte stream to the
target; a 2xx answer makes the connection that stream, over which the client then
speaks TLS (``wss://``) and the WebSocket upgrade as if connected directly. This
module owns the rules of that exchange, so both shells only move bytes:

* :func:`parse_proxy_url` reads an ``http://`` or ``https://`` proxy URL (TLS to the
  proxy for the latter, as httpcore's ``Proxy`` does for the HTTP transports). Its
  userinfo becomes ``Proxy-Authorization: Basic`` (RFC 9110 § 11.7.1, RFC 7617) and is
  never shown: :attr:`ProxyEndpoint.display` and its ``repr`` leave it out, and so
  does every error here.
* :class:`ProxyTunnel` writes the request and reads the answer's head, at most
  ``MAX_HEAD`` bytes (interim 1xx answers included, RFC 9110 § 15.2), by a deadline
  the caller computes from its connect timeout with ``now`` as a number. A 2xx
  establishes the tunnel; 407 is :class:`~mcp_proto.errors.ProxyAuthenticationError`;
  any other status, a malformed head, bytes after a 2xx head (the client speaks first
  on both TLS and WebSocket, so the target cannot have sent them), the end of the
  connection and the deadline are :class:`~mcp_proto.errors.ProxyError`.

The answer is parsed here rather than with h11 (the core imports no HTTP library,
tests/proto/test_purity.py): only the status line and the header lines' shape matter,
as a 2xx answer to ``CONNECT`` has no content (RFC 9110 § 9.3.6) and any other status
ends the attempt without reading its body.
"""

from __future__ import annotations

import base64
import re
from typing import Final
from urllib.parse import unquote, urlsplit

from ._util import sanitize_peer_text
from .errors import ProxyAuthenticationError, ProxyError

__all__ = ["MAX_HEAD", "ProxyEndpoint", "ProxyTunnel", "parse_proxy_url"]

#: The most bytes of answer head read before the tunnel is up (all 1xx heads and the
#: final one together); beyond it the proxy is misbehaving (h11's default bound).
MAX_HEAD: Final = 16 * 1024
#: Peer text (a reason phrase, a challenge) is cut to this in errors.
_MAX_TEXT: Final = 200
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_STATUS_LINE: Final = re.compile(rb"HTTP/1\.[01] ([1-9][0-9][0-9])(?: ([^\r\n]*))?")
_HEADER_NAME: Final = re.compile(rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


class ProxyEndpoint:
    """Where the proxy is: ``tls`` (an ``https://`` proxy), ``host``, ``port``,
    ``display`` (its URL without credentials) and the ``Proxy-Authorization`` value
    made of the URL's userinfo (``None`` without one), which ``repr`` leaves out."""

    __slots__ = ("_authorization", "display", "host", "port", "tls")

    def __init__(
        self, tls: bool, host: str, port: int, display: str, authorization: bytes | None
    ) -> None:
        self.tls = tls
        self.host = host
        self.port = port
        self.display = display
        self._authorization = authorization

    @property
    def authorization(self) -> bytes | None:
        return self._authorization

    def __repr__(self) -> str:
        auth = ", with credentials" if self._authorization is not None else ""
        return f"ProxyEndpoint({self.display!r}{auth})"


def parse_proxy_url(url: str) -> ProxyEndpoint:
    """The proxy of ``url`` (``http://[user:password@]host[:port]`` or ``https://...``).

    Raises:
        ValueError: another scheme (a SOCKS proxy, say), no host, a malformed port; the
            message never quotes the credentials.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname
    except ValueError:
        raise ValueError("the proxy URL is malformed (a bad port?)") from None
    scheme = parts.scheme.lower()
    shown_host = f"[{host}]" if host and ":" in host else (host or "")
    if scheme not in _DEFAULT_PORTS:
        raise ValueError(
            f"a WebSocket connection goes through an http:// or https:// proxy (HTTP "
            f"CONNECT), not {scheme or 'a URL without scheme'}:// ({shown_host or 'no host'})"
        )
    if not host:
        raise ValueError(f"the proxy URL has no host ({scheme}://...)")
    port = port or _DEFAULT_PORTS[scheme]
    authorization = None
    if parts.username is not None:
        # RFC 7617 § 2: user-id ":" password, in UTF-8 (§ 2.1's charset), base64.
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        authorization = b"Basic " + base64.b64encode(pair.encode("utf-8"))
    return ProxyEndpoint(
        scheme == "https", host, port, f"{scheme}://{shown_host}:{port}", authorization
    )


class ProxyTunnel:
    """One ``CONNECT`` to ``host:port`` through ``proxy``: :meth:`request` gives the
    bytes to write, :meth:`receive_data` takes what the proxy answers (``b""`` for the
    end of the connection) and returns ``True`` once the tunnel is up, and
    :meth:`handle_timeout` fails the attempt at :attr:`deadline` (``now`` plus
    ``timeout``, the caller's connect timeout). ``server`` names the MCP server in
    error messages."""

    def __init__(
        self,
        proxy: ProxyEndpoint,
        host: str,
        port: int,
        *,
        now: float,
        timeout: float,
        max_head: int = MAX_HEAD,
        server: str | None = None,
    ) -> None:
        self.proxy = proxy
        # Errors start with "server 'name': " when the caller names its server.
        self._prefix = f"server {server!r}: " if server is not None else ""
        shown = f"[{host}]" if ":" in host else host
        self.target = f"{shown}:{port}"
        self.timeout = timeout
        self.deadline = now + timeout
        self.established = False
        self._max_head = max_head
        self._head_budget = max_head  # what is left of it for the heads still to come
        self._buffer = bytearray()
        self._done = False  # established or failed: no more input is taken

    def __repr__(self) -> str:
        return f"ProxyTunnel({self.proxy.display!r} -> {self.target!r})"

    def request(self) -> bytes:
        """The ``CONNECT`` request (RFC 9110 § 9.3.6: the target in authority form,
        ``Host`` the same, RFC 9112 § 3.2.3)."""
        target = self.target.encode("ascii", "strict") if self.target.isascii() else None
        if target is None:
            target = self._idna_target()
        lines = [b"CONNECT " + target + b" HTTP/1.1", b"Host: " + target]
        if self.proxy.authorization is not None:
            lines.append(b"Proxy-Authorization: " + self.proxy.authorization)
        return b"\r\n".join(lines) + b"\r\n\r\n"

    def _idna_target(self) -> bytes:
        host, _, port = self.target.rpartition(":")
        try:
            return host.encode("idna") + b":" + port.encode("ascii")
        except UnicodeError:
            raise self._error(f"cannot name the target {self.target!r} to the proxy") from None

    def handle_timeout(self, now: float) -> None:
        """Raise :class:`ProxyError` if the deadline passed before the tunnel was up."""
        if not self._done and now >= self.deadline:
            self._done = True
            raise self._error(
                f"the proxy {self.proxy.display} did not answer the CONNECT to "
                f"{self.target} within {self.timeout:g} s"
            )

    def receive_data(self, data: bytes) -> bool:
        """Take bytes the proxy sent (``b""``: it closed the connection); ``True`` once
        a 2xx head established the tunnel, ``False`` while more is needed.

        Raises:
            ProxyAuthenticationError: the proxy answered 407.
            ProxyError: any other failure (status, malformed or oversized head, the
                connection's end, data after a 2xx head).
        """
        if self._done:
            if data:
                raise self._error(
                    f"the proxy {self.proxy.display} sent data after its answer to the "
                    "CONNECT, before the client spoke"
                )
            return self.established
        if not data:
            self._done = True
            what = "answering" if not self._buffer else "finishing its answer to"
            raise self._error(
                f"the proxy {self.proxy.display} closed the connection before {what} "
                f"the CONNECT to {self.target}"
            )
        self._buffer += data
        while not self._done:
            head = self._next_head()
            if head is None:
                return False
            self._handle_head(head)
        return self.established

    # ------------------------------------------------------------ parsing

    def _next_head(self) -> bytes | None:
        """One complete head off the buffer (its lines, the blank line removed)."""
        buffer = self._buffer
        # RFC 9112 § 2.2: a recipient may accept a bare LF as a line terminator.
        end = buffer.find(b"\n\r\n")
        end2 = buffer.find(b"\n\n")
        ends = [(e, 3) for e in (end,) if e >= 0] + [(e, 2) for e in (end2,) if e >= 0]
        if not ends:
            if len(buffer) > self._head_budget:
                self._done = True
                raise self._error(
                    f"the proxy {self.proxy.display} sent answer heads over {self._max_head} bytes"
                )
            return None
        at, size = min(ends)
        head = bytes(buffer[: at + 1])
        rest = buffer[at + size :]
        self._head_budget -= at + size
        if self._head_budget < 0:
            self._done = True
            raise self._error(
                f"the proxy {self.proxy.display} sent answer heads over {self._max_head} bytes"
            )
        self._buffer = bytearray(rest)
        return head

    def _handle_head(self, head: bytes) -> None:
        lines = head.replace(b"\r\n", b"\n").split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        status_line = lines[0] if lines else b""
        match = _STATUS_LINE.fullmatch(status_line)
        if match is None:
            self._done = True
            shown = sanitize_peer_text(status_line.decode("latin-1"), cap=_MAX_TEXT)
            raise self._error(
                f"the proxy {self.proxy.display} answered the CONNECT with something "
                f"that is not HTTP/1.1: {shown!r}"
            )
        headers: list[tuple[bytes, bytes]] = []
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon or _HEADER_NAME.fullmatch(name) is None:
                self._done = True
                shown = sanitize_peer_text(line.decode("latin-1"), cap=_MAX_TEXT)
                raise self._error(
                    f"the proxy {self.proxy.display} sent a malformed header line: {shown!r}"
                )
            headers.append((name.lower(), value.strip(b" \t")))
        status = int(match.group(1))
        if 100 <= status < 200:
            if status == 101:  # RFC 9110 § 15.2.2: not an answer a CONNECT can have
                self._done = True
                raise self._error(
                    f"the proxy {self.proxy.display} answered the CONNECT with 101",
                    status,
                )
            return  # RFC 9110 § 15.2: interim; the final answer follows
        self._done = True
        reason = sanitize_peer_text((match.group(2) or b"").decode("latin-1"), cap=_MAX_TEXT)
        said = f"{status} {reason}".rstrip()
        if status == 407:
            challenges = [v for k, v in headers if k == b"proxy-authenticate"]
            schemes = sorted({c.split(b" ", 1)[0].decode("latin-1") for c in challenges if c})
            asked = f" (it asks for {', '.join(schemes)})" if schemes else ""
            given = (
                "the credentials in the proxy URL were refused"
                if self.proxy.authorization is not None
                else "the proxy URL carries no credentials"
            )
            error = ProxyAuthenticationError(
                f"{self._prefix}the proxy {self.proxy.display} requires authentication: "
                f"it answered "
                f"{sanitize_peer_text(said, cap=_MAX_TEXT)}{asked}; {given}"
            )
            error.http_status = status
            error.proxy = self.proxy.display
            raise error
        if not 200 <= status < 300:
            raise self._error(
                f"the proxy {self.proxy.display} refused the CONNECT to {self.target}: HTTP {said}",
                status,
            )
        if self._buffer:
            raise self._error(
                f"the proxy {self.proxy.display} sent data after its answer to the "
                "CONNECT, before the client spoke"
            )
        self.established = True

    def _error(self, message: str, status: int | None = None) -> ProxyError:
        error = ProxyError(self._prefix + message)
        error.http_status = status
        error.proxy = self.proxy.display
        return error
