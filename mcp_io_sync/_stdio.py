"""The blocking shell's stdio server: a child process, its pipes, a reader thread.

Every protocol decision is the machine's (``mcp_proto.connection.Connection``: framing,
handshake, requests, what the end of the output means); this module performs its
frames (spawn, write, stop the process) and feeds it what stdout delivers.
"""

from __future__ import annotations

import os
import select
import subprocess
import threading
import time
from contextlib import closing
from typing import Any

from mcp_io_common.lines import PIPE_READ
from mcp_io_common.processes import (
    BIG_PIPE,
    SHUTDOWN_GRACE,
    enlarge_pipes,
    server_group,
    started,
    stop_steps,
)
from mcp_io_common.stdio import StdioTarget
from mcp_proto.config import ServerConfig
from mcp_proto.connection import CloseTransport, Frame, OpenTransport, Write
from mcp_proto.errors import TransportError
from mcp_proto.stdio import frame

from ._base import BaseServer
from ._waiter import _Waiter

__all__ = ["StdioServer"]

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

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.pgid = server_group(self.popen.pid)
        started(self.pgid)  # ended at once by a second Ctrl-C, asked to end at exit
        self.alive = True
        # Reading stdout is a role, not a thread: whoever holds read_lock reads. A caller
        # waiting for its answer takes the role itself (no hand-off between threads on
        # the hot path); the background reader takes it only while nobody waits, to
        # catch notifications, server requests and the end of the stream.
        self.read_lock = threading.Lock()
        # ``mutex`` is ``cond``'s lock: the callers' bookkeeping takes it directly (a
        # Condition's own ``with`` costs two Python calls, three times per call).
        self.mutex = threading.Lock()
        self.cond = threading.Condition(self.mutex)
        self.callers = 0  # callers currently waiting for an answer (guarded by cond)
        self.followers: list[Any] = []  # waiters blocked on their event for the role
        self.last_caller = 0.0  # time.monotonic() when the last caller stopped waiting
        self.bg_selecting = False  # the background reader is blocked in select()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        self.read_size = PIPE_READ  # grows while reads come back full (a large message)
        self.big_pipes = False  # the pipes were enlarged for large messages
        self.finished = False  # the end of stdout was read (or the process was replaced)

    def write(self, frames: list[bytes]) -> None:
        stdin = self.popen.stdin
        assert stdin is not None
        try:
            fd = stdin.fileno()
            if len(frames) == 1 and len(frames[0]) < PIPE_READ:
                data = frame(frames[0])
                written = os.write(fd, data)
                if written < len(data):  # interrupted by a signal: finish the rest
                    _write_all(fd, [data[written:]])
                return
            if not self.big_pipes and max(map(len, frames)) >= PIPE_READ:
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

    def stop(self, graceful: bool = True) -> None:
        """Close stdin, then wait out the steps of ``stop_steps`` (STDIO-6)."""
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
        steps = stop_steps(self.pgid, p, graceful, time.monotonic, SHUTDOWN_GRACE)
        with closing(steps):
            for step in steps:
                timeout = max(0.0, step.until - time.monotonic())
                if not step.exit:
                    time.sleep(timeout)
                    continue
                try:
                    p.wait(timeout)
                except subprocess.TimeoutExpired:
                    pass  # the flow sees it still runs


