"""The deprecated HTTP+SSE strategy (2024-11-05 § Transports, HTTP with SSE).

``OpenTransport``, then a streaming GET of the event stream; its ``endpoint`` event
(resolved by :func:`mcp_proto.http.resolve_sse_endpoint`: same origin only, UT-5)
makes the transport usable and the handshake starts. Each message is a POST to that
endpoint, which must answer 2xx; answers arrive on the event stream. One POST at a time:
the next starts once the previous one's head arrived (or it ended), so messages reach
the server in the order they were sent; the connection is ready once the server took
``notifications/initialized`` (2024-11-05 Lifecycle § Initialization: no request
before it; issue 24 B). The stream
ending, or ``config.ping`` keep-alive pings unanswered three times in a row (SSE-5),
is the connection going away (``Disconnected``); the machine then reconnects in the
background (``_reconnect.py``, SSE-5). The
deprecation notice is a ``Diagnostic``, once per process (DEP-5, DEP-9).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any, Final

from .. import deprecations
from ..compression import decoder_for
from ..errors import ConnectionError, MCPError
from ..http import ResponseKind, classify_response, resolve_sse_endpoint, unauthorized_error
from ..session import ServerInfo
from ..sse import SSEEvent, SSEParser
from ._exchange import Exchange, Mode, Role, failure_error
from ._http import HttpTransport
from ._http_streams import _header
from ._redirects import follow
from ._transport import Outgoing
from .frames import ExchangeFailure, OpenTransport, StartExchange

if TYPE_CHECKING:
    from ._transport import TransportPort

__all__ = ["KEEPALIVE_MISSES", "PING_TIMEOUT_FACTOR", "LegacySseTransport"]

#: Unanswered keep-alive pings in a row that mean the stream is dead (SSE-5).
KEEPALIVE_MISSES: Final = 3
#: A keep-alive ping's timeout, in ping intervals.
PING_TIMEOUT_FACTOR: Final = 2.5


class LegacySseTransport(HttpTransport):
    def __init__(self, port: TransportPort) -> None:
        super().__init__(port, streamable=False)
        self._endpoint: str | None = None
        self._endpoint_at: float | None = None  # the deadline for the endpoint event
        self._stream_xid: int | None = None
        self._ping_at: float | None = None
        self._misses = 0
        # Messages waiting for the POST in flight (``_posting``) to get its head.
        self._queue: deque[tuple[Exchange, StartExchange]] = deque()
        self._posting: int | None = None

    # ------------------------------------------------------------ lifecycle

    def capabilities(self, caps: dict[str, Any]) -> dict[str, Any]:
        # The event stream is the channel for server requests (2024-11-05 § HTTP with
        # SSE): every capability is honoured. HttpTransport's rule (HTTP-4) is for plain
        # HTTP only, which has no such channel.
        return caps

    def open(self, now: float) -> None:
        self.reset()
        self.port.emit(OpenTransport())

    def opened(self, now: float) -> None:
        ex = Exchange(self._xid(), Role.STREAM)
        self._ex[ex.xid] = ex
        self._stream_xid = ex.xid
        self._endpoint_at = now + self.port.config.read_timeout
        self._start(
            ex,
            StartExchange(
                ex.xid, "GET", self.url, tuple(self.http.get_headers()), None, None, True
            ),
        )

    def handshake_done(self, info: ServerInfo, now: float) -> bool:
        # Ready once the server took notifications/initialized (its POST's 2xx head):
        # a request must not overtake it on another connection (issue 24 B).
        self._note_waiting = any(ex.is_init_note for ex in self._ex.values()) or any(
            ex.is_init_note for ex, _ in self._queue
        )
        # DEP (http_sse): announced once a server is reached over HTTP+SSE, not when it
        # is only tried (a fallback chain tries it on servers that are no such thing).
        # Handed to the driver, which announces it with the host's logger: claimed
        # there, confirmed once written, due again if the logger dropped it (DEP-12).
        if deprecations.state("http_sse") == "due":
            notice = deprecations.REGISTRY["http_sse"].notice
            self.port.diagnostic("warning", notice, deprecation="http_sse")
        ping = self.port.config.ping
        if ping:
            self._misses = 0
            self._ping_at = now + ping
        return not self._note_waiting

    def reset(self) -> None:
        self._queue.clear()  # (first: dropping the POST in flight would start the next)
        self._posting = None
        super().reset()
        self._endpoint = None
        self._endpoint_at = None
        self._stream_xid = None
        self._ping_at = None
        self._misses = 0

    def closing(self, now: float) -> None:
        # Answers and notifications handed over at close go out (the driver finishes
        # started exchanges); those still queued start now, as the transport closes and
        # nothing can wait for a head any more.
        queued = list(self._queue)
        self._queue.clear()
        for xid, ex in list(self._ex.items()):
            if ex.role is Role.LEGACY_POST and ex.rid is None:
                del self._ex[xid]
        for ex, frame in queued:
            if ex.rid is None:
                self.port.emit(frame)

    # ------------------------------------------------------------ sending

    def request_headers(self, out: Outgoing) -> tuple[tuple[str, str], ...]:
        return tuple(self.http.post_headers(streamable=False))

    def transmit(self, messages: list[Outgoing], now: float) -> None:
        endpoint = self._endpoint
        if endpoint is None:  # pragma: no cover - the handshake starts at the endpoint
            return
        for out in messages:
            ex = Exchange(
                self._xid(),
                Role.LEGACY_POST,
                rid=out.rid,
                method=out.method,
                is_init_note=out.method == "notifications/initialized",
            )
            frame = StartExchange(
                ex.xid,
                "POST",
                endpoint,
                self.request_headers(out),
                out.data,
                self.port.config.read_timeout,
                False,
            )
            self._queue.append((ex, frame))
        self._post_next()

    def _post_next(self) -> None:
        """Start the next queued POST unless one is waiting for its head: each POST
        opens its own exchange, and two in flight could reach the server in either
        order (issue 24 B)."""
        while self._posting is None and self._queue:
            ex, frame = self._queue.popleft()
            self._ex[ex.xid] = ex
            self._posting = ex.xid
            if self.oauth is not None:
                # The token current now (SHTTP-10), and the frame kept until its head
                # in case a 401 sends it again once authorized (issue 21).
                frame = self.oauth.present(frame, None)
                ex.request = frame
            self.port.emit(frame)

    def _posted(self, xid: int) -> None:
        """The POST ``xid`` got its head or ended: the next may go."""
        if xid == self._posting:
            self._posting = None
            self._post_next()

    def _drop(self, ex: Exchange) -> None:
        super()._drop(ex)
        self._posted(ex.xid)

    def _done(self, ex: Exchange) -> None:
        super()._done(ex)
        self._posted(ex.xid)

    # ------------------------------------------------------------ time

    def next_deadline(self) -> float | None:
        times = [t for t in (self._endpoint_at, self._ping_at) if t is not None]
        return min(times) if times else None

    def handle_timeout(self, now: float) -> None:
        if self._endpoint_at is not None and now >= self._endpoint_at:
            self._endpoint_at = None
            self._lost(
                ConnectionError(f"server {self.port.name!r} announced no endpoint in time"), now
            )
            return
        if self._ping_at is not None and now >= self._ping_at:
            self._ping_at = None
            port = self.port
            ping = port.config.ping
            if port.is_connected and ping:
                port.send_internal(
                    "ping", now=now, timeout=ping * PING_TIMEOUT_FACTOR, done=self._pong
                )

    def _pong(self, ok: bool, now: float) -> None:
        port = self.port
        ping = port.config.ping
        self._misses = 0 if ok else self._misses + 1
        if self._misses >= KEEPALIVE_MISSES:
            port.diagnostic(
                "warning",
                f"server {port.name!r}: no answer to {KEEPALIVE_MISSES} pings; reconnecting",
            )
            self._lost(ConnectionError(f"server {port.name!r} stopped answering pings"), now)
            return
        if ping:
            self._ping_at = now + ping

    def _lost(self, error: MCPError, now: float) -> None:
        self.port.lost(error, now)

    # ------------------------------------------------------------ inputs

    def exchange_head(
        self, xid: int, status: int, headers: list[tuple[str, str]], now: float
    ) -> None:
        ex = self._ex.get(xid)
        if ex is None or ex.mode is not Mode.HEAD:
            oauth = self.oauth
            if ex is None and oauth is not None and oauth.owns(xid):
                oauth.head(xid, status, headers)  # the OAuth flow's own exchange
            return
        oauth = self.oauth
        if oauth is not None and not 300 <= status < 400:
            oauth.seen(ex, status, headers)
            if status in (401, 403):
                ex.refused = ex.request  # opened or sent again once authorized
        if ex.role is Role.STREAM:
            if 300 <= status < 400:
                again = follow(self, ex, status, _header(headers, "location"))
                if again is not None:
                    self._stream_xid = again.xid
                    return
            else:
                ex.request = None  # (kept only until the head, as in HttpTransport)
            kind = classify_response(status, _header(headers, "content-type"), sent_session=False)
            challenge = _header(headers, "www-authenticate")
            if status in (401, 403) and oauth is not None:
                ex.status, ex.www_authenticate = status, challenge
                self._done(ex)
                self._stream_xid = None
                self._endpoint_at = None  # (set again when the stream is opened again)
                if oauth.refused_stream(ex, self._reopen_stream, self._lost, now):
                    return
            if kind is ResponseKind.UNAUTHORIZED:  # typed from facts (issue 9 item 4)
                self._done(ex)
                self._endpoint_at = None
                self._lost(unauthorized_error(status, challenge), now)
                return
            if kind is not ResponseKind.SSE:
                self._done(ex)
                error = ConnectionError(
                    f"server {self.port.name!r}: GET {self.url} answered HTTP {status}, "
                    "not an event stream"
                )
                error.http_status = status
                self._lost(error, now)
                return
            try:
                ex.decoder = decoder_for(
                    _header(headers, "content-encoding"),
                    self.port.config.max_decompressed_body_bytes,
                )
            except MCPError as exc:
                self._done(ex)
                self._lost(exc, now)
                return
            ex.mode = Mode.SSE
            ex.parser = SSEParser(max_event_size=self.port.max_line_size)
            return
        # A POST to the endpoint: 2xx is all it needs (answers come on the stream).
        ex.request = None
        ex.status = status
        ex.www_authenticate = _header(headers, "www-authenticate")
        ex.mode = Mode.DRAIN if 200 <= status < 300 else Mode.ERROR
        if ex.is_init_note and ex.mode is Mode.DRAIN:
            ex.is_init_note = False
            self._note_taken(now)
        self._posted(xid)

    def _reopen_stream(self, now: float) -> None:
        """The event stream's OAuth flow gave a token: open the stream again."""
        if self._stream_xid is None and self._endpoint is None:
            self.opened(now)
            if self._stream_xid is not None:  # its 2xx proves the authorization (the bound)
                self._ex[self._stream_xid].authorizations = 1

    def exchange_data(self, xid: int, data: bytes, now: float) -> None:
        ex = self._ex.get(xid)
        if ex is None:
            oauth = self.oauth
            if data and oauth is not None and oauth.owns(xid):
                oauth.data(xid, data, now)
            return
        super().exchange_data(xid, data, now)

    def _body_failed(self, ex: Exchange, error: MCPError, now: float) -> None:
        if ex.role is Role.STREAM:
            self._drop(ex)
            self._lost(error, now)
            return
        super()._body_failed(ex, error, now)

    def _sse_ended(self, ex: Exchange, now: float) -> None:
        if ex.role is Role.STREAM:
            self._lost(ConnectionError(f"server {self.port.name!r} closed the event stream"), now)
            return
        super()._sse_ended(ex, now)

    def exchange_failed(self, xid: int, failure: ExchangeFailure, now: float) -> None:
        ex = self._ex.get(xid)
        if ex is None:
            oauth = self.oauth
            if oauth is not None and oauth.owns(xid):
                oauth.failed(xid, failure, now)
            return
        if ex.role is Role.STREAM:
            self._done(ex)
            what = f"event stream of {self.port.name!r} at {self.url}"
            self._lost(failure_error(failure, what), now)
            return
        super().exchange_failed(xid, failure, now)

    def on_event(self, ex: Exchange, event: SSEEvent, now: float) -> None:
        if event.event != "endpoint" or ex.role is not Role.STREAM or self._endpoint is not None:
            return
        try:
            self._endpoint = resolve_sse_endpoint(self.url, event.data)
        except MCPError as exc:
            self._lost(exc, now)
            return
        self._endpoint_at = None
        self.port.usable(now)
