"""The blocking shell's stdio server: a child process, a reader thread, a session.

All protocol decisions are the core's (``mcp_proto.Session``, ``LineFramer``); this
module only moves bytes between the pipes and the session, and wakes callers.
"""

from __future__ import annotations

import logging
import os
import select
import subprocess
import threading
import time
from typing import Any

from mcp_io_common.processes import (
    BIG_PIPE,
    KILL,
    TERMINATE,
    enlarge_pipes,
    group_alive,
    server_group,
    signal_group,
)
from mcp_proto._util import NEED_DATA
from mcp_proto.config import ServerConfig
from mcp_proto.errors import (
    ConnectionError,
    LineTooLongError,
    MCPError,
    TransportError,
)
from mcp_proto.session import Session
from mcp_proto.stdio import LineFramer, frame

from ._base import BaseServer

__all__ = ["StdioServer"]

# Shutdown (STDIO-6): close stdin and give the server (its whole process group) this
# long to exit by itself, then SIGTERM the group and the same again, then SIGKILL.
SHUTDOWN_GRACE = 2.0
_READ_CHUNK = 65536
# Reads a caller does for others after its own answer arrived (see _read_until).
_DRAIN_READS = 8
# Buffers per writev call (IOV_MAX is 1024 on Linux).
_IOV_BATCH = 512


def _write_all(fd: int, iov: list[bytes]) -> None:
    """Write every buffer in order (a blocking pipe may still write partially when a
    signal arrives mid-write)."""
    views: list[Any] = list(iov)
    while views:
        batch = views[:_IOV_BATCH]
        written = os.writev(fd, batch)
        while views and written >= len(views[0]):
            written -= len(views.pop(0))
        if written:
            views[0] = memoryview(views[0])[written:]


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
                # Its own session and process group: a Ctrl-C at the host's terminal
                # does not kill the server mid-reply (close() ends it), and closing can
                # signal the group, which reaches what a launcher started (item 6).
                start_new_session=True,
            )
        except OSError as exc:
            raise ConnectionError(f"cannot start {argv[0]!r}: {exc.strerror or exc}") from exc
        self.pgid = server_group(self.popen.pid)
        self.write_lock = threading.Lock()
        self.alive = True
        # Reading stdout is a role, not a thread: whoever holds read_lock reads. A caller
        # waiting for its answer takes the role itself (no hand-off between threads on
        # the hot path); the background reader takes it only while nobody waits, to
        # catch notifications, server requests and the end of the stream.
        self.read_lock = threading.Lock()
        self.cond = threading.Condition()
        self.callers = 0  # callers currently waiting for an answer (guarded by cond)
        self.followers: list[Any] = []  # waiters blocked on their event for the role
        self.last_caller = 0.0  # time.monotonic() when the last caller stopped waiting
        self.bg_selecting = False  # the background reader is blocked in select()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        self.framer: LineFramer | None = None
        self.big_pipes = False  # the pipes were enlarged for large messages
        self.finished = False  # EOF or a fatal framing error was handled

    def write(self, frames: list[bytes]) -> None:
        stdin = self.popen.stdin
        assert stdin is not None
        try:
            fd = stdin.fileno()
            if len(frames) == 1 and len(frames[0]) < _READ_CHUNK:
                data = frame(frames[0])
                written = os.write(fd, data)
                if written < len(data):  # interrupted by a signal: finish the rest
                    _write_all(fd, [data[written:]])
                return
            if not self.big_pipes and max(map(len, frames)) >= _READ_CHUNK:
                self.big_pipes = True
                enlarge_pipes(fd, self.popen.stdout)
            # Gathered, not joined: copying a large message to append its newline costs
            # as much as writing it.
            iov: list[bytes] = []
            for f in frames:
                iov += (f, b"\n")
            _write_all(fd, iov)
        except (BrokenPipeError, OSError, ValueError) as exc:
            raise TransportError(f"cannot write to the server process: {exc}") from exc

    def wake_reader(self) -> None:
        """Get the background reader out of select() (it then yields the role)."""
        try:
            os.write(self.wake_w, b"\0")
        except (BlockingIOError, OSError):
            pass  # already woken (pipe full) or closed

    def close_pipes(self) -> None:
        """Close our ends of stdout/stderr once the reader threads are done."""
        for pipe in (self.popen.stdout, self.popen.stderr):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass
        for fd in (self.wake_r, self.wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def stop(self) -> None:
        """Close stdin and wait; then SIGTERM and wait; then SIGKILL and wait: bounded in
        time (STDIO-6). Signals go to the server's process group and every wait is for
        the whole group, so a server started through a launcher (``npx``, ``sh -c``)
        ends with everything it started (issue 8, item 6)."""
        self.alive = False
        with self.cond:
            self.cond.notify_all()
        self.wake_reader()
        p = self.popen
        try:
            if p.stdin:
                p.stdin.close()
        except OSError:
            pass
        if self._wait_all(time.monotonic() + SHUTDOWN_GRACE):
            return
        for sig in (TERMINATE, KILL):
            self._signal(sig)
            if self._wait_all(time.monotonic() + SHUTDOWN_GRACE):
                return

    def _signal(self, sig: int) -> None:
        if self.pgid is not None and signal_group(self.pgid, sig):
            return
        if self.popen.poll() is None:  # no group of its own: the child alone
            try:
                self.popen.send_signal(sig)
            except OSError:
                pass

    def _wait_all(self, deadline: float) -> bool:
        """Wait until the child exited (reaped) and its group is empty, or ``deadline``."""
        try:
            self.popen.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return False
        if self.pgid is None:
            return True
        # Descendants left in the group once the leader is gone: poll (no wait() for
        # processes that are not our children), backing off to 50 ms.
        pause = 0.002
        while group_alive(self.pgid):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(pause, remaining))
            pause = min(pause * 2, 0.05)
        return True