class StdioServer(StdioTarget, BaseServer):
    """One MCP server reached over stdio (blocking shell).

    A reader thread reads the child's stdout while no caller does (callers waiting
    for an answer read it themselves: see :meth:`_wait`); another drains its stderr
    into the log. If the process exits, the machine fails what was pending with
    ``ConnectionError`` and the next request starts a new process and handshake
    (STDIO-10).
    """

    _proc: _Process | None

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._threads: list[threading.Thread] = []
        # Stopping a failed process runs in the background; the next one starts only
        # once it is gone (one server process at a time).
        self._stopper: threading.Thread | None = None
        # The threads of the process last closed (see _perform: OpenTransport).
        self._retired: list[threading.Thread] = []

    def _transport_alive(self) -> bool:
        proc = self._proc
        return proc is not None and proc.alive

    # ------------------------------------------------------------ frames

    def _perform(self, frame: Frame) -> None:
        kind = type(frame)
        if kind is Write:
            assert isinstance(frame, Write)
            self._write(frame.messages)
        elif kind is OpenTransport:
            if threading.current_thread() in self._retired:
                # A restart noticed by the dead process's own reader (SUB-19, SUB-20:
                # open subscriptions restart it with no caller around): that thread
                # must end for the old process's pipes to be closed, so the new
                # process is opened from a thread of its own.
                threading.Thread(
                    target=self._open_then_pump, name=f"mcp-open-{self.name}", daemon=True
                ).start()
            else:
                self._open()
        elif kind is CloseTransport:
            assert isinstance(frame, CloseTransport)
            self._close(frame.graceful)

    def _perform_frames(self, frames: list[Frame], inline: bool) -> None:
        # Consecutive writes (a request_many round: one Write per call) go out in one
        # writev.
        messages: list[bytes] = []
        for f in frames:
            if type(f) is Write:
                messages += f.messages
                continue
            if messages:
                self._write(messages)
                messages = []
            self._perform(f)
        if messages:
            self._write(messages)

    def _open(self) -> None:
        with self._lock:
            stopper, self._stopper = self._stopper, None
        if stopper is not None and stopper is not threading.current_thread():
            stopper.join(3 * SHUTDOWN_GRACE)
        try:
            popen = subprocess.Popen(self.config.command, bufsize=0, **self._spawn_options())
        except OSError as exc:
            with self._lock:
                self._conn.transport_failed(self._start_failed(exc), time.monotonic())
            return
        proc = _Process(popen)
        reader = threading.Thread(
            target=self._read_loop, args=(proc,), name=f"mcp-stdio-{self.name}", daemon=True
        )
        errs = threading.Thread(
            target=self._stderr_loop, args=(proc,), name=f"mcp-stderr-{self.name}", daemon=True
        )
        with self._lock:
            self._proc = proc
            self._generation += 1
            self._threads = [reader, errs]
        reader.start()
        errs.start()
        with self._lock:
            # The pid keys the era cache: an era holds for one server process (LIFE-18).
            self._conn.transport_opened(time.monotonic(), pid=proc.popen.pid)

    def _open_then_pump(self) -> None:
        self._open()
        self._pump()

    def _write(self, messages: list[bytes]) -> None:
        proc = self._proc
        if proc is None or not proc.alive:
            return  # the transport is gone: the machine learns it from the end of stdout
        try:
            proc.write(messages)
        except TransportError as exc:
            # A process that cannot be written to is of no use: stop it (not on this
            # thread: that waits), and its end of output tells the machine.
            self._logger.debug("server %s: %s", self.name, exc)
            threading.Thread(target=proc.stop, name="mcp-stop", daemon=True).start()

    def _close(self, graceful: bool) -> None:
        with self._lock:
            proc, self._proc = self._proc, None
            threads, self._threads = self._threads, []
            self._retired = threads
        if graceful:
            self._stop_process(proc, threads, graceful)
            return
        # The transport failed (the process exited, or its output lost the framing):
        # stopping it waits, so not on the thread that noticed.
        stopper = threading.Thread(
            target=self._stop_process,
            args=(proc, threads, graceful),
            name="mcp-stop",
            daemon=True,
        )
        # Published started, under the lock _stop_transport reads it with: a close on
        # another thread joined it before start() (RuntimeError: "cannot join thread
        # before it is started", with a server that exits at once).
        with self._lock:
            stopper.start()
            self._stopper = stopper

    def _stop_process(
        self, proc: _Process | None, threads: list[threading.Thread], graceful: bool
    ) -> None:
        if proc is not None:
            proc.stop(graceful)
        alive = False
        for t in threads:
            if t is not threading.current_thread():
                t.join(timeout=SHUTDOWN_GRACE)
            alive = alive or t.is_alive()
        if proc is not None and not alive:
            # Only once no reader can still be blocked on them (an fd closed under a
            # blocked read could be reused by another file).
            proc.close_pipes()
        with self._lock:
            self._conn.transport_closed(time.monotonic())
        self._pump()

    def _stop_transport(self) -> None:
        # After close: a failed process still being stopped is gone before we return.
        with self._lock:
            stopper = self._stopper
        if stopper is not None and stopper is not threading.current_thread():
            stopper.join(3 * SHUTDOWN_GRACE)

    def _wake_readers(self) -> None:
        proc = self._proc
        if proc is not None:
            proc.wake_reader()

    def _read_available(self) -> None:
        # Only if nobody holds the reading role: a holder is a caller that reads, or the
        # background reader blocked in select(), which reads whatever arrives at once.
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

    # ------------------------------------------------------------ reader side

    def _wait(self, waiter: _Waiter) -> Any:
        """Wait for an answer, reading the pipe ourselves when nobody else is
        (leader/follower): the caller holding the reading role reads and dispatches for
        everyone, so a sequential caller never waits for another thread to hand its
        answer over. A caller that finds the role taken waits on its own event; the
        leader hands the role to one such follower when it stops reading."""
        proc = self._proc
        if proc is None or proc.finished:
            return super()._wait(waiter)
        with proc.mutex:
            proc.callers += 1
            selecting = proc.bg_selecting
        if selecting:
            proc.wake_reader()
        try:
            while not waiter.done:
                with self._lock:
                    deadline = self._conn.next_deadline()
                if proc.finished or proc is not self._proc:
                    return super()._wait(waiter)
                leading = proc.read_lock.acquire(blocking=False)
                event = None
                if not leading:
                    event = waiter.get_event()
                    with proc.mutex:
                        proc.followers.append(waiter)
                    # The leader may have let go between the first try and the append
                    # (then nobody would hand the role over): try once more.
                    leading = proc.read_lock.acquire(blocking=False)
                    if leading:
                        with proc.mutex:
                            proc.followers.remove(waiter)
                if leading:
                    try:
                        self._read_until(proc, waiter, deadline)
                    finally:
                        proc.read_lock.release()
                        # A follower appends itself, then tries for the role again:
                        # one appended after this look takes the role itself.
                        if proc.followers:
                            self._hand_over(proc)
                elif event is not None:
                    remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                    if not waiter.done:
                        event.wait(remaining)
                    with proc.mutex:
                        if waiter in proc.followers:
                            proc.followers.remove(waiter)
                        if not waiter.done:
                            event.clear()
                if not waiter.done and deadline is not None and time.monotonic() >= deadline:
                    self._expire()
        finally:
            with proc.mutex:
                # No notify: the background reader polls (every _LINGER) rather than be
                # woken at the end of every call, which would cost a thread switch each.
                proc.callers -= 1
                proc.last_caller = time.monotonic()
        if waiter.error is not None:
            raise waiter.error
        return waiter.result

    def _hand_over(self, proc: _Process) -> None:
        """The reading role is free: wake one caller still waiting to take it."""
        with proc.mutex:
            for follower in proc.followers:
                if not follower.done and follower.event is not None:
                    follower.event.set()
                    return

    def _read_until(self, proc: _Process, waiter: _Waiter, deadline: float | None) -> None:
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
                # The wake pipe too: a call cancelled from another thread (a streaming
                # call left early) gets its reader out of select to look at it again.
                ready, _, _ = select.select([fd, proc.wake_r], [], [], timeout)
            except (OSError, ValueError):
                ready = [fd]  # let os.read report the closed pipe as EOF
            if not ready:
                return
            if fd not in ready:
                try:
                    os.read(proc.wake_r, 4096)
                except OSError:
                    pass
                continue
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
        """One read from stdout (caller holds the reading role), straight into the
        machine's line buffer (no new bytes object per read); then the events."""
        size = proc.read_size
        with self._lock:
            if proc is not self._proc:
                proc.finished = True  # replaced or closed: nothing of it is wanted
                return
            view = self._conn.get_buffer(size)
        try:
            got = os.readv(fd, [view])
        except OSError:
            got = 0
        finally:
            view.release()
        if got == size and size < BIG_PIPE:
            # Reads come back full: a large message is arriving. Read more at a time,
            # and grow the pipes so that it crosses in a few reads (best effort).
            proc.read_size = min(BIG_PIPE, size * 4)
            if not proc.big_pipes:
                proc.big_pipes = True
                enlarge_pipes(fd, proc.popen.stdin)
        elif got < PIPE_READ:
            proc.read_size = PIPE_READ
        if got:
            self._pump(False, self._got_data, proc, got)
            return
        proc.finished = True
        proc.alive = False
        code = proc.popen.poll()
        if code is None:
            try:
                code = proc.popen.wait(0.2)
            except subprocess.TimeoutExpired:
                code = None
        with proc.cond:
            proc.cond.notify_all()
        proc.wake_reader()
        with self._lock:
            if proc is self._proc:
                detail = f"exit code {code}" if code is not None else ""
                self._conn.receive_eof(time.monotonic(), detail)
        self._pump()

    def _got_data(self, proc: _Process, nbytes: int) -> None:
        # (under _lock) ``nbytes`` were read into the machine's buffer.
        if proc is self._proc:
            self._conn.buffer_updated(nbytes, time.monotonic())

    def _stderr_loop(self, proc: _Process) -> None:
        """Drain the child's stderr continuously (STDIO-5) into the log, bounded: big
        reads (never byte by byte), lines longer than the cap cut, the rest skipped."""
        stderr = proc.popen.stderr
        assert stderr is not None
        fd = stderr.fileno()
        log = self._stderr_log()
        while True:
            try:
                chunk = os.read(fd, PIPE_READ)
            except OSError:
                return
            if not log.feed(chunk):
                return
