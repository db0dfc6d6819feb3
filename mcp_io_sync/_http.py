"""The blocking shell's HTTP transports over httpcore: Streamable HTTP, plain HTTP and
the deprecated HTTP+SSE.

Every rule (headers, what a status means, which error, what may be retried, how to
resume, where the legacy endpoint may point) is ``mcp_proto.http``'s; SSE parsing and
gzip are ``mcp_proto.sse`` and ``mcp_proto.compression``. This module moves bytes.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpcore

from mcp_io_common.httpcore_glue import (
    ERROR_BODY_CAP,
    GET_READY_WAIT,
    HTTPCORE_ERRORS,
    MAX_CONNECTIONS,
    MAX_RESUMES,
    PostHeads,
    deprecation_notice,
    enc,
    header,
    str_headers,
    transport_error,
    without_channel,
)
from mcp_proto.compression import decoder_for
from mcp_proto.config import ServerConfig
from mcp_proto.errors import (
    ConnectionError,
    MCPError,
    RemoteProtocolError,
    ResponseStreamClosedError,
)
from mcp_proto.frames import frame_info
from mcp_proto.http import (
    HttpSessionState,
    ResponseKind,
    SseStream,
    classify_response,
    error_for_response,
    resolve_sse_endpoint,
    session_expired_error,
    unauthorized_error,
)
from mcp_proto.session import ServerInfo, Session
from mcp_proto.sse import SSEEvent, SSEParser

from ._pool import ConnectionPool
from ._session_base import BaseServer

__all__ = ["HttpServer", "SseServer", "StreamableHttpServer"]


class _HttpServer(BaseServer):
    """Shared by the three HTTP transports: the pool, the session state, POSTs."""

    streamable = True
    request_gzip = False

    def __init__(
        self,
        config: ServerConfig,
        *,
        ssl_context: ssl.SSLContext | None = None,
        proxy: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(config, **kwargs)
        self._ssl_context = ssl_context
        self._proxy = proxy
        self._pool: ConnectionPool | httpcore.ConnectionPool | None = None
        self._state = HttpSessionState(configured_headers=dict(config.headers))
        self._heads = PostHeads(self._state, streamable=self.streamable, gzip=self.request_gzip)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        # Sockets of responses being read, shut down on close so that a thread blocked
        # reading a quiet stream wakes at once instead of at its read timeout.
        self._live: set[socket.socket] = set()
        url = config.endpoint_url
        if url is None:
            raise ValueError(f"server {self.name!r}: an HTTP transport needs a URL")
        self.url: str = url

    # ------------------------------------------------------------ pool

    def _new_pool(self) -> ConnectionPool | httpcore.ConnectionPool:
        # TLS verification stays on unless the caller hands in its own context.
        if self._proxy:
            return httpcore.ConnectionPool(
                ssl_context=self._ssl_context,
                proxy=httpcore.Proxy(self._proxy),
                max_connections=MAX_CONNECTIONS,
                retries=0,
            )
        return ConnectionPool(ssl_context=self._ssl_context, max_connections=MAX_CONNECTIONS)

    def _open(self) -> None:
        self._stop = threading.Event()
        self._state.reset_session()
        if self._pool is None:
            self._pool = self._new_pool()

    @contextmanager
    def _tracked(self, response: httpcore.Response) -> Iterator[None]:
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            self._live.add(sock)
        try:
            yield
        finally:
            if isinstance(sock, socket.socket):
                self._live.discard(sock)

    def _close(self) -> None:
        self._stop.set()
        for sock in list(self._live):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        pool, session_id = self._pool, self._state.session_id
        if pool is not None and session_id is not None:
            # Session management: a client that no longer needs the session SHOULD send
            # DELETE with its Mcp-Session-Id (405 means the server does not allow it).
            try:
                pool.request(
                    b"DELETE",
                    self.url,
                    headers=enc(self._state.delete_headers()),
                    extensions=self._timeouts(5.0),
                )
            except HTTPCORE_ERRORS:
                pass
        self._state.reset_session()
        self._pool = None
        if pool is not None:
            pool.close()
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout=5)
        self._threads = []

    def _timeouts(self, read: float | None) -> dict[str, Any]:
        rt = self.read_timeout
        return {"timeout": {"connect": rt, "write": rt, "pool": rt, "read": read}}

    def _after_handshake(self, session: Session, info: ServerInfo) -> None:
        # Sent on every request after initialization (Protocol Version Header).
        self._state.protocol_version = info.protocol_version

    # ------------------------------------------------------------ sending

    def _transmit(self, session: Session, waiter: Any = None) -> None:
        with self._lock:
            frames = session.data_to_send()
        for frame in frames:
            self._post(session, frame, waiter)

    def _send(self, session: Session, frames: list[bytes]) -> None:
        for frame in frames:
            self._post(session, frame, None)

    def _post_url(self) -> str:
        return self.url

    def _post(self, session: Session, frame: bytes, waiter: Any) -> None:
        pool = self._pool
        if pool is None:
            raise ConnectionError(f"server {self.name!r} is not connected")
        request_id, method = frame_info(frame)
        what = f"{method or 'message'} to {self.name!r}"
        deadline = self._deadline_of(session, request_id)
        sent_session = self._state.session_id is not None
        try:
            with pool.stream(
                b"POST",
                self._post_url(),
                headers=self._heads.get(),
                content=frame,
                extensions=self._timeouts(self._read_budget(deadline)),
            ) as response:
                if method == "initialize":
                    self._state.capture_session(str_headers(response.headers))
                with self._tracked(response):
                    self._handle(session, response, request_id, method, sent_session, deadline)
        except HTTPCORE_ERRORS as exc:
            if deadline is not None and time.monotonic() >= deadline:
                self._expire(session)
                return
            raise transport_error(exc, what) from None

    def _deadline_of(self, session: Session, request_id: Any) -> float | None:
        if request_id is None:
            return None
        with self._lock:
            return session.deadline_of(request_id)

    def _read_budget(self, deadline: float | None) -> float:
        if deadline is None:
            return self.read_timeout
        return max(0.001, deadline - time.monotonic())

    def _handle(
        self,
        session: Session,
        response: httpcore.Response,
        request_id: Any,
        method: str | None,
        sent_session: bool,
        deadline: float | None,
    ) -> None:
        kind = classify_response(
            response.status, header(response.headers, b"content-type"), sent_session=sent_session
        )
        if kind is ResponseKind.ACCEPTED:
            for _ in response.iter_stream():
                pass
            return
        if kind is ResponseKind.SESSION_EXPIRED:
            self._state.session_id = None  # dead: not to be DELETEd or sent again
            raise session_expired_error(self.name, method)
        if kind is ResponseKind.JSON:
            decoder = decoder_for(
                header(response.headers, b"content-encoding"),
                self.config.max_decompressed_body_bytes,
                max_plain=self._limits.max_line_size,
            )
            parts = [decoder.feed(chunk) for chunk in response.iter_stream()]
            parts.append(decoder.finish())
            self._deliver(session, [b"".join(parts)])
            return
        if kind is ResponseKind.SSE:
            self._read_stream(session, response, request_id, deadline)
            return
        body = bytearray()
        for chunk in response.iter_stream():
            body += chunk
            if len(body) > ERROR_BODY_CAP:
                break
        if kind is ResponseKind.UNEXPECTED:
            raise RemoteProtocolError(
                f"server {self.name!r} answered {method or 'a message'} with HTTP "
                f"{response.status} and an unexpected content type"
            )
        raise error_for_response(
            response.status,
            bytes(body),
            method=method,
            www_authenticate=header(response.headers, b"www-authenticate"),
        )

    def _read_stream(
        self, session: Session, response: httpcore.Response, request_id: Any, deadline: float | None
    ) -> None:
        """Feed a POST's SSE stream to the session; resume it with GET + Last-Event-ID
        if it breaks before our response arrived (2025-11-25 § Resumability)."""
        stream = SseStream()  # this POST's own cursor (2025-11-25 § Resumability)
        try:
            # Read the POST stream to its end even after our answer arrived: the server
            # closes it right after (2025-11-25: it SHOULD), and a stream read to its end
            # lets httpcore reuse the connection instead of opening a new one per call.
            self._consume_sse(session, response, deadline, stream)
        except HTTPCORE_ERRORS:
            pass  # judged below: did the response arrive?
        resumes = 0
        while request_id is not None and self._pending(session, request_id):
            if deadline is not None and time.monotonic() >= deadline:
                self._expire(session)
                return
            if stream.last_event_id is None or resumes >= MAX_RESUMES or self._stop.is_set():
                raise ResponseStreamClosedError(
                    f"server {self.name!r}: the response stream closed before the response"
                )
            resumes += 1
            self._stop.wait(self._state.reconnect_delay)
            self._resume(session, stream, deadline, request_id)

    def _pending(self, session: Session, request_id: Any) -> bool:
        with self._lock:
            return session.is_pending(request_id)

    def _resume(
        self,
        session: Session,
        stream: SseStream,
        deadline: float | None,
        request_id: Any,
    ) -> None:
        pool = self._pool
        if pool is None:
            return
        headers = self._state.get_headers(stream)  # resumed with this stream's own id
        try:
            with pool.stream(
                b"GET",
                self.url,
                headers=enc(headers),
                extensions=self._timeouts(self._read_budget(deadline)),
            ) as response:
                kind = classify_response(
                    response.status,
                    header(response.headers, b"content-type"),
                    sent_session=self._state.session_id is not None,
                )
                if kind is ResponseKind.SSE:
                    self._consume_sse(session, response, deadline, stream, request_id)
        except HTTPCORE_ERRORS:
            pass

    def _consume_sse(
        self,
        session: Session,
        response: httpcore.Response,
        deadline: float | None,
        stream: SseStream,
        until: Any = None,
    ) -> None:
        """Feed an SSE stream to the session. With ``until`` (a request id), stop as
        soon as that request is answered: a server need not close the stream, and the
        caller is waiting for exactly that answer."""
        decoder = decoder_for(
            header(response.headers, b"content-encoding"),
            self.config.max_decompressed_body_bytes,
        )
        parser = SSEParser(max_event_size=self._limits.max_line_size)
        for chunk in response.iter_stream():
            data = decoder.feed(chunk)
            if data:  # an inflater may yield nothing yet (e.g. only a gzip header)
                parser.receive_data(data)
            self._pump_sse(session, parser, stream)
            if until is not None and not self._pending(session, until):
                return
            if deadline is not None and time.monotonic() >= deadline:
                self._expire(session)
                return
            if self._stop.is_set():
                return
        tail = decoder.finish()
        if tail:
            parser.receive_data(tail)
        self._pump_sse(session, parser, stream)

    def _pump_sse(self, session: Session, parser: SSEParser, stream: SseStream) -> None:
        messages = []
        while True:
            event = parser.next_event()
            if not isinstance(event, SSEEvent):
                break
            self._state.note_event(event, stream)
            if event.data and event.event in ("message", ""):
                messages.append(event.data.encode("utf-8"))
            elif event.event == "endpoint":
                self._on_endpoint(event)
        stream.note_id(parser.last_event_id)
        self._deliver(session, messages)

    def _on_endpoint(self, event: SSEEvent) -> None:
        """Only the legacy transport expects ``endpoint`` events."""


class StreamableHttpServer(_HttpServer):
    """Streamable HTTP (2025-11-25 § Transports): a POST per message, JSON or SSE
    replies, an optional GET stream for server requests and notifications, sessions."""

    type = "streamable_http"
    request_gzip = True

    def _after_handshake(self, session: Session, info: ServerInfo) -> None:
        super()._after_handshake(session, info)
        answered = threading.Event()
        thread = threading.Thread(
            target=self._get_loop,
            args=(session, answered),
            name=f"mcp-get-{self.name}",
            daemon=True,
        )
        self._threads.append(thread)
        thread.start()
        # A server sends what is not tied to a request (list_changed, say, caused by the
        # first call) on the GET stream, and only if that stream is open then: wait
        # briefly for the server to answer the GET before the first request goes out.
        answered.wait(min(self.read_timeout, GET_READY_WAIT))

    def _get_loop(self, session: Session, answered: threading.Event | None = None) -> None:
        """The optional GET stream: opened after initialize, resumed with
        Last-Event-ID when it drops, abandoned if the server does not offer one.
        ``answered`` is set once the server answered (or failed) the first GET."""
        try:
            self._get_streams(session, answered)
        finally:
            if answered is not None:
                answered.set()

    def _get_streams(self, session: Session, answered: threading.Event | None) -> None:
        failures = 0
        stop = self._stop
        # The standalone stream's own cursor: the first GET carries no Last-Event-ID
        # (another stream's id would make the server take it for a resume of that one
        # and never open this stream); a reconnect resumes this stream from its own id.
        stream = SseStream()
        while not stop.is_set() and session is self._session:
            pool = self._pool
            if pool is None:
                return
            try:
                with pool.stream(
                    b"GET",
                    self.url,
                    headers=enc(self._state.get_headers(stream)),
                    extensions=self._timeouts(max(self.read_timeout, 300.0)),
                ) as response:
                    kind = classify_response(
                        response.status,
                        header(response.headers, b"content-type"),
                        sent_session=self._state.session_id is not None,
                    )
                    if answered is not None:
                        answered.set()
                    if kind is ResponseKind.SSE:
                        failures = 0
                        with self._tracked(response):
                            self._consume_sse(session, response, None, stream)
                    elif kind is ResponseKind.SERVER_ERROR:
                        failures += 1
                    else:
                        # 405 (no GET stream offered), 4xx, an expired session: stop.
                        return
            except HTTPCORE_ERRORS:
                failures += 1
            except MCPError as exc:
                self._logger.debug("server %s: GET stream: %s", self.name, exc)
                failures += 1
            if failures > 10:
                return
            delay = self._state.reconnect_delay * (2 ** min(failures, 5) if failures else 1)
            stop.wait(min(delay, 30.0))


class HttpServer(_HttpServer):
    """Plain HTTP: request/response JSON over POST, no streaming, no channel for
    server requests — so no client capability needing one is declared (HTTP-4)."""

    type = "http"
    streamable = False

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        capabilities = kwargs.pop("capabilities")
        super().__init__(config, capabilities=lambda: without_channel(capabilities()), **kwargs)


class SseServer(_HttpServer):
    """The deprecated HTTP+SSE transport (2024-11-05): a GET event stream announces a
    POST endpoint; responses arrive on the stream."""

    type = "sse"
    streamable = False

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._endpoint: str | None = None
        self._endpoint_ready = threading.Event()
        self._stream_error: MCPError | None = None
        self._alive = False

    def _transport_alive(self) -> bool:
        return self._alive

    def _post_url(self) -> str:
        if self._endpoint is None:
            raise ConnectionError(f"server {self.name!r}: no endpoint announced yet")
        return self._endpoint

    def _open(self) -> None:
        super()._open()
        self._endpoint = None
        self._endpoint_ready = ready = threading.Event()
        self._stream_error = None
        thread = threading.Thread(
            target=self._stream_loop, args=(ready,), name=f"mcp-sse-{self.name}", daemon=True
        )
        self._threads.append(thread)
        thread.start()
        if not ready.wait(self.read_timeout):
            self._stop.set()
            raise ConnectionError(f"server {self.name!r} announced no endpoint in time")
        if self._endpoint is None:
            self._stop.set()
            raise self._stream_error or ConnectionError(f"server {self.name!r}: no endpoint")
        self._alive = True
        deprecation_notice(self._logger)

    def _after_handshake(self, session: Session, info: ServerInfo) -> None:
        super()._after_handshake(session, info)
        if self.config.ping:
            thread = threading.Thread(
                target=self._ping_loop, args=(session,), name=f"mcp-ping-{self.name}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _ping_loop(self, session: Session) -> None:
        """SSE keep-alive (SSE-5): ping every ``config.ping`` seconds; three unanswered
        pings in a row mean the stream is dead, and the connection is dropped (the next
        request reconnects)."""
        interval = self.config.ping or 0.0
        failures = 0
        while not self._stop.wait(interval) and session is self._session:
            try:
                self.request("ping", timeout=interval * 2.5)
                failures = 0
            except MCPError:
                failures += 1
                if failures >= 3 and session is self._session:
                    self._logger.warning("server %s: no answer to 3 pings; reconnecting", self.name)
                    self._alive = False
                    self._lost(session, ConnectionError(f"server {self.name!r} stopped answering"))
                    return

    def _on_endpoint(self, event: SSEEvent) -> None:
        if self._endpoint is not None:
            return
        try:
            self._endpoint = resolve_sse_endpoint(self.url, event.data)
        except MCPError as exc:
            self._stream_error = exc
            self._stop.set()
        self._endpoint_ready.set()

    def _stream_loop(self, ready: threading.Event) -> None:
        """Read the event stream of one connection; ``ready`` and ``stop`` are that
        connection's own, so a loop still ending after a reconnect leaves the next
        connection's state alone."""
        pool = self._pool
        stop = self._stop
        error: MCPError = ConnectionError(f"server {self.name!r} closed the event stream")
        try:
            if pool is None:
                return
            with pool.stream(
                b"GET",
                self.url,
                headers=enc(self._state.get_headers()),
                extensions=self._timeouts(None),
            ) as response:
                kind = classify_response(
                    response.status, header(response.headers, b"content-type"), sent_session=False
                )
                if kind is ResponseKind.UNAUTHORIZED:  # typed from facts (issue 9)
                    error = unauthorized_error(
                        response.status, header(response.headers, b"www-authenticate")
                    )
                    self._stream_error = error
                    return
                if kind is not ResponseKind.SSE:
                    error = ConnectionError(
                        f"server {self.name!r}: GET {self.url} answered HTTP {response.status}, "
                        "not an event stream"
                    )
                    self._stream_error = error
                    return
                with self._tracked(response):
                    self._read_events(response)
        except HTTPCORE_ERRORS as exc:
            error = transport_error(exc, f"event stream of {self.name!r}")
            if self._stream_error is None:
                self._stream_error = error
        except MCPError as exc:
            error = exc
            self._stream_error = exc
        finally:
            ready.set()
            if stop is self._stop:
                self._alive = False
            if not stop.is_set() and stop is self._stop:
                with self._lock:
                    session = self._session
                if session is not None:
                    self._lost(session, error)

    def _read_events(self, response: httpcore.Response) -> None:
        parser = SSEParser(max_event_size=self._limits.max_line_size)
        for chunk in response.iter_stream():
            parser.receive_data(chunk)
            messages = []
            while True:
                event = parser.next_event()
                if not isinstance(event, SSEEvent):
                    break
                if event.event == "endpoint":
                    self._on_endpoint(event)
                elif event.data and event.event in ("message", ""):
                    messages.append(event.data.encode("utf-8"))
            if messages:
                with self._lock:
                    session = self._session
                if session is not None:
                    self._deliver(session, messages)
            if self._stop.is_set():
                return

    def _transmit(self, session: Session, waiter: Any = None) -> None:
        with self._lock:
            frames = session.data_to_send()
        for frame in frames:
            self._post_legacy(frame)

    def _post_legacy(self, frame: bytes) -> None:
        pool = self._pool
        if pool is None:
            raise ConnectionError(f"server {self.name!r} is not connected")
        _, method = frame_info(frame)
        try:
            with pool.stream(
                b"POST",
                self._post_url(),
                headers=enc(self._state.post_headers(streamable=False)),
                content=frame,
                extensions=self._timeouts(self.read_timeout),
            ) as response:
                body = bytearray()
                for chunk in response.iter_stream():
                    if len(body) < ERROR_BODY_CAP:
                        body += chunk
                if 200 <= response.status < 300:
                    return
                raise error_for_response(
                    response.status,
                    bytes(body),
                    method=method,
                    www_authenticate=header(response.headers, b"www-authenticate"),
                )
        except HTTPCORE_ERRORS as exc:
            raise transport_error(exc, f"{method or 'message'} to {self.name!r}") from None
