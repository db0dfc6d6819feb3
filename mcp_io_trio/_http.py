"""The Trio shell's HTTP transports over httpcore's async pool (trio backend):
Streamable HTTP, plain HTTP and the deprecated HTTP+SSE.

The twin of ``mcp_io_sync._http``: the same core rules (``mcp_proto.http``,
``mcp_proto.sse``, ``mcp_proto.compression``), with tasks in the client's nursery
instead of threads and ``trio.move_on_at`` instead of timed waits.
"""

from __future__ import annotations

from typing import Any

import httpcore
import trio

from mcp_io_common.httpcore_glue import (
    ERROR_BODY_CAP,
    GET_READY_WAIT,
    HTTPCORE_ERRORS,
    deprecation_notice,
    enc,
    header,
    transport_error,
    without_channel,
)
from mcp_proto.config import ServerConfig
from mcp_proto.errors import ConnectionError, MCPError
from mcp_proto.frames import frame_info
from mcp_proto.http import (
    ResponseKind,
    SseStream,
    classify_response,
    error_for_response,
    resolve_sse_endpoint,
    unauthorized_error,
)
from mcp_proto.session import ServerInfo, Session
from mcp_proto.sse import SSEEvent, SSEParser

from ._chunks import each_chunk as _each_chunk
from ._http_base import _HttpServer

__all__ = ["HttpServer", "SseServer", "StreamableHttpServer"]


