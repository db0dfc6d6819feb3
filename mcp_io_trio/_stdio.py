"""The Trio shell's stdio server: a child process, reader tasks, a session.

Same protocol core as the blocking shell (``mcp_proto.Session``, ``LineFramer``); only
the mechanics differ: tasks in the client's nursery instead of threads,
``trio.move_on_at(deadline)`` instead of timed waits.
"""

from __future__ import annotations

import logging
import math
import os
import subprocess
from collections.abc import Callable
from typing import Any

import trio

from mcp_proto import events as ev
from mcp_proto._util import NEED_DATA
from mcp_proto.config import ServerConfig
from mcp_proto.errors import ConnectionError, LineTooLongError, MCPError, TransportError
from mcp_proto.limits import Limits
from mcp_proto.session import ServerInfo, Session, State
from mcp_proto.stdio import LineFramer, frame
from mcp_proto.types import Implementation

__all__ = ["StdioServer"]

SHUTDOWN_GRACE = 2.0
_READ_CHUNK = 65536


class _Waiter:
    __slots__ = ("error", "event", "result")

    def __init__(self) -> None:
        self.event = trio.Event()
        self.result: Any = None
        self.error: MCPError | None = None


class _Process:
    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.write_lock = trio.Lock()
        self.alive = True
        # One scope per task: a CancelScope can be entered only once.
        self.reader_scope = trio.CancelScope()
        self.stderr_scope = trio.CancelScope()

    async def stop(self) -> None:
        """Close stdin, wait, terminate, wait, kill: bounded in time (STDIO-6)."""
        self.alive = False
        p = self.process
        with trio.CancelScope(shield=True):
            try:
                if p.stdin is not None:
                    await p.stdin.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
            for step in (None, p.terminate, p.kill):
                if step is not None:
                    try:
                        step()
                    except OSError:
                        break
                with trio.move_on_after(SHUTDOWN_GRACE):
                    await p.wait()
                    break
        self.reader_scope.cancel()
        self.stderr_scope.cancel()


