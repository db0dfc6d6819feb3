"""The blocking shell's stdio server: a child process, a reader thread, a session.

All protocol decisions are the core's (``mcp_proto.Session``, ``LineFramer``); this
module only moves bytes between the pipes and the session, and wakes callers.
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from mcp_proto import events as ev
from mcp_proto._util import NEED_DATA
from mcp_proto.config import ServerConfig
from mcp_proto.errors import (
    ConnectionError,
    LineTooLongError,
    MCPError,
    TransportError,
)
from mcp_proto.limits import Limits
from mcp_proto.session import ServerInfo, Session, State
from mcp_proto.stdio import LineFramer, frame
from mcp_proto.types import Implementation

__all__ = ["StdioServer"]

# Shutdown (STDIO-6): close stdin and give the server this long to exit by itself,
# then SIGTERM and the same again, then SIGKILL.
SHUTDOWN_GRACE = 2.0
_READ_CHUNK = 65536


class _Waiter:
    __slots__ = ("error", "event", "result")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.result: Any = None
        self.error: MCPError | None = None


class _Process:
    """One spawned child with its pipes. Replaced wholesale on restart."""

    def __init__(self, argv: tuple[str, ...], env: dict[str, str] | None, cwd: str | None) -> None:
        try:
            self.popen = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=cwd,
                bufsize=0,
                start_new_session=True,  # a Ctrl-C to the host does not kill the server mid-reply
            )
        except OSError as exc:
            raise ConnectionError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from exc
        self.write_lock = threading.Lock()
        self.alive = True

    def write(self, frames: list[bytes]) -> None:
        stdin = self.popen.stdin
        assert stdin is not None
        try:
            stdin.write(b"".join(frame(f) for f in frames))
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise TransportError(f"cannot write to the server process: {exc}") from exc

    def stop(self) -> None:
        """Close stdin, wait, terminate, wait, kill: bounded in time (STDIO-6)."""
        self.alive = False
        p = self.popen
        try:
            if p.stdin:
                p.stdin.close()
        except OSError:
            pass
        try:
            p.wait(SHUTDOWN_GRACE)
            return
        except subprocess.TimeoutExpired:
            pass
        for signal_it in (p.terminate, p.kill):
            try:
                signal_it()
                p.wait(SHUTDOWN_GRACE)
                return
            except subprocess.TimeoutExpired:
                continue
            except OSError:
                return


class StdioServer:
    """One MCP server reached over stdio (blocking shell).

    Thread-safe: any thread may call :meth:`request`. A reader thread feeds the
    session; callers wait on their own event with the deadline the core computed. If
    the process exits, pending calls fail with ``ConnectionError`` and the next request
    starts a new process and handshake (STDIO-10).
    """

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
    ) -> None:
        self.config = config
        self.name = name
        self.type = "stdio"
        self._client_info = client_info
        self._capabilities = capabilities
        self._limits = limits
        self._logger = logger
        self._on_event = on_event
        self._lock = threading.RLock()
        self._connect_lock = threading.Lock()
        self._session: Session | None = None
        self._proc: _Process | None = None
        self._waiters: dict[Any, _Waiter] = {}
        self._progress: dict[Any, Callable[..., Any]] = {}
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------ introspection

    @property
    def info(self) -> ServerInfo | None:
        s = self._session
        return s.server if s is not None else None

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

    def ensure_connected(self) -> ServerInfo:
        """Start the process and handshake unless already connected."""
        with self._connect_lock:
            if self.is_connected:
                assert self._session is not None and self._session.server is not None
                return self._session.server
            self._start()
            session, proc = self._session, self._proc
            assert session is not None and proc is not None
            try:
                with self._lock:
                    rid = session.start_handshake(now=time.monotonic(), timeout=self.read_timeout)
                    waiter = self._waiters[rid] = _Waiter()
                    frames = session.data_to_send()
                self._write(proc, frames)
                result = self._wait(session, rid, waiter)
                with self._lock:
                    info = session.complete_handshake(result)
                    frames = session.data_to_send()
                self._write(proc, frames)
            except BaseException:
                self._teardown(ConnectionError("the handshake failed"))
                raise
            self._logger.debug("connected to %s (protocol %s)", self.name, info.protocol_version)
            return info

    def _start(self) -> None:
        self._teardown(ConnectionError("restarting the server process"))
        env = None
        if self.config.env:
            env = {**os.environ, **self.config.env}
        proc = _Process(self.config.command, env, self.config.cwd)
        session = Session(
            client_info=self._client_info,
            capabilities=self._capabilities(),
            limits=self._limits,
        )
        with self._lock:
            self._proc, self._session = proc, session
        reader = threading.Thread(
            target=self._read_loop, args=(proc, session), name=f"mcp-stdio-{self.name}", daemon=True
        )
        errs = threading.Thread(
            target=self._stderr_loop, args=(proc,), name=f"mcp-stderr-{self.name}", daemon=True
        )
        self._threads = [reader, errs]
        reader.start()
        errs.start()

    def cleanup(self) -> None:
        """Stop the process (bounded) and fail anything pending. Idempotent."""
        with self._connect_lock:
            self._teardown(ConnectionError("the client closed the connection"))

    def _teardown(self, error: MCPError) -> None:
        with self._lock:
            proc, session = self._proc, self._session
            self._proc = None
        if proc is not None:
            proc.stop()
        if session is not None:
            self._lost(session, error)
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout=SHUTDOWN_GRACE)
        self._threads = []

    # ------------------------------------------------------------ requests

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Callable[..., Any] | None = None,
    ) -> Any:
        """Send a request and block for its result (or its typed error)."""
        self.ensure_connected()
        with self._lock:
            session, proc = self._session, self._proc
            if session is None or proc is None or session.state is not State.READY:
                raise ConnectionError(f"server {self.name!r} is not connected")
            rid = session.send_request(
                method,
                params,
                now=time.monotonic(),
                timeout=self.read_timeout if timeout is None else timeout,
                want_progress=progress is not None,
            )
            waiter = self._waiters[rid] = _Waiter()
            if progress is not None:
                self._progress[rid] = progress
            frames = session.data_to_send()
        self._logger.debug("-> %s %s (id %s)", self.name, method, rid)
        self._write(proc, frames)
        return self._wait(session, rid, waiter)

    def notify(
        self, method: str, params: dict[str, Any] | None = None, *, only_if_connected: bool = False
    ) -> None:
        if only_if_connected and not self.is_connected:
            return
        self.ensure_connected()
        with self._lock:
            session, proc = self._session, self._proc
            if session is None or proc is None:
                raise ConnectionError(f"server {self.name!r} is not connected")
            session.send_notification(method, params)
            frames = session.data_to_send()
        self._write(proc, frames)

    def reply(
        self,
        session: Session,
        request_id: Any,
        result: Any = None,
        *,
        code: int | None = None,
        message: str = "",
    ) -> None:
        """Answer a server request on the session (process) that asked it."""
        with self._lock:
            proc = self._proc if session is self._session else None
            if code is None:
                session.send_response(request_id, result)
            else:
                session.send_error_response(request_id, code, message)
            frames = session.data_to_send()
        if proc is not None and frames:
            try:
                self._write(proc, frames)
            except TransportError as exc:
                self._logger.debug("could not answer %s: %s", self.name, exc)

    def _write(self, proc: _Process, frames: list[bytes]) -> None:
        if not frames:
            return
        with proc.write_lock:
            try:
                proc.write(frames)
            except TransportError as exc:
                self._connection_lost(proc, ConnectionError(f"server {self.name!r}: {exc}"))
                raise

    def _wait(self, session: Session, rid: Any, waiter: _Waiter) -> Any:
        while True:
            with self._lock:
                deadline = session.next_deadline()
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if waiter.event.wait(remaining):
                break
            # The core decides what expired; it also queues notifications/cancelled.
            with self._lock:
                session.handle_timeout(time.monotonic())
                events = self._drain(session)
                frames = session.data_to_send()
                proc = self._proc if session is self._session else None
            self._dispatch(session, events)
            if proc is not None and frames:
                try:
                    self._write(proc, frames)
                except TransportError:
                    pass  # best effort (PROG-5): the timeout is what the caller sees
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    # ------------------------------------------------------------ reader side

    def _read_loop(self, proc: _Process, session: Session) -> None:
        stdout = proc.popen.stdout
        assert stdout is not None
        framer = LineFramer(self._limits.max_line_size)
        fd = stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, _READ_CHUNK)
            except OSError:
                chunk = b""
            framer.receive_data(chunk)
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
                proc.stop()
                return
            self._deliver(session, lines)
            if not chunk:
                code = proc.popen.poll()
                if code is None:
                    try:
                        code = proc.popen.wait(SHUTDOWN_GRACE)
                    except subprocess.TimeoutExpired:
                        code = None
                self._connection_lost(
                    proc,
                    ConnectionError(
                        f"server {self.name!r} closed its output"
                        + (f" (exit code {code})" if code is not None else "")
                    ),
                )
                return

    def _deliver(self, session: Session, lines: list[bytes]) -> None:
        if not lines:
            return
        with self._lock:
            for line in lines:
                session.receive_message(line)
            events = self._drain(session)
        self._dispatch(session, events)

    def _stderr_loop(self, proc: _Process) -> None:
        """Drain the child's stderr continuously (STDIO-5) into the log, bounded."""
        stderr = proc.popen.stderr
        assert stderr is not None
        log = self._logger.getChild("stderr")
        cap = self._limits.max_stderr_line
        while True:
            try:
                line = stderr.readline(cap)
            except (OSError, ValueError):
                return
            if not line:
                return
            if line.endswith(b"\n"):
                line = line[:-1]
            else:
                # Rest of an over-long line: skip to its end without holding it.
                while True:
                    rest = stderr.readline(cap)
                    if not rest or rest.endswith(b"\n"):
                        break
            if log.isEnabledFor(logging.INFO):
                log.info("[%s] %s", self.name, line.decode("utf-8", "replace"))

    def _connection_lost(self, proc: _Process, error: MCPError) -> None:
        with self._lock:
            if proc is not self._proc:
                return  # an old process: its session was already failed
            session = self._session
            proc.alive = False
        if session is not None:
            self._lost(session, error)

    def _lost(self, session: Session, error: MCPError) -> None:
        with self._lock:
            if session.state is State.CLOSED:
                return
            session.connection_lost(error)
            events = self._drain(session)
        self._dispatch(session, events)
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
                with self._lock:
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
                with self._lock:
                    callback = self._progress.get(event.request_id)
                if callback is not None:
                    self._on_event(self, ("progress", callback, event))
            elif isinstance(event, ev.ServerRequest):
                self._on_event(self, ("request", session, event))
            else:
                self._on_event(self, event)
