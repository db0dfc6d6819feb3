"""Streamable HTTP and plain HTTP strategies (2025-11-25 Basic § Transports).

Every message is a POST; its response is 202 (taken), JSON (one message) or an SSE
stream. What a status and content type mean, which typed error a failure is, the
headers of each request and the resumption cursors are :mod:`mcp_proto.http`'s; this
module sequences them over exchanges:

* the session id is captured from the head of the exchange that carried
  ``initialize`` (the connection tagged it: no byte matching);
* a 404 to a request that carried the session id expires the session
  (``TransportPort.session_expired``: new handshake, re-sends judged by the pipeline);
* a POST's SSE stream is read to its end (notifications after the result are
  delivered), for at most a tail after the answer;
* Streamable HTTP only: after the handshake the standalone GET stream is opened;
* close sends DELETE with the session id.

The exchanges themselves, reading SSE streams, resuming a POST stream and the GET
stream's policy are :mod:`._http_streams`' (the base class).

Plain HTTP: ``Accept: application/json``, no GET stream, and no client capability
that needs a server→client channel (HTTP-4).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from .. import jsonrpc
from ..compression import decoder_for
from ..errors import (
    MCPError,
    RemoteProtocolError,
)
from ..http import (
    ResponseKind,
    SseStream,
    classify_response,
    error_for_response,
    session_expired_error,
)
from ..session import ServerInfo
from ..sse import SSEParser
from ._era import modern_post_headers
from ._exchange import (
    DELETE_TIMEOUT,
    ERROR_BODY_CAP,
    GET_READ_TIMEOUT_FLOOR,
    GET_READY_WAIT,
    Exchange,
    Mode,
    PostStream,
    Role,
    failure_error,
)
from ._http_streams import HttpStreams, _header
from ._redirects import follow
from ._transport import Outgoing
from .frames import ExchangeFailure, OpenTransport, StartExchange

if TYPE_CHECKING:
    from ._transport import TransportPort

__all__ = ["HttpTransport", "without_channel"]

#: Client capabilities that need a channel for server requests (HTTP-4).
_CHANNEL_CAPABILITIES: Final = ("roots", "sampling", "elicitation")


def without_channel(caps: dict[str, Any]) -> dict[str, Any]:
    """Plain HTTP has no channel for server requests: declare nothing needing one."""
    return {k: v for k, v in caps.items() if k not in _CHANNEL_CAPABILITIES}


class HttpTransport(HttpStreams):
    def __init__(self, port: TransportPort, *, streamable: bool) -> None:
        super().__init__(port)
        self.streamable = streamable
        # Streamable HTTP: a request's notifications come on its own response stream
        # (2025-11-25 basic/transports.mdx § Sending Messages to the Server, item 6).
        self.single_channel = not streamable
        self._heads: tuple[tuple[str | None, str | None], tuple[tuple[str, str], ...]] | None
        self._heads = None

    # ============================================================ lifecycle

    def capabilities(self, caps: dict[str, Any]) -> dict[str, Any]:
        return caps if self.streamable else without_channel(caps)

    def headers_changed(self, headers: Mapping[str, str]) -> None:
        # Handshake-era requests take the configured headers from here; modern ones
        # from port.config (configured_headers in _era.py), already replaced.
        self.http.configured_headers = dict(headers)

    def open(self, now: float) -> None:
        self.http.reset_session()
        self.port.emit(OpenTransport())

    def negotiated(self, info: ServerInfo) -> None:
        # Sent on every request after initialization (Protocol Version Header),
        # notifications/initialized included.
        self.http.protocol_version = info.protocol_version

    def handshake_done(self, info: ServerInfo, now: float) -> bool:
        # The connection is usable once the server took notifications/initialized: a
        # server that answered initialize and then refuses the notification (a 4xx)
        # fails the connect with that error, as a POST of the handshake would (and,
        # having answered, it is an MCP server: no transport fallback; issue 9 item 3).
        self._note_waiting = any(ex.is_init_note for ex in self._ex.values())
        if self.streamable:
            self._get_cursor = SseStream()  # a new session: a new standalone stream
            self._get_failures = 0
            self._open_get(now)
            self._ready_at = now + min(self.port.config.read_timeout, GET_READY_WAIT)
        return self._ready_at is None and not self._note_waiting

    def reset(self) -> None:
        if self.oauth is not None:
            self.oauth.reset()
        for ex in list(self._ex.values()):
            self._drop(ex)
        self._tails.clear()
        self._streams.clear()
        self._resuming.clear()
        self._get_xid = None
        self._get_retry_at = None
        self._ready_at = None
        self._note_waiting = False
        self.http.reset_session()

    def closing(self, now: float) -> None:
        # Answers and notifications just handed over (refusals at close) go out: the
        # driver finishes started exchanges before closing the pool.
        for xid, ex in list(self._ex.items()):
            if ex.role is Role.POST and ex.rid is None:
                del self._ex[xid]
        session_id = self.http.session_id
        if session_id is not None:
            # Session management: a client that no longer needs the session SHOULD send
            # DELETE with its Mcp-Session-Id (405: the server does not allow it). Plain
            # HTTP too: its session is handled as Streamable HTTP's (HTTP-2, SESS-3).
            self.port.emit(
                self._presented(
                    StartExchange(
                        self._xid(),
                        "DELETE",
                        self.url,
                        tuple(self.http.delete_headers()),
                        None,
                        DELETE_TIMEOUT,
                        False,
                    ),
                    now,
                )
            )

    # ============================================================ sending

    def request_headers(self, out: Outgoing) -> tuple[tuple[str, str], ...]:
        """Hook: the headers of the POST carrying ``out``. Headers decided per request
        (``Mcp-Method``, ``Mcp-Name``, ``Authorization``) plug in here."""
        if out.headers is not None or self.port.era == "modern":
            port = self.port
            return modern_post_headers(port.config, port.server, out, streamable=self.streamable)
        http = self.http
        key = (http.protocol_version, http.session_id)
        cached = self._heads
        if cached is None or cached[0] != key:
            heads = tuple(http.post_headers(streamable=self.streamable, gzip=self.streamable))
            self._heads = cached = (key, heads)
        return cached[1]

    def post_url(self) -> str:
        return self.url

    def transmit(self, messages: list[Outgoing], now: float) -> None:
        port = self.port
        for out in messages:
            ex = Exchange(
                self._xid(),
                Role.POST,
                rid=out.rid,
                method=out.method,
                sent_session=self.http.session_id is not None,
                is_init=out.method == "initialize" and port.is_handshake(out.rid),
                # Only the handshake's own counts: handshake_done() (right after this
                # flush) starts waiting for it; a later one is an ordinary notification.
                is_init_note=out.method == "notifications/initialized",
            )
            self._ex[ex.xid] = ex
            # A subscriptions/listen stream stays open and may be quiet for long (its
            # acknowledgment has its own deadline, SUB-5): read in the background.
            listen = out.method == "subscriptions/listen"
            self._start(
                ex,
                StartExchange(
                    ex.xid,
                    "POST",
                    self.post_url(),
                    self.request_headers(out),
                    out.data,
                    max(port.config.read_timeout, GET_READ_TIMEOUT_FLOOR)
                    if listen
                    else self._read_timeout(out.rid, now),
                    listen,
                ),
                now,
            )

    def attempt_ended(self, rid: jsonrpc.RequestId, ok: bool, now: float | None = None) -> None:
        # A POST stream is read on after its answer (notifications after the result),
        # for at most read_timeout more (``now``: the answer's arrival); a resume GET
        # is not needed any more; a failed attempt's stream is closed (a timed-out or
        # cancelled request's stream is of no use).
        self._streams.pop(rid, None)
        for ex in list(self._ex.values()):
            if ex.rid != rid:
                continue
            if ex.role is Role.RESUME or not ok:
                self._drop(ex)
            elif ex.role is Role.POST and now is not None:
                self._tails[ex.xid] = now + self.port.config.read_timeout

    # ============================================================ time

    def next_deadline(self) -> float | None:
        best = self._get_retry_at
        ready = self._ready_at
        if ready is not None and (best is None or ready < best):
            best = ready
        if self._tails:  # (an exchange leaves it when it ends: _done, _drop)
            until = min(self._tails.values())
            if best is None or until < best:
                best = until
        if self._resuming:
            for rid, stream in list(self._resuming.items()):
                at = stream.resume_at
                if at is None or self._streams.get(rid) is not stream:
                    del self._resuming[rid]  # resumed, or its request ended
                elif best is None or at < best:
                    best = at
        return best

    def handle_timeout(self, now: float) -> None:
        if self._ready_at is not None and now >= self._ready_at:
            self._release(now)
        for xid, until in list(self._tails.items()):
            ex = self._ex.get(xid)
            if ex is None:
                del self._tails[xid]  # never left behind, or next_deadline would stay due
            elif now >= until:
                self.port.diagnostic(
                    "info",
                    f"server {self.port.name!r} kept the response stream of {ex.method} "
                    f"open {self.port.config.read_timeout:g}s after its answer; closed it",
                )
                self._drop(ex)
        if self._get_retry_at is not None and now >= self._get_retry_at:
            self._get_retry_at = None
            self._open_get(now)
        for rid, stream in list(self._resuming.items()):
            if self._streams.get(rid) is not stream:
                del self._resuming[rid]
            elif stream.resume_at is not None and now >= stream.resume_at:
                stream.resume_at = None
                del self._resuming[rid]
                self._resume(stream, now)

    # ============================================================ inputs

    def wants_exchange(self, xid: int) -> bool:
        return xid in self._ex or (self.oauth is not None and self.oauth.owns(xid))

    def oauth_reply(self, reply: object, now: float) -> None:
        if self.oauth is not None:
            self.oauth.reply(reply, now)

    def exchange_head(
        self, xid: int, status: int, headers: list[tuple[str, str]], now: float
    ) -> None:
        ex = self._ex.get(xid)
        if ex is None or ex.mode is not Mode.HEAD:
            oauth = self.oauth
            if ex is None and oauth is not None and oauth.owns(xid):
                oauth.head(xid, status, headers)
            return
        if 300 <= status < 400:
            if follow(self, ex, status, _header(headers, "location")) is not None:
                return
        else:
            oauth = self.oauth
            if oauth is not None:
                oauth.seen(ex, status, headers)
                if status in (401, 403) and ex.role in (Role.POST, Role.GET):
                    ex.refused = ex.request  # sent again once authorized (_oauth.py)
            ex.request = None  # (the usual head: no call to ask; the body is let go)
        ex.status = status
        ex.www_authenticate = _header(headers, "www-authenticate")
        kind = classify_response(
            status, _header(headers, "content-type"), sent_session=ex.sent_session
        )
        try:
            self._head(ex, kind, headers, now)
        except MCPError as exc:  # an unsupported Content-Encoding
            self._body_failed(ex, exc, now)

    def _head(
        self, ex: Exchange, kind: ResponseKind, headers: list[tuple[str, str]], now: float
    ) -> None:
        config = self.port.config
        if ex.role is Role.GET:
            self._get_head(ex, kind, headers, now)
            return
        if kind is ResponseKind.SESSION_EXPIRED:
            self._done(ex)
            self.http.session_id = None  # dead: not to be DELETEd or sent again
            self.port.session_expired(session_expired_error(self.port.name, ex.method), now)
            return
        if ex.is_init and 200 <= ex.status < 300:
            self.http.capture_session(headers)
        if ex.is_init_note and 200 <= ex.status < 300:
            ex.is_init_note = False
            self._note_taken(now)
        if kind is ResponseKind.ACCEPTED:
            ex.mode = Mode.DRAIN
        elif kind is ResponseKind.JSON and ex.role is Role.POST:
            ex.mode = Mode.JSON
            ex.decoder = decoder_for(
                _header(headers, "content-encoding"),
                config.max_decompressed_body_bytes,
                max_plain=self.port.max_line_size,
            )
        elif kind is ResponseKind.SSE:
            ex.mode = Mode.SSE
            ex.decoder = decoder_for(
                _header(headers, "content-encoding"), config.max_decompressed_body_bytes
            )
            ex.parser = SSEParser(max_event_size=self.port.max_line_size)
            if ex.stream is None and ex.rid is not None:
                ex.stream = self._streams[ex.rid] = PostStream(ex.rid, ex.method)
        elif ex.role is Role.RESUME:
            # The resume was refused: the stream stays broken.
            self._done(ex)
            if ex.stream is not None:
                self._stream_broke(ex.stream, now)
        else:
            ex.mode = Mode.ERROR

    def exchange_data(self, xid: int, data: bytes, now: float) -> None:
        ex = self._ex.get(xid)
        if ex is None or not data:
            oauth = self.oauth
            if ex is None and data and oauth is not None and oauth.owns(xid):
                oauth.data(xid, data, now)
            return
        try:
            if ex.mode is Mode.JSON:
                assert ex.decoder is not None
                ex.parts.append(ex.decoder.feed(data))
            elif ex.mode is Mode.SSE:
                assert ex.decoder is not None and ex.parser is not None
                text = ex.decoder.feed(data)
                if text:  # an inflater may yield nothing yet (only a gzip header)
                    self._feed_sse(ex, text, now)
                self._pump_sse(ex, now)
            elif ex.mode is Mode.ERROR:
                room = ERROR_BODY_CAP - ex.size
                if room > 0:
                    ex.parts.append(data[:room])
                    ex.size += min(room, len(data))
                if ex.size >= ERROR_BODY_CAP:
                    self._drop(ex)
                    self._judge_error(ex, now)
        except MCPError as exc:  # too large, malformed gzip
            self._body_failed(ex, exc, now)

    def exchange_end(self, xid: int, now: float) -> None:
        ex = self._ex.get(xid)
        if ex is None:
            oauth = self.oauth
            if oauth is not None and oauth.owns(xid):
                oauth.end(xid, now)
            return
        self._done(ex)
        try:
            if ex.mode is Mode.JSON:
                assert ex.decoder is not None
                ex.parts.append(ex.decoder.finish())
                self.port.deliver(b"".join(ex.parts))
            elif ex.mode is Mode.SSE:
                assert ex.decoder is not None and ex.parser is not None
                tail = ex.decoder.finish()
                if tail:
                    self._feed_sse(ex, tail, now)
                self._pump_sse(ex, now)
                self._sse_ended(ex, now)
            elif ex.mode is Mode.ERROR:
                self._judge_error(ex, now)
            elif ex.mode is Mode.HEAD:
                self._body_failed(
                    ex, RemoteProtocolError(f"{ex.what}: the response ended before its head"), now
                )
        except MCPError as exc:
            self._body_failed(ex, exc, now)

    def exchange_failed(self, xid: int, failure: ExchangeFailure, now: float) -> None:
        ex = self._ex.get(xid)
        if ex is None:
            oauth = self.oauth
            if oauth is not None and oauth.owns(xid):
                oauth.failed(xid, failure, now)
            return
        self._done(ex)
        if ex.role is Role.GET:
            self._get_failed(now)
            return
        if ex.mode is Mode.SSE:
            if ex.parser is not None:
                self.http.note_retry(ex.parser.retry)
            self._sse_ended(ex, now)
            return
        if ex.mode is Mode.ERROR:
            self._judge_error(ex, now)
            return
        # The URL too: a refused connection is about where it went (issue 24 E).
        url = ex.request.url if ex.request is not None else self.url
        what = f"{ex.what} to {self.port.name!r} at {url}"
        self._body_failed(ex, failure_error(failure, what), now)

    def _body_failed(self, ex: Exchange, error: MCPError, now: float) -> None:
        """``ex`` cannot be read (too large, bad gzip, the exchange failed)."""
        self._drop(ex)
        if ex.role is Role.GET:
            self.port.drain(now)  # what arrived first is reported first
            self.port.diagnostic("debug", f"server {self.port.name!r}: GET stream: {error}")
            self._get_failed(now)
            return
        self._attempt_error(ex, error, now)

    def _attempt_error(self, ex: Exchange, error: MCPError, now: float) -> None:
        if ex.is_init_note and self._note_waiting:
            self.port.drain(now)  # what arrived first is reported first
            self.port.connect_failed(error, now)
            return
        if ex.rid is None:
            # A notification or an answer: nobody waits for it; say so in the log.
            self.port.drain(now)  # what arrived first is reported first
            self.port.diagnostic(
                "debug", f"server {self.port.name!r}: could not send {ex.what}: {error}"
            )
            return
        deadline = self.port.deadline_of(ex.rid)
        if deadline is not None and now >= deadline:
            self.port.expire(now)  # the request's own timeout, with notifications/cancelled
            return
        self.port.attempt_failed(ex.rid, error, now)

    def _judge_error(self, ex: Exchange, now: float) -> None:
        if ex.refused is not None and self.oauth is not None and self.oauth.refused(ex, now):
            return  # an OAuth flow answers it (issue 21)
        if 200 <= ex.status < 300 or not (100 <= ex.status < 600):
            error: MCPError = RemoteProtocolError(
                f"server {self.port.name!r} answered {ex.what} with HTTP {ex.status} "
                "and an unexpected content type"
            )
        else:
            error = error_for_response(
                ex.status,
                b"".join(ex.parts),
                method=ex.method,
                www_authenticate=ex.www_authenticate,
                location=ex.location,
                redirects=ex.redirects,
            )
        self._attempt_error(ex, error, now)