class StdioServer:
    """One MCP server reached over stdio (Trio shell). Its tasks run in the client's
    nursery; a process that exited is restarted on the next request (STDIO-10)."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        name: str,
        client_info: Implementation,
        capabilities: Callable[[], dict[str, Any]],
        limits: Limits,
        logger: logging.Logger,
        on_event: Callable[[StdioServer, Any], None],
        nursery: Callable[[], trio.Nursery],
    ) -> None:
        self.config = config
        self.name = name
        self.type = "stdio"
        self._client_info = client_info
        self._capabilities = capabilities
        self._limits = limits
        self._logger = logger
        self._on_event = on_event
        self._nursery = nursery
        self._connect_lock = trio.Lock()
        self._session: Session | None = None
        self._proc: _Process | None = None
        self._waiters: dict[Any, _Waiter] = {}
        self._progress: dict[Any, Callable[..., Any]] = {}

    @property
    def info(self) -> ServerInfo | None:
        return self._session.server if self._session is not None else None

    @property
    def is_connected(self) -> bool:
        s = self._session
        return (
            s is not None and s.state is State.READY and self._proc is not None and self._proc.alive
        )

    @property
    def read_timeout(self) -> float:
        return self.config.read_timeout

    # ------------------------------------------------------------ lifecycle

    async def ensure_connected(self) -> ServerInfo:
        async with self._connect_lock:
            if self.is_connected:
                assert self._session is not None and self._session.server is not None
                return self._session.server
            await self._start()
            session, proc = self._session, self._proc
            assert session is not None and proc is not None
            try:
                rid = session.start_handshake(now=trio.current_time(), timeout=self.read_timeout)
                waiter = self._waiters[rid] = _Waiter()
                await self._flush(session, proc)
                result = await self._wait(session, proc, rid, waiter)
                info = session.complete_handshake(result)
                await self._flush(session, proc)
            except BaseException:
                await self._teardown(ConnectionError("the handshake failed"))
                raise
            self._logger.debug("connected to %s (protocol %s)", self.name, info.protocol_version)
            return info

    async def _start(self) -> None:
        await self._teardown(ConnectionError("restarting the server process"))
        env = {**os.environ, **self.config.env} if self.config.env else None
        try:
            process = await trio.lowlevel.open_process(
                list(self.config.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self.config.cwd,
                start_new_session=True,
            )
        except OSError as exc:
            raise ConnectionError(
                f"cannot start {self.config.command[0]!r}: {exc.strerror or exc}"
            ) from exc
        proc = _Process(process)
        session = Session(
            client_info=self._client_info, capabilities=self._capabilities(), limits=self._limits
        )
        self._proc, self._session = proc, session
        nursery = self._nursery()
        nursery.start_soon(self._read_loop, proc, session)
        nursery.start_soon(self._stderr_loop, proc)

    async def cleanup(self) -> None:
        async with self._connect_lock:
            await self._teardown(ConnectionError("the client closed the connection"))

    async def _teardown(self, error: MCPError) -> None:
        proc, session = self._proc, self._session
        self._proc = None
        if proc is not None:
            await proc.stop()
        if session is not None:
            self._lost(session, error)

    # ------------------------------------------------------------ requests

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[..., Any] | None = None,
    ) -> Any:
        await self.ensure_connected()
        session, proc = self._session, self._proc
        if session is None or proc is None or session.state is not State.READY:
            raise ConnectionError(f"server {self.name!r} is not connected")
        rid = session.send_request(
            method,
            params,
            now=trio.current_time(),
            timeout=self.read_timeout if timeout is None else timeout,
            want_progress=progress is not None,
        )
        waiter = self._waiters[rid] = _Waiter()
        if progress is not None:
            self._progress[rid] = progress
        self._logger.debug("-> %s %s (id %s)", self.name, method, rid)
        await self._flush(session, proc)
        return await self._wait(session, proc, rid, waiter)

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, only_if_connected: bool = False
    ) -> None:
        if only_if_connected and not self.is_connected:
            return
        await self.ensure_connected()
        session, proc = self._session, self._proc
        if session is None or proc is None:
            raise ConnectionError(f"server {self.name!r} is not connected")
        session.send_notification(method, params)
        await self._flush(session, proc)

    async def reply(
        self,
        session: Session,
        request_id: Any,
        result: Any = None,
        *,
        code: int | None = None,
        message: str = "",
    ) -> None:
        if code is None:
            session.send_response(request_id, result)
        else:
            session.send_error_response(request_id, code, message)
        proc = self._proc if session is self._session else None
        if proc is None:
            session.data_to_send()
            return
        try:
            await self._flush(session, proc)
        except TransportError as exc:
            self._logger.debug("could not answer %s: %s", self.name, exc)

    async def _flush(self, session: Session, proc: _Process) -> None:
        # Drain inside the write lock so frames go out in the order they were queued.
        async with proc.write_lock:
            frames = session.data_to_send()
            if not frames:
                return
            stdin = proc.process.stdin
            assert stdin is not None
            try:
                await stdin.send_all(b"".join(frame(f) for f in frames))
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                error = ConnectionError(f"server {self.name!r}: cannot write to the process: {exc}")
                self._connection_lost(proc, error)
                raise error from exc

    async def _wait(self, session: Session, proc: _Process, rid: Any, waiter: _Waiter) -> Any:
        try:
            while not waiter.event.is_set():
                deadline = session.next_deadline()
                with trio.move_on_at(math.inf if deadline is None else deadline):
                    await waiter.event.wait()
                if not waiter.event.is_set():
                    # The core decides what expired and queues notifications/cancelled.
                    session.handle_timeout(trio.current_time())
                    self._dispatch(session, self._drain(session))
                    if self._proc is proc:
                        try:
                            await self._flush(session, proc)
                        except MCPError:
                            pass
        except trio.Cancelled:
            # The caller's own scope was cancelled: abandon the request politely.
            self._waiters.pop(rid, None)
            self._progress.pop(rid, None)
            if (
                session.cancel_request(rid, "Request cancelled by the client")
                and self._proc is proc
            ):
                with trio.CancelScope(shield=True), trio.move_on_after(1):
                    try:
                        await self._flush(session, proc)
                    except MCPError:
                        pass
            raise
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    # ------------------------------------------------------------ reader side

    async def _read_loop(self, proc: _Process, session: Session) -> None:
        stdout = proc.process.stdout
        assert stdout is not None
        framer = LineFramer(self._limits.max_line_size)
        with proc.reader_scope:
            while True:
                try:
                    chunk = await stdout.receive_some(_READ_CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    chunk = b""
                framer.receive_data(bytes(chunk))
                lines = []
                try:
                    while True:
                        line = framer.next_line()
                        if line is NEED_DATA or not isinstance(line, bytes):
                            break
                        lines.append(line)
                except LineTooLongError as exc:
                    self._logger.warning("server %s: %s; dropping the connection", self.name, exc)
                    self._deliver(session, lines)
                    self._connection_lost(proc, exc)
                    self._nursery().start_soon(proc.stop)
                    return
                self._deliver(session, lines)
                if not chunk:
                    code = None
                    with trio.move_on_after(SHUTDOWN_GRACE):
                        code = await proc.process.wait()
                    self._connection_lost(
                        proc,
                        ConnectionError(
                            f"server {self.name!r} closed its output"
                            + (f" (exit code {code})" if code is not None else "")
                        ),
                    )
                    return

    def _deliver(self, session: Session, lines: list[bytes]) -> None:
        for line in lines:
            session.receive_message(line)
        self._dispatch(session, self._drain(session))

    async def _stderr_loop(self, proc: _Process) -> None:
        """Drain the child's stderr continuously (STDIO-5) into the log, bounded."""
        stderr = proc.process.stderr
        assert stderr is not None
        log = self._logger.getChild("stderr")
        cap = self._limits.max_stderr_line
        buf = bytearray()
        skipping = False
        with proc.stderr_scope:
            while True:
                try:
                    chunk = await stderr.receive_some(_READ_CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    return
                if not chunk:
                    return
                buf += chunk
                while True:
                    idx = buf.find(b"\n")
                    if idx < 0:
                        if len(buf) > cap:
                            if not skipping:
                                self._stderr_line(log, bytes(buf[:cap]))
                            skipping = True
                            buf.clear()
                        break
                    line = bytes(buf[:idx])
                    del buf[: idx + 1]
                    if not skipping:
                        self._stderr_line(log, line[:cap])
                    skipping = False

    def _stderr_line(self, log: logging.Logger, line: bytes) -> None:
        if log.isEnabledFor(logging.INFO):
            log.info("[%s] %s", self.name, line.decode("utf-8", "replace"))

    def _connection_lost(self, proc: _Process, error: MCPError) -> None:
        if proc is not self._proc:
            return
        proc.alive = False
        if self._session is not None:
            self._lost(self._session, error)

    def _lost(self, session: Session, error: MCPError) -> None:
        if session.state is State.CLOSED:
            return
        session.connection_lost(error)
        self._dispatch(session, self._drain(session))
        self._on_event(self, ("closed",))

    def _drain(self, session: Session) -> list[Any]:
        out: list[Any] = []
        while True:
            event = session.next_event()
            if event is NEED_DATA:
                return out
            out.append(event)

    def _dispatch(self, session: Session, events: list[Any]) -> None:
        for event in events:
            if isinstance(event, (ev.ResponseReceived, ev.RequestFailed)):
                waiter = self._waiters.pop(event.request_id, None)
                self._progress.pop(event.request_id, None)
                if waiter is None:
                    continue
                if isinstance(event, ev.ResponseReceived):
                    waiter.result = event.result
                else:
                    waiter.error = event.error
                waiter.event.set()
            elif isinstance(event, ev.ProgressReceived):
                callback = self._progress.get(event.request_id)
                if callback is not None:
                    self._on_event(self, ("progress", callback, event))
            elif isinstance(event, ev.ServerRequest):
                self._on_event(self, ("request", session, event))
            else:
                self._on_event(self, event)