class StreamableHttpServer(_HttpServer):
    """Streamable HTTP (2025-11-25 § Transports)."""

    type = "streamable_http"
    request_gzip = True

    async def _after_handshake(self, session: Session, info: ServerInfo) -> None:
        await super()._after_handshake(session, info)
        answered = trio.Event()
        self._nursery().start_soon(self._get_loop, session, self._scope, answered)
        # As in the blocking shell: give the server a moment to open the GET stream, so
        # that what it sends there right after the handshake is not lost.
        with trio.move_on_after(min(self.read_timeout, GET_READY_WAIT)):
            await answered.wait()

    async def _get_loop(
        self, session: Session, scope: trio.CancelScope, answered: trio.Event | None = None
    ) -> None:
        """The optional GET stream, resumed with Last-Event-ID when it drops.
        ``answered`` is set once the server answered (or failed) the first GET."""
        try:
            await self._get_streams(session, scope, answered)
        finally:
            if answered is not None:
                answered.set()

    async def _get_streams(
        self, session: Session, scope: trio.CancelScope, answered: trio.Event | None
    ) -> None:
        failures = 0
        # The standalone stream's own cursor: the first GET carries no Last-Event-ID
        # (another stream's id would make the server take it for a resume of that one
        # and never open this stream); a reconnect resumes this stream from its own id.
        stream = SseStream()
        with scope:
            while session is self._session:
                pool = self._pool
                if pool is None:
                    return
                try:
                    async with pool.stream(
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
                            await self._consume_sse(session, response, None, stream)
                        elif kind is ResponseKind.SERVER_ERROR:
                            failures += 1
                        else:
                            return  # 405: no GET stream offered; 4xx / expired: stop
                except HTTPCORE_ERRORS:
                    failures += 1
                except MCPError as exc:
                    self._logger.debug("server %s: GET stream: %s", self.name, exc)
                    failures += 1
                if failures > 10:
                    return
                delay = self._state.reconnect_delay * (2 ** min(failures, 5) if failures else 1)
                await trio.sleep(min(delay, 30.0))


class HttpServer(_HttpServer):
    """Plain HTTP: JSON over POST, no channel for server requests (HTTP-4)."""

    type = "http"
    streamable = False

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        capabilities = kwargs.pop("capabilities")
        super().__init__(config, capabilities=lambda: without_channel(capabilities()), **kwargs)


class SseServer(_HttpServer):
    """The deprecated HTTP+SSE transport (2024-11-05)."""

    type = "sse"
    streamable = False

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._endpoint: str | None = None
        self._endpoint_ready = trio.Event()
        self._stream_error: MCPError | None = None
        self._alive = False
        self._ping_scope = trio.CancelScope()

    def _transport_alive(self) -> bool:
        return self._alive

    async def _close(self) -> None:
        self._ping_scope.cancel()
        await super()._close()

    def _post_url(self) -> str:
        if self._endpoint is None:
            raise ConnectionError(f"server {self.name!r}: no endpoint announced yet")
        return self._endpoint

    async def _open(self) -> None:
        await super()._open()
        self._endpoint = None
        self._endpoint_ready = ready = trio.Event()
        self._stream_error = None
        self._nursery().start_soon(self._stream_loop, self._scope, ready)
        with trio.move_on_after(self.read_timeout):
            await ready.wait()
        if self._endpoint is None:
            self._scope.cancel()
            raise self._stream_error or ConnectionError(
                f"server {self.name!r} announced no endpoint in time"
            )
        self._alive = True
        deprecation_notice(self._logger)

    async def _after_handshake(self, session: Session, info: ServerInfo) -> None:
        await super()._after_handshake(session, info)
        if self.config.ping:
            # A scope of its own (a CancelScope can be entered once): cancelled on close.
            self._ping_scope = trio.CancelScope()
            self._nursery().start_soon(self._ping_loop, session, self._ping_scope)

    async def _ping_loop(self, session: Session, scope: trio.CancelScope) -> None:
        """SSE keep-alive (SSE-5): three unanswered pings in a row drop the connection."""
        interval = self.config.ping or 0.0
        failures = 0
        with scope:
            while session is self._session:
                await trio.sleep(interval)
                if session is not self._session:
                    return
                try:
                    await self.request("ping", timeout=interval * 2.5)
                    failures = 0
                except MCPError:
                    failures += 1
                    if failures >= 3 and session is self._session:
                        self._logger.warning(
                            "server %s: no answer to 3 pings; reconnecting", self.name
                        )
                        self._alive = False
                        self._lost(
                            session, ConnectionError(f"server {self.name!r} stopped answering")
                        )
                        return

    def _on_endpoint(self, event: SSEEvent) -> None:
        if self._endpoint is not None:
            return
        try:
            self._endpoint = resolve_sse_endpoint(self.url, event.data)
        except MCPError as exc:
            self._stream_error = exc
        self._endpoint_ready.set()

    async def _stream_loop(self, scope: trio.CancelScope, ready: trio.Event) -> None:
        """Read the event stream of one connection. ``scope`` and ``ready`` are that
        connection's own: a loop still unwinding after a reconnect must not touch the
        next connection's state."""
        pool = self._pool
        error: MCPError = ConnectionError(f"server {self.name!r} closed the event stream")
        cancelled = False
        try:
            with scope:
                if pool is None:
                    return
                async with pool.stream(
                    b"GET",
                    self.url,
                    headers=enc(self._state.get_headers()),
                    extensions=self._timeouts(None),
                ) as response:
                    kind = classify_response(
                        response.status,
                        header(response.headers, b"content-type"),
                        sent_session=False,
                    )
                    if kind is ResponseKind.UNAUTHORIZED:  # typed from facts (issue 9)
                        error = unauthorized_error(
                            response.status, header(response.headers, b"www-authenticate")
                        )
                        self._stream_error = error
                        return
                    if kind is not ResponseKind.SSE:
                        error = ConnectionError(
                            f"server {self.name!r}: GET {self.url} answered HTTP "
                            f"{response.status}, not an event stream"
                        )
                        self._stream_error = error
                        return
                    await self._read_events(response)
            cancelled = scope.cancelled_caught
        except HTTPCORE_ERRORS as exc:
            error = transport_error(exc, f"event stream of {self.name!r}")
            if self._stream_error is None:
                self._stream_error = error
        except MCPError as exc:
            error = exc
            self._stream_error = exc
        finally:
            ready.set()
            if scope is self._scope:
                self._alive = False
                if not cancelled and not scope.cancel_called and self._session is not None:
                    self._lost(self._session, error)

    async def _read_events(self, response: httpcore.Response) -> None:
        parser = SSEParser(max_event_size=self._limits.max_line_size)

        def on_chunk(chunk: bytes) -> bool:
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
            if messages and self._session is not None:
                self._deliver(self._session, messages)
            return False

        await _each_chunk(response, on_chunk)

    async def _transmit(self, session: Session, deadline: float | None = None) -> None:
        for frame in session.data_to_send():
            await self._post_legacy(frame)

    async def _post_legacy(self, frame: bytes) -> None:
        pool = self._pool
        if pool is None:
            raise ConnectionError(f"server {self.name!r} is not connected")
        _, method = frame_info(frame)
        try:
            async with pool.stream(
                b"POST",
                self._post_url(),
                headers=enc(self._state.post_headers(streamable=False)),
                content=frame,
                extensions=self._timeouts(self.read_timeout),
            ) as response:
                body = bytearray()

                def collect(chunk: bytes) -> bool:
                    if len(body) < ERROR_BODY_CAP:
                        body.extend(chunk)
                    return False

                await _each_chunk(response, collect)
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
