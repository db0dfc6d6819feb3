"""The Trio shell's HTTP base: the connection pool, the session state, POSTs and
their responses (JSON or an SSE stream, resumed when it breaks, read past the answer in
the background). The transports themselves are in ``_http``."""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpcore
import trio

from mcp_io_common.httpcore_glue import (
    ERROR_BODY_CAP,
    HTTPCORE_ERRORS,
    MAX_CONNECTIONS,
    MAX_RESUMES,
    PostHeads,
    enc,
    header,
    str_headers,
    transport_error,
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
    session_expired_error,
)
from mcp_proto.session import ServerInfo, Session
from mcp_proto.sse import SSEEvent, SSEParser

from ._base import BaseServer
from ._chunks import Next, drop_chunks, read_chunks
from ._chunks import each_chunk as _each_chunk
from ._pool import AsyncConnectionPool

__all__ = ["_HttpServer"]


class _HttpServer(BaseServer):
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
        self._pool: AsyncConnectionPool | httpcore.AsyncConnectionPool | None = None
        self._state = HttpSessionState(configured_headers=dict(config.headers))
        self._heads = PostHeads(self._state, streamable=self.streamable, gzip=self.request_gzip)
        self._scope = trio.CancelScope()
        # Scopes of the tasks reading the rest of a POST's SSE stream after the answer
        # (see _read_tail): cancelled on close.
        self._tails: set[trio.CancelScope] = set()
        url = config.endpoint_url
        if url is None:
            raise ValueError(f"server {self.name!r}: an HTTP transport needs a URL")
        self.url: str = url

    async def _open(self) -> None:
        self._scope = trio.CancelScope()
        self._state.reset_session()
        if self._pool is None:
            self._pool = self._new_pool()

    def _new_pool(self) -> AsyncConnectionPool | httpcore.AsyncConnectionPool:
        # TLS verification stays on unless the caller hands in its own context.
        if self._proxy:
            return httpcore.AsyncConnectionPool(
                ssl_context=self._ssl_context,
                proxy=httpcore.Proxy(self._proxy),
                max_connections=MAX_CONNECTIONS,
                retries=0,
            )
        return AsyncConnectionPool(ssl_context=self._ssl_context, max_connections=MAX_CONNECTIONS)

    async def _close(self) -> None:
        self._scope.cancel()
        for tail in self._tails:
            tail.cancel()
        pool, session_id = self._pool, self._state.session_id
        if pool is not None and session_id is not None:
            # Session management: DELETE the session we no longer need.
            with trio.move_on_after(5):
                try:
                    await pool.request(
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
            await pool.aclose()

    def _timeouts(self, read: float | None) -> dict[str, Any]:
        rt = self.read_timeout
        return {"timeout": {"connect": rt, "write": rt, "pool": rt, "read": read}}

    def _read_budget(self, deadline: float | None) -> float:
        if deadline is None:
            return self.read_timeout
        return max(0.001, deadline - trio.current_time())

    async def _after_handshake(self, session: Session, info: ServerInfo) -> None:
        self._state.protocol_version = info.protocol_version

    def _post_url(self) -> str:
        return self.url

    # ------------------------------------------------------------ sending

    async def _transmit(self, session: Session, deadline: float | None = None) -> None:
        for frame in session.data_to_send():
            await self._post(session, frame)

    async def _post(self, session: Session, frame: bytes) -> None:
        pool = self._pool
        if pool is None:
            raise ConnectionError(f"server {self.name!r} is not connected")
        request_id, method = frame_info(frame)
        what = f"{method or 'message'} to {self.name!r}"
        deadline = session.deadline_of(request_id) if request_id is not None else None
        sent_session = self._state.session_id is not None
        try:
            # ``async with`` by hand: the response may outlive this call, its rest read
            # (and the response closed) by a background task (see _read_tail).
            owner = pool.stream(
                b"POST",
                self._post_url(),
                headers=self._heads.get(),
                content=frame,
                extensions=self._timeouts(self._read_budget(deadline)),
            )
            response = await owner.__aenter__()
            try:
                if method == "initialize":
                    self._state.capture_session(str_headers(response.headers))
                handed_over = await self._handle(
                    session, response, request_id, method, sent_session, deadline, owner
                )
            except BaseException as exc:
                await owner.__aexit__(type(exc), exc, exc.__traceback__)
                raise
            if not handed_over:
                await owner.__aexit__(None, None, None)
        except HTTPCORE_ERRORS as exc:
            if deadline is not None and trio.current_time() >= deadline:
                await self._expire(session)
                return
            raise transport_error(exc, what) from None

    async def _handle(
        self,
        session: Session,
        response: httpcore.Response,
        request_id: Any,
        method: str | None,
        sent_session: bool,
        deadline: float | None,
        owner: Any,
    ) -> bool:
        """Take in a POST's response. True if the response (``owner``, its open
        context) was handed to a background task that reads the rest of it."""
        kind = classify_response(
            response.status, header(response.headers, b"content-type"), sent_session=sent_session
        )
        if kind is ResponseKind.ACCEPTED:
            async for _ in response.aiter_stream():
                pass
            return False
        if kind is ResponseKind.SESSION_EXPIRED:
            self._state.session_id = None  # dead: not to be DELETEd or sent again
            raise session_expired_error(self.name, method)
        if kind is ResponseKind.JSON:
            decoder = decoder_for(
                header(response.headers, b"content-encoding"),
                self.config.max_decompressed_body_bytes,
                max_plain=self._limits.max_line_size,
            )
            parts: list[bytes] = []

            def keep(chunk: bytes) -> bool:
                parts.append(decoder.feed(chunk))
                return False

            await _each_chunk(response, keep)
            parts.append(decoder.finish())
            self._deliver(session, [b"".join(parts)])
            return False
        if kind is ResponseKind.SSE:
            return await self._read_stream(session, response, request_id, deadline, owner)
        body = bytearray()

        def collect(chunk: bytes) -> bool:
            body.extend(chunk)
            return len(body) > ERROR_BODY_CAP

        await _each_chunk(response, collect)
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

    async def _read_stream(
        self,
        session: Session,
        response: httpcore.Response,
        request_id: Any,
        deadline: float | None,
        owner: Any,
    ) -> bool:
        """Feed a POST's SSE stream to the session; resume it with GET + Last-Event-ID
        if it breaks before our response arrived (2025-11-25 § Resumability). Once the
        response is in, the caller has it at once and the rest of the stream is read
        in the background (True: ``owner`` was handed over, see _read_tail)."""
        stream = SseStream()  # this POST's own cursor (2025-11-25 § Resumability)
        try:
            if await self._consume_sse(session, response, deadline, stream, request_id, owner):
                return True
        except HTTPCORE_ERRORS:
            pass
        resumes = 0
        while request_id is not None and session.is_pending(request_id):
            if deadline is not None and trio.current_time() >= deadline:
                await self._expire(session)
                return False
            if stream.last_event_id is None or resumes >= MAX_RESUMES:
                raise ResponseStreamClosedError(
                    f"server {self.name!r}: the response stream closed before the response"
                )
            resumes += 1
            await trio.sleep(self._state.reconnect_delay)
            await self._resume(session, stream, deadline, request_id)
        return False

    async def _resume(
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
            async with pool.stream(
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
                    await self._consume_sse(session, response, deadline, stream, request_id)
        except HTTPCORE_ERRORS:
            pass

    async def _consume_sse(
        self,
        session: Session,
        response: httpcore.Response,
        deadline: float | None,
        stream: SseStream,
        until: Any = None,
        owner: Any = None,
    ) -> bool:
        """Feed an SSE stream to the session. With ``until`` (a request id), stop as
        soon as that request is answered: a server need not close the stream, and the
        caller is waiting for exactly that answer. With ``owner`` too (a POST's open
        response), what follows the answer is read in the background instead of
        dropped (→ True: ``owner`` was handed over)."""
        decoder = decoder_for(
            header(response.headers, b"content-encoding"),
            self.config.max_decompressed_body_bytes,
        )
        parser = SSEParser(max_event_size=self._limits.max_line_size)
        expired = False

        def feed(chunk: bytes) -> None:
            data = decoder.feed(chunk)
            if data:  # an inflater may yield nothing yet (e.g. only a gzip header)
                parser.receive_data(data)
            self._pump_sse(session, parser, stream)

        def finish() -> None:
            tail = decoder.finish()
            if tail:
                parser.receive_data(tail)
            self._pump_sse(session, parser, stream)

        def on_chunk(chunk: bytes) -> Next:
            nonlocal expired
            feed(chunk)
            if until is not None and not session.is_pending(until):
                return Next.STOP if owner is None else Next.PAUSE
            if deadline is not None and trio.current_time() >= deadline:
                expired = True
                return Next.STOP
            return Next.GO

        chunks = response.aiter_stream()
        if not await read_chunks(chunks, on_chunk):
            return await self._hand_over_tail(session, chunks, feed, finish, owner)
        if expired:
            await self._expire(session)
            return False
        if until is not None and not session.is_pending(until):
            return False
        finish()
        return False

    async def _hand_over_tail(
        self,
        session: Session,
        chunks: AsyncIterator[bytes],
        feed: Callable[[bytes], None],
        finish: Callable[[], None],
        owner: Any,
    ) -> bool:
        """Start the task reading the rest of a POST stream (True), or, when the client
        is closing and there is no nursery to run it in, drop the rest (False)."""
        try:
            nursery = self._nursery()
            nursery.start_soon(self._read_tail, session, chunks, feed, finish, owner)
        except RuntimeError:
            await drop_chunks(chunks)
            return False
        return True

    async def _read_tail(
        self,
        session: Session,
        chunks: AsyncIterator[bytes],
        feed: Callable[[bytes], None],
        finish: Callable[[], None],
        owner: Any,
    ) -> None:
        """Read a POST's SSE stream on after the caller got its answer, and close it: a
        server may send notifications (or requests) there after the result, and they
        are delivered (issue 9, item 6), without making the caller wait for the end of
        the stream. Bounded: ``read_timeout`` in all, each read by the request's read
        timeout, cancelled when the connection is closed."""
        scope = trio.CancelScope(deadline=trio.current_time() + self.read_timeout)
        self._tails.add(scope)

        def on_chunk(chunk: bytes) -> Next:
            if session is not self._session:
                return Next.STOP  # a reconnect replaced the session: nothing to feed
            feed(chunk)
            return Next.GO

        try:
            with scope:
                if await read_chunks(chunks, on_chunk) and session is self._session:
                    finish()
        except HTTPCORE_ERRORS:
            pass  # the stream broke after the answer: nothing is waiting for it
        except MCPError as exc:
            self._logger.debug("server %s: after the response: %s", self.name, exc)
        finally:
            self._tails.discard(scope)
            with trio.CancelScope(shield=True):
                try:
                    await owner.__aexit__(None, None, None)
                except HTTPCORE_ERRORS:
                    pass

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