class StdioServer(BaseServer):
    """One MCP server reached over stdio (blocking shell).

    A reader thread feeds the session from the child's stdout; another drains its
    stderr into the log. If the process exits, pending calls fail with
    ``ConnectionError`` and the next request starts a new process and handshake
    (STDIO-10).
    """

    type = "stdio"
    _pipelines = True

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._proc: _Process | None = None
        self._threads: list[threading.Thread] = []

    def _transport_alive(self) -> bool:
        return self._proc is not None and self._proc.alive

    def _open(self) -> None:
        env = None
        if self.config.env:
            env = {**os.environ, **self.config.env}
        proc = _Process(self.config.command, env, self.config.cwd)
        with self._lock:
            self._proc = proc
        reader = threading.Thread(
            target=self._read_loop, args=(proc,), name=f"mcp-stdio-{self.name}", daemon=True
        )
        errs = threading.Thread(
            target=self._stderr_loop, args=(proc,), name=f"mcp-stderr-{self.name}", daemon=True
        )
        self._threads = [reader, errs]
        reader.start()
        errs.start()

    def _read_available(self) -> None:
        # Only if nobody holds the reading role: a holder is a caller that reads, or the
        # background reader blocked in select(), which reads whatever arrives at once.
        with self._lock:
            proc = self._proc
        if proc is None or proc.finished or not proc.read_lock.acquire(blocking=False):
            return
        try:
            stdout = proc.popen.stdout
            assert stdout is not None
            fd = stdout.fileno()
            for _ in range(_DRAIN_READS):
                try:
                    ready, _, _ = select.select([fd], [], [], 0)
                except (OSError, ValueError):
                    return
                if not ready or proc.finished:
                    return
                self._read_once(proc, fd)
        finally:
            proc.read_lock.release()
            self._hand_over(proc)

    def _close(self) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None:
            proc.stop()
        alive = False
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(timeout=SHUTDOWN_GRACE)
            alive = alive or t.is_alive()
        self._threads = []
        if proc is not None and not alive:
            # Only once no reader can still be blocked on them (an fd closed under a
            # blocked read could be reused by another file).
            proc.close_pipes()

    def _transmit(self, session: Session, waiter: Any = None) -> None:
        # Drain and write under the process's write lock, so that frames reach the pipe
        # in the order the session queued them even with many threads sending.
        with self._lock:
            proc = self._proc if session is self._session else None
        if proc is None:
            with self._lock:
                if session.data_to_send():
                    raise ConnectionError(f"server {self.name!r} is not connected")
            return
        with proc.write_lock:
            with self._lock:
                frames = session.data_to_send()
            if not frames:
                return
            try:
                proc.write(frames)
            except TransportError as exc:
                error = ConnectionError(f"server {self.name!r}: {exc}")
                self._connection_lost(proc, error)
                raise error from exc

    # ------------------------------------------------------------ reader side

    def _wait(self, session: Session, rid: Any, waiter: Any) -> Any:
        """Wait for a response, reading the pipe ourselves when nobody else is
        (leader/follower): the caller holding the reading role reads and dispatches for
        everyone, so a sequential caller never waits for another thread to hand its
        answer over. A caller that finds the role taken waits on its own event; the
        leader hands the role to one such follower when it stops reading."""
        with self._lock:
            proc = self._proc if session is self._session else None
        if proc is None:
            return super()._wait(session, rid, waiter)
        with proc.cond:
            proc.callers += 1
            selecting = proc.bg_selecting
        if selecting:
            proc.wake_reader()
        try:
            while not waiter.done:
                with self._lock:
                    deadline = session.next_deadline()
                if proc.finished:
                    return super()._wait(session, rid, waiter)
                leading = proc.read_lock.acquire(blocking=False)
                event = None
                if not leading:
                    event = waiter.get_event()
                    with proc.cond:
                        proc.followers.append(waiter)
                    # The leader may have let go between the first try and the append
                    # (then nobody would hand the role over): try once more.
                    leading = proc.read_lock.acquire(blocking=False)
                    if leading:
                        with proc.cond:
                            proc.followers.remove(waiter)
                if leading:
                    try:
                        self._read_until(proc, waiter, deadline)
                    finally:
                        proc.read_lock.release()
                        self._hand_over(proc)
                elif event is not None:
                    remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                    if not waiter.done:
                        event.wait(remaining)
                    with proc.cond:
                        if waiter in proc.followers:
                            proc.followers.remove(waiter)
                        if not waiter.done:
                            event.clear()
                if not waiter.done and deadline is not None and time.monotonic() >= deadline:
                    self._expire(session)
        finally:
            with proc.cond:
                # No notify: the background reader polls (every _LINGER) rather than be
                # woken at the end of every call, which would cost a thread switch each.
                proc.callers -= 1
                proc.last_caller = time.monotonic()
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    def _hand_over(self, proc: _Process) -> None:
        """The reading role is free: wake one caller still waiting to take it."""
        with proc.cond:
            for follower in proc.followers:
                if not follower.done and follower.event is not None:
                    follower.event.set()
                    return

    def _read_until(self, proc: _Process, waiter: Any, deadline: float | None) -> None:
        """Holding the reading role: read until ``waiter`` is answered, the deadline
        passes, or the stream ends."""
        stdout = proc.popen.stdout
        assert stdout is not None
        fd = stdout.fileno()
        while not waiter.done and not proc.finished:
            timeout = None if deadline is None else deadline - time.monotonic()
            if timeout is not None and timeout <= 0:
                return
            try:
                ready, _, _ = select.select([fd], [], [], timeout)
            except (OSError, ValueError):
                ready = [fd]  # let os.read report the closed pipe as EOF
            if not ready:
                return
            self._read_once(proc, fd)
        # Answered. Before giving the role up, read what is already waiting in the pipe
        # for the other callers (bounded, never blocking): handing the role over costs a
        # thread switch, draining a ready pipe does not.
        for _ in range(_DRAIN_READS):
            if proc.finished or not proc.followers:
                return
            try:
                ready, _, _ = select.select([fd], [], [], 0)
            except (OSError, ValueError):
                return
            if not ready:
                return
            self._read_once(proc, fd)

    # Background reader: after the last caller stops waiting it lingers this long before
    # selecting again, so back-to-back calls do not have to wake it every time.
    _LINGER = 0.05

    def _read_loop(self, proc: _Process) -> None:
        stdout = proc.popen.stdout
        assert stdout is not None
        fd = stdout.fileno()
        while True:
            with proc.cond:
                while proc.alive and not proc.finished:
                    if proc.callers > 0:
                        proc.cond.wait(self._LINGER)
                        continue
                    idle = time.monotonic() - proc.last_caller
                    if idle >= self._LINGER:
                        break
                    proc.cond.wait(self._LINGER - idle)
                if not proc.alive or proc.finished:
                    return
                proc.bg_selecting = True
            try:
                with proc.read_lock:
                    if proc.callers > 0:
                        continue
                    try:
                        ready, _, _ = select.select([fd, proc.wake_r], [], [])
                    except (OSError, ValueError):
                        ready = [fd]
                    if proc.wake_r in ready:
                        try:
                            os.read(proc.wake_r, 4096)
                        except OSError:
                            pass
                    if fd in ready and not proc.finished:
                        self._read_once(proc, fd)
            finally:
                with proc.cond:
                    proc.bg_selecting = False
                self._hand_over(proc)

    def _read_once(self, proc: _Process, fd: int) -> None:
        """One read from stdout (caller holds the reading role): frame, deliver, and
        handle the end of the stream or a fatal framing error."""
        if proc.framer is None:
            proc.framer = LineFramer(
                self.config.max_line_size or self._limits.max_line_size, decode=True
            )
        framer = proc.framer
        size = _READ_CHUNK
        if framer.buffered >= _READ_CHUNK:  # a large message is arriving
            size = min(BIG_PIPE, framer.buffered)
            if not proc.big_pipes:
                proc.big_pipes = True
                enlarge_pipes(fd, proc.popen.stdin)
        # Read straight into the framer's buffer: no new bytes object per read.
        try:
            with framer.get_buffer(size) as view:
                got = os.readv(fd, [view])
        except OSError:
            got = 0
        framer.buffer_updated(got)
        lines: list[bytes | str] = []
        try:
            while True:
                line = framer.next_line()
                if line is NEED_DATA or not isinstance(line, (bytes, str)):
                    break
                lines.append(line)
        except LineTooLongError as exc:
            self._logger.warning("server %s: %s; dropping the connection", self.name, exc)
            self._deliver_to(proc, lines)
            proc.finished = True
            self._connection_lost(proc, exc)
            # Stopping waits for the process: not on the caller's thread.
            threading.Thread(target=proc.stop, name="mcp-stop", daemon=True).start()
            return
        self._deliver_to(proc, lines)
        if not got:
            proc.finished = True
            code = proc.popen.poll()
            if code is None:
                try:
                    code = proc.popen.wait(0.2)
                except subprocess.TimeoutExpired:
                    code = None
            self._connection_lost(
                proc,
                ConnectionError(
                    f"server {self.name!r} closed its output"
                    + (f" (exit code {code})" if code is not None else "")
                ),
            )

    def _deliver_to(self, proc: _Process, lines: list[bytes | str]) -> None:
        with self._lock:
            session = self._session if proc is self._proc else None
        if session is not None:
            self._deliver(session, lines)

    def _stderr_loop(self, proc: _Process) -> None:
        """Drain the child's stderr continuously (STDIO-5) into the log, bounded: big
        reads (never byte by byte), lines longer than the cap cut, the rest skipped."""
        stderr = proc.popen.stderr
        assert stderr is not None
        fd = stderr.fileno()
        log = self._logger.getChild("stderr")
        cap = self._limits.max_stderr_line
        buf = bytearray()
        skipping = False
        while True:
            try:
                chunk = os.read(fd, _READ_CHUNK)
            except OSError:
                return
            if not chunk:
                if buf and not skipping:
                    self._stderr_line(log, bytes(buf[:cap]))
                return
            buf += chunk
            start = 0
            while True:
                idx = buf.find(b"\n", start)
                if idx < 0:
                    break
                if not skipping:
                    self._stderr_line(log, bytes(buf[start : min(idx, start + cap)]))
                skipping = False
                start = idx + 1
            del buf[:start]
            if len(buf) > cap:
                if not skipping:
                    self._stderr_line(log, bytes(buf[:cap]))
                skipping = True
                buf.clear()

    def _stderr_line(self, log: logging.Logger, line: bytes) -> None:
        if log.isEnabledFor(logging.INFO):
            log.info("[%s] %s", self.name, line.decode("utf-8", "replace"))

    def _connection_lost(self, proc: _Process, error: MCPError) -> None:
        proc.finished = True
        with proc.cond:
            proc.cond.notify_all()
        proc.wake_reader()
        with self._lock:
            if proc is not self._proc:
                return  # an old process: its session was already failed
            session = self._session
            proc.alive = False
        if session is not None:
            self._lost(session, error)
