"""The exchanges and SSE streams of the HTTP transports (2025-11-25 Basic § Transports):
what :class:`~mcp_proto.connection._http.HttpTransport` (Streamable and plain HTTP) and
the legacy HTTP+SSE transport build on.

* the exchanges in flight, by exchange id, each emitted as a ``StartExchange`` frame
  and forgotten (``AbortExchange``) when nothing more is wanted from it;
* a read timeout per exchange: what is left of its request's own timeout;
* SSE streams: each event's data is a message for the machine; each stream keeps its
  own cursor (a POST's, shared with its resumptions; the standalone GET's; or one of
  its own), and a POST stream that ends before its request's answer is resumed with
  GET and its own ``Last-Event-ID`` after the server's ``retry:`` delay, at most
  ``MAX_RESUMES`` times, else ``ResponseStreamClosedError`` (§ Resumability);
* the standalone GET stream (Streamable HTTP): opened after the handshake without a
  ``Last-Event-ID``, requests held until it is answered or ``GET_READY_WAIT`` passed;
  it reconnects after 5xx/network failures with backoff and stops on 405/4xx/expiry or
  after ``GET_MAX_FAILURES`` failures in a row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import jsonrpc
from ..compression import decoder_for
from ..errors import MCPError, ResponseStreamClosedError
from ..http import HttpSessionState, ResponseKind, SseStream
from ..sse import SSEEvent, SSEParser
from ._exchange import (
    GET_MAX_DELAY,
    GET_MAX_FAILURES,
    GET_READ_TIMEOUT_FLOOR,
    MAX_RESUMES,
    Exchange,
    Mode,
    PostStream,
    Role,
)
from ._transport import Transport
from .frames import AbortExchange, StartExchange

if TYPE_CHECKING:
    from ._oauth import OAuthSession
    from ._transport import TransportPort

__all__ = ["HttpStreams"]


def _header(headers: list[tuple[str, str]], name: str) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


class HttpStreams(Transport):
    timed = True  # POST-stream tails, resume delays, the GET stream, keep-alive

    def __init__(self, port: TransportPort) -> None:
        super().__init__(port)
        config = port.config
        url = config.endpoint_url
        if url is None:  # pragma: no cover - ServerConfig guarantees a URL
            raise ValueError(f"server {port.name!r}: an HTTP transport needs a URL")
        self.url: str = url
        self.http = HttpSessionState(configured_headers=dict(config.headers))
        self._next_xid = 1
        self._ex: dict[int, Exchange] = {}
        self._streams: dict[jsonrpc.RequestId, PostStream] = {}
        # The streams waiting to be resumed (resume_at set): next_deadline() runs after
        # every input, so it looks at these few, not at every stream in flight.
        self._resuming: dict[jsonrpc.RequestId, PostStream] = {}
        # The standalone GET stream (Streamable HTTP).
        self._get_cursor = SseStream()
        self._get_xid: int | None = None
        self._get_failures = 0
        self._get_retry_at: float | None = None
        self._ready_at: float | None = None  # the GET-ready wait's deadline
        # notifications/initialized is on its way and not yet taken by the server.
        self._note_waiting = False
        # POST streams read on after their answer (notifications after the result), by
        # xid: until when. A server that keeps one open (keep-alive comments) would
        # otherwise hold a connection and a reader for ever, one per call.
        self._tails: dict[int, float] = {}
        # OAuth (issue 21): only for a server with an oauth_provider, so a client
        # without one never loads the OAuth core.
        self.oauth: OAuthSession | None = None
        provider = config.oauth_provider
        if provider is not None:
            from ._oauth import OAuthSession

            self.oauth = OAuthSession(self, provider)  # type: ignore[arg-type]

    # ============================================================ exchanges

    def _xid(self) -> int:
        xid = self._next_xid
        self._next_xid += 1
        return xid

    def _drop(self, ex: Exchange) -> None:
        """Nothing more is wanted from ``ex``: forget it and tell the driver."""
        self._tails.pop(ex.xid, None)
        if self._ex.pop(ex.xid, None) is not None:
            self.port.emit(AbortExchange(ex.xid))
        if ex.xid == self._get_xid:
            self._get_xid = None

    def _done(self, ex: Exchange) -> None:
        """``ex`` ended (its end or failure was fed): forget it."""
        self._tails.pop(ex.xid, None)
        self._ex.pop(ex.xid, None)
        if ex.xid == self._get_xid:
            self._get_xid = None

    def _start(self, ex: Exchange, frame: StartExchange, now: float | None = None) -> None:
        """Emit ``frame`` for ``ex``, kept until its head in case it is redirected (or
        refused with a 401/403 its OAuth flow answers); with the server's OAuth token
        (SHTTP-10)."""
        if self.oauth is not None:
            frame = self.oauth.present(frame, now)
        ex.request = frame
        self.port.emit(frame)

    def _presented(self, frame: StartExchange, now: float | None) -> StartExchange:
        """``frame`` with the server's OAuth token, if it has one (SHTTP-10)."""
        return frame if self.oauth is None else self.oauth.present(frame, now)

    def _read_timeout(self, rid: jsonrpc.RequestId | None, now: float) -> float:
        deadline = self.port.deadline_of(rid) if rid is not None else None
        if deadline is None:
            return self.port.config.read_timeout
        return max(0.001, deadline - now)

    # ============================================================ reading

    def _feed_sse(self, ex: Exchange, data: bytes, now: float) -> None:
        assert ex.parser is not None
        try:
            ex.parser.receive_data(data)
        except MCPError:
            # Complete events before the oversized one are delivered first.
            self._pump_sse(ex, now)
            raise

    def _pump_sse(self, ex: Exchange, now: float) -> None:
        parser = ex.parser
        assert parser is not None
        # Each stream's own cursor (2025-11-25 § Resumability): a POST's (shared with
        # its resumptions), the standalone GET's, or, for a stream nobody resumes (a
        # notification's), one of its own.
        if ex.stream is not None:
            cursor = ex.stream.cursor
        elif ex.role is Role.GET:
            cursor = self._get_cursor
        else:
            cursor = ex.cursor
        port = self.port
        while True:
            event = parser.next_event()
            if not isinstance(event, SSEEvent):
                break
            self.http.note_event(event, cursor)
            if event.data and event.event in ("message", ""):
                if ex.rid is not None and port.listens_on(ex.rid):
                    port.deliver_listen(ex.rid, event.data.encode("utf-8"), now)
                else:
                    port.deliver(event.data.encode("utf-8"), ex.rid)
            else:
                self.on_event(ex, event, now)
        # A priming event carries only an id: it still moves this stream's cursor.
        cursor.note_id(parser.last_event_id)
        if ex.role is Role.RESUME and ex.rid is not None and not self._pending(ex.rid):
            self._drop(ex)  # answered: a resumed stream is not read further

    def on_event(self, ex: Exchange, event: SSEEvent, now: float) -> None:
        """An SSE event that is not a message (the legacy ``endpoint``)."""

    def _pending(self, rid: jsonrpc.RequestId) -> bool:
        return self.port.is_pending(rid)

    def _sse_ended(self, ex: Exchange, now: float) -> None:
        """A POST/resume stream ended or broke."""
        if ex.role is Role.GET:
            # The standalone stream ended cleanly: reconnect after the server's delay.
            self._get_retry_at = now + self.http.reconnect_delay
            return
        stream = ex.stream
        if stream is not None:
            self._stream_broke(stream, now)

    def _stream_broke(self, stream: PostStream, now: float) -> None:
        if not self._pending(stream.rid):
            self._streams.pop(stream.rid, None)
            return
        deadline = self.port.deadline_of(stream.rid)
        if deadline is not None and now >= deadline:
            # The stream broke because the request outlived its timeout (the read
            # timeout is what was left of it): that is the timeout, not a broken stream.
            self._streams.pop(stream.rid, None)
            self.port.expire(now)
            return
        if (
            stream.cursor.last_event_id is None
            or stream.resumes >= MAX_RESUMES
            or self.port.era == "modern"  # SHTTP-6: no resumption; RETRY-7 re-issues
        ):
            self._streams.pop(stream.rid, None)
            self.port.attempt_failed(
                stream.rid,
                ResponseStreamClosedError(
                    f"server {self.port.name!r}: the response stream closed before the response"
                ),
                now,
            )
            return
        stream.resumes += 1
        stream.resume_at = now + self.http.reconnect_delay
        self._resuming[stream.rid] = stream

    def _resume(self, stream: PostStream, now: float) -> None:
        if not self._pending(stream.rid):
            self._streams.pop(stream.rid, None)
            return
        ex = Exchange(
            self._xid(),
            Role.RESUME,
            rid=stream.rid,
            method=stream.method,
            sent_session=self.http.session_id is not None,
            stream=stream,
        )
        self._ex[ex.xid] = ex
        # Resumed with this stream's own id (2025-11-25 § Resumability).
        self.port.emit(
            self._presented(
                StartExchange(
                    ex.xid,
                    "GET",
                    self.url,
                    tuple(self.http.get_headers(stream.cursor)),
                    None,
                    self._read_timeout(stream.rid, now),
                    False,
                ),
                now,
            )
        )

    # ============================================================ the GET stream

    def _open_get(self, now: float) -> None:
        ex = Exchange(self._xid(), Role.GET, sent_session=self.http.session_id is not None)
        self._ex[ex.xid] = ex
        self._get_xid = ex.xid
        # The standalone stream's own cursor: the first GET carries no Last-Event-ID
        # (another stream's id would make the server take it for a resume of that
        # one); a reconnect resumes it from its own id.
        self._start(
            ex,
            StartExchange(
                ex.xid,
                "GET",
                self.url,
                tuple(self.http.get_headers(self._get_cursor)),
                None,
                max(self.port.config.read_timeout, GET_READ_TIMEOUT_FLOOR),
                True,
            ),
            now,
        )

    def _release(self, now: float) -> None:
        """The GET-ready wait is over: requests flow (once the server took
        notifications/initialized)."""
        if self._ready_at is not None:
            self._ready_at = None
            if not self._note_waiting:
                self.port.ready(now)

    def _note_taken(self, now: float) -> None:
        """The server took notifications/initialized: requests flow (once the GET-ready
        wait is over)."""
        if self._note_waiting:
            self._note_waiting = False
            if self._ready_at is None:
                self.port.ready(now)

    def _get_head(
        self, ex: Exchange, kind: ResponseKind, headers: list[tuple[str, str]], now: float
    ) -> None:
        self._release(now)
        if kind is ResponseKind.SSE:
            self._get_failures = 0
            ex.mode = Mode.SSE
            ex.decoder = decoder_for(
                _header(headers, "content-encoding"), self.port.config.max_decompressed_body_bytes
            )
            ex.parser = SSEParser(max_event_size=self.port.max_line_size)
            return
        self._drop(ex)
        oauth = self.oauth
        if oauth is not None and oauth.refused_stream(ex, self._reopen_get, self._get_refused, now):
            return  # a 401: opened again once authorized (issue 21, _oauth.py)
        if kind is ResponseKind.SERVER_ERROR:
            self._get_failed(now)
        # 405 (no GET stream offered), other 4xx, an expired session: stop.

    def _reopen_get(self, now: float) -> None:
        """The GET stream's OAuth flow gave a token: open it again (unless another
        opened meanwhile, or the transport was reset)."""
        if self._get_xid is None:
            self._open_get(now)
            if self._get_xid is not None:  # its 2xx proves the authorization (the bound)
                self._ex[self._get_xid].authorizations = 1

    def _get_refused(self, error: MCPError, now: float) -> None:
        """The GET stream's OAuth flow failed: the stream stays closed (it is optional;
        the requests that need the flow fail with its error themselves)."""
        self.port.diagnostic("debug", f"server {self.port.name!r}: GET stream: {error}")

    def _get_failed(self, now: float) -> None:
        self._release(now)
        self._get_failures += 1
        if self._get_failures >= GET_MAX_FAILURES:
            self.port.drain(now)  # what arrived first is reported first
            self.port.diagnostic(
                "debug",
                f"server {self.port.name!r}: the GET stream failed "
                f"{self._get_failures} times in a row; not reopened",
            )
            return
        delay = self.http.reconnect_delay * 2 ** min(self._get_failures, 5)
        self._get_retry_at = now + min(delay, GET_MAX_DELAY)
