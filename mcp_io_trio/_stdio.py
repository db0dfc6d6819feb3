"""The Trio shell's stdio transport: a child process, its pipes, who reads them.

What the machine asks (``OpenTransport``, ``Write``, ``CloseTransport``) is done here
with the process mechanics only; what the process writes goes to the machine as bytes
(``receive_data``) and its end as ``receive_eof``. Framing, the handshake and every
other rule are the machine's.

A round trip is one scheduler pass: a small message is written with one ``os.write`` on
the non-blocking pipe, and the caller then reads its answer itself
(``StdioServer._answer``: once before waiting, as a server on the same CPU has answered
by then, else after waiting for the pipe), dispatching whatever else arrives for
everyone. The reader task reads only between calls (notifications, server requests).
With calls in flight, a new frame waits one scheduler pass instead, gathering the
frames the other tasks of the batch send: 100 tasks calling at once cost two writes,
not 100 (and wake the server twice).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
from collections import deque
from collections.abc import Awaitable, Callable
from itertools import islice
from typing import cast

import trio

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

from ._base import BaseServer
from ._waiter import _Waiter

__all__ = ["StdioServer"]

#: Buffers one ``writev`` takes (POSIX's minimum where the system does not say).
_IOV_MAX = os.sysconf("SC_IOV_MAX") if "SC_IOV_MAX" in os.sysconf_names else 16

#: Frames written at once, with calls in flight, after a gathering pass that gathered
#: nothing (StdioServer._write): the pass costs a frame sent in turn with one other
#: caller a scheduler pass, so it is tried again only now and then.
_SKIP_GATHER = 16

#: Callers that wait for stdout at once after a read before waiting found nothing
#: (StdioServer._peek): that read costs a system call when the server runs on
#: another CPU, so it is tried again only now and then.
_SKIP_PEEK = 16

#: The reading role's holder when it is the reader task (not a caller).
_READER_TASK = object()


def _fileno(stream: trio.abc.Stream | trio.abc.SendStream | trio.abc.ReceiveStream | None) -> int:
    """The fd of one of the child's pipes (a ``trio.lowlevel.FdStream`` on POSIX; -1
    once closed, so a late write fails with EBADF instead of reaching a reused fd)."""
    return cast("trio.lowlevel.FdStream", stream).fileno()


class _Process:
    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.pgid = server_group(process.pid)  # started with start_new_session=True
        started(self.pgid)  # ended at once on demand, asked to end at exit
        self.stdin_fd = _fileno(process.stdin)
        # Bytes taken from the machine and not written yet, in order: whoever writes
        # (a caller, or a flush task) takes from here, so frames never overtake.
        self.outq: deque[bytes | memoryview] = deque()
        self.write_lock = trio.Lock()
        # A flush waits one scheduler pass before writing, so the frames the other
        # tasks of the batch send go with it (StdioServer._write); after a pass that
        # gathered nothing (two tasks calling in turn), the next _SKIP_GATHER frames
        # are written at once.
        self.gathering = False
        self.skip_gather = 0
        # Callers that wait for the pipe without reading it first (StdioServer._peek).
        self.skip_peek = 0
        self.alive = True  # False once its end was reported to the machine
        self.big_pipes = False  # the pipes were enlarged for large messages
        # One scope per task: a CancelScope can be entered only once.
        self.reader_scope = trio.CancelScope()
        # Reading stdout (see StdioServer._answer): who reads (a caller's waiter, or
        # _READER_TASK), the callers parked meanwhile, how many callers wait and when
        # the last one stopped; the reader task's wait for the pipe (a caller cancels
        # it to read itself) and its idle sleep (cancelled when a caller saw the end).
        self.stdout_fd = _fileno(process.stdout)
        self.read_size = PIPE_READ
        self.leader: object = None
        # Parked callers, oldest first (a dict: added and removed in O(1)).
        self.followers: dict[_Waiter, None] = {}
        self.callers = 0
        self.last_caller = -math.inf
        self.eof = False  # stdout ended (the reader task reports it to the machine)
        self.bg_wait: trio.CancelScope | None = None
        self.gate: trio.CancelScope | None = None
        self.stderr_scope = trio.CancelScope()

    async def stop(self, graceful: bool = True) -> None:
        """Close stdin, then wait out the steps of ``stop_steps`` (STDIO-6)."""
        p = self.process
        self.outq.clear()
        with trio.CancelScope(shield=True):
            try:
                if p.stdin is not None:
                    await p.stdin.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
            steps = stop_steps(self.pgid, p, graceful, trio.current_time, SHUTDOWN_GRACE)
            with contextlib.closing(steps):
                for step in steps:
                    with trio.move_on_at(step.until):
                        await (p.wait() if step.exit else trio.sleep_forever())
        self.reader_scope.cancel()
        self.stderr_scope.cancel()


class StdioServer(StdioTarget, BaseServer):
    """One MCP server reached over stdio (Trio shell). Its reader tasks run in the
    client's nursery; a process that exited is restarted when the machine asks for a
    transport again (STDIO-10)."""

    _proc: _Process | None

    # ------------------------------------------------------------ open / close

    async def _open_transport(self) -> None:
        try:
            process = await trio.lowlevel.open_process(
                list(self.config.command), **self._spawn_options()
            )
        except OSError as exc:
            raise self._start_failed(exc) from exc
        proc = _Process(process)
        self._proc = proc
        nursery = self._nursery()
        nursery.start_soon(self._read_loop, proc)
        nursery.start_soon(self._stderr_loop, proc)

    def _transport_pid(self) -> int | None:
        proc = self._proc
        return proc.process.pid if proc is not None else None

    def _detach_transport(self, graceful: bool) -> Callable[[], Awaitable[None]]:
        proc, self._proc = self._proc, None
        if proc is None:
            return trio.lowlevel.checkpoint
        if proc.gathering and not proc.write_lock.locked():
            # Frames gathered for a write one scheduler pass away: written now if the
            # pipe takes them (as a lone caller's are), before stop() drops the queue.
            proc.gathering = False
            with contextlib.suppress(OSError):
                os.write(proc.stdin_fd, b"".join(proc.outq))
            proc.outq.clear()
        proc.alive = False  # nothing more of it goes to the machine
        return functools.partial(proc.stop, graceful)

    # ------------------------------------------------------------ writing

    def _write(self, messages: list[bytes]) -> bool:
        proc = self._proc
        if proc is None or not proc.alive:
            return False  # the machine learns of the end from the reader
        queue = proc.outq
        if len(messages) == 1:
            small = len(messages[0]) < PIPE_READ
        else:
            small = max(map(len, messages)) < PIPE_READ
        if small:
            data = messages[0] + b"\n" if len(messages) == 1 else b"\n".join(messages) + b"\n"
            # (An empty queue means nothing is pending: a flush holding the lock has
            # written everything, or waits for the pipe with the rest still queued.)
            if not queue:
                if proc.callers:
                    # Calls are in flight: more tasks of this scheduler batch may be
                    # about to send (100 tasks calling at once). Their frames are
                    # gathered and written together by this caller's flush, one
                    # scheduler pass later: one write (and one wake-up of the server)
                    # instead of one per task.
                    if not proc.skip_gather:
                        queue.append(data)
                        proc.gathering = True
                        return True
                    proc.skip_gather -= 1
                # The usual case: small frames, a pipe with room, no call in flight.
                # One os.write, no lock, no scheduler pass (the caller's checkpoint is
                # parking for its answer).
                try:
                    # (alive: stop() has not closed stdin, so this fd is still ours)
                    sent = os.write(proc.stdin_fd, data)
                except BlockingIOError:
                    sent = 0
                except OSError as exc:
                    self._write_failed(proc, exc)
                    return False
                if sent == len(data):
                    return False
                queue.append(memoryview(data)[sent:])
                return True
            queue.append(data)
            # Gathering (the queue then holds the gathering caller's frame): its flush,
            # one scheduler pass away, writes ours too. Else a flush waits for the pipe.
            return not proc.gathering
        if not proc.big_pipes:
            proc.big_pipes = True
            enlarge_pipes(proc.process.stdin, proc.process.stdout)
        # Large messages are not copied to append a newline (that costs as much as
        # writing them): the newline is a piece of its own.
        for message in messages:
            queue += (memoryview(message), memoryview(b"\n"))
        return True

    async def _flush(self) -> None:
        """Write the queue out under the write lock, waiting for the pipe.

        Not cancellable once writing: the bytes were taken from the machine and may be
        other tasks' messages, so they all go out even if this caller is cancelled (a
        frame cut short would also glue half a message to the next). Bounded instead:
        a server that reads nothing for ``read_timeout`` loses its connection."""
        proc = self._proc
        if proc is None:
            return
        if proc.gathering:
            # Let the other tasks of this scheduler batch queue their frames (see
            # _write); shielded: they are written even if this caller is cancelled.
            await trio.lowlevel.cancel_shielded_checkpoint()
            proc.gathering = False
            if len(proc.outq) < 2:
                proc.skip_gather = _SKIP_GATHER  # the pass was for this frame alone
        lock = proc.write_lock
        try:
            lock.acquire_nowait()  # free (the usual case): no scheduler pass
        except trio.WouldBlock:
            # The holder writes the whole queue, ours included: once we have the lock
            # there is usually nothing left (this wait is the backpressure).
            await lock.acquire()
        try:
            fd = _fileno(proc.process.stdin)
            queue = proc.outq
            limit: float | None = None
            while queue and proc.alive:
                try:
                    # The whole queue in one system call: the frames a batch of tasks
                    # gathered (see _write), or a large message and its newline.
                    n = os.writev(
                        fd, queue if len(queue) <= _IOV_MAX else list(islice(queue, _IOV_MAX))
                    )
                except BlockingIOError:
                    n = 0
                if n:
                    while n:
                        view = queue[0]
                        if n < len(view):
                            queue[0] = memoryview(view)[n:]
                            break
                        n -= len(view)
                        queue.popleft()
                else:
                    if limit is None:
                        limit = trio.current_time() + self.read_timeout
                    with trio.CancelScope(deadline=limit, shield=True) as scope:
                        await trio.lowlevel.wait_writable(fd)
                    if scope.cancelled_caught:
                        raise TimeoutError(f"the process read nothing for {self.read_timeout} s")
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            self._write_failed(proc, exc)
        finally:
            lock.release()

    def _write_failed(self, proc: _Process, exc: BaseException) -> None:
        proc.outq.clear()
        self._ended(proc, f"cannot write to the process: {exc}")

    def _ended(self, proc: _Process, detail: str) -> None:
        """Tell the machine the process's output is over (once per process)."""
        if not proc.alive or proc is not self._proc:
            return
        proc.alive = False
        self._conn.receive_eof(trio.current_time(), detail)
        self._pump_nowait()

    # ------------------------------------------------------------ reading

    # Who reads stdout (leader/follower, as in the blocking shell): a caller waiting
    # for its answer reads the pipe itself and dispatches for everyone, so a sequential
    # call costs one wait for the pipe and no task switch; other callers park until the
    # reader finishes them or hands them the reading role. The reader task reads only
    # when no caller has been waiting for ``_LINGER`` (notifications and server
    # requests between calls), so back-to-back calls never have to wake it.

    async def _answer(self, waiter: _Waiter) -> None:
        proc = self._proc
        if proc is None or not proc.alive or proc.eof:
            await waiter.park()
            return
        proc.callers += 1
        fd = proc.stdout_fd
        try:
            while not waiter.done:
                if proc.leader is None and proc.alive and not proc.eof and proc is self._proc:
                    # Lead: read until our answer is in or stdout ends.
                    proc.leader = waiter
                    try:
                        if proc.skip_peek:
                            proc.skip_peek -= 1
                        elif self._peek(proc, fd) and waiter.done:
                            await trio.lowlevel.checkpoint()  # (answered already: one)
                            break
                        while not waiter.done:
                            waiter.reading = fd
                            try:
                                await trio.lowlevel.wait_readable(fd)
                            except (trio.ClosedResourceError, OSError):
                                if not waiter.done:  # (else woken by _Waiter.finish)
                                    self._saw_end(proc)
                                break
                            finally:
                                waiter.reading = -1
                            if not await self._read_ready(proc, fd, waiter):
                                break
                    finally:
                        proc.leader = None
                    continue
                waiting = proc.bg_wait
                if waiting is not None:
                    waiting.cancel()  # the reader task gives the role up (then hands it over)
                proc.followers[waiter] = None
                try:
                    # Woken by ``finish`` or by ``_hand_over`` (not done: read now).
                    await waiter.park()
                finally:
                    proc.followers.pop(waiter, None)  # (_hand_over may have dropped it)
        finally:
            proc.callers -= 1
            if not proc.callers:  # (the reader task's linger counts from the last one)
                proc.last_caller = self._clock()
            if proc.leader is None and proc.followers:
                self._hand_over(proc)  # (a follower handed the role, then done or cancelled)

    def _peek(self, proc: _Process, fd: int) -> bool:
        """Read what is in the pipe already, without waiting; True if something was.

        A server on the same CPU as the client runs as soon as it is written to, so the
        answer is often in before the caller waits for it: read then, it costs no
        registration with epoll and no wait. A peek that finds nothing costs a system
        call, so after one the next ``_SKIP_PEEK`` callers wait at once (a server on
        another CPU answers later)."""
        try:
            chunk = os.read(fd, proc.read_size)
        except BlockingIOError:
            proc.skip_peek = _SKIP_PEEK
            return False
        except OSError:
            return False  # (the wait that follows sees it)
        if not chunk:
            return False  # end of output: the wait that follows reports it
        self._feed(proc, chunk)
        return True

    def _feed(self, proc: _Process, chunk: bytes) -> bool:
        """Hand a chunk read from stdout to the machine; True if the read was full (a
        large message or a flood: more is waiting)."""
        full = len(chunk) == proc.read_size
        # A full read: a large message (or a flood) is arriving: bigger pipes,
        # bigger reads until the pipe is drained again (a 1 MiB read buffer for
        # every small answer would cost its allocation each time).
        proc.read_size = BIG_PIPE if full else PIPE_READ
        if full and not proc.big_pipes:
            proc.big_pipes = True
            enlarge_pipes(proc.process.stdout, proc.process.stdin)
        if proc is self._proc and proc.alive:
            self._conn.receive_data(chunk, self._clock())
            self._pump_nowait()
        # (else closing: the pipe is drained and fed to nobody, so the process never
        # blocks on a full pipe while it is asked to exit)
        return full

    async def _read_ready(self, proc: _Process, fd: int, waiter: _Waiter | None) -> bool:
        """The pipe is readable: read until it is drained (or ``waiter`` is done) and
        feed the machine (a process being closed: drained, fed to nobody); False once
        stdout ended."""
        while True:
            try:
                chunk = os.read(fd, proc.read_size)
            except BlockingIOError:
                return True
            except OSError:
                chunk = b""
            if not chunk:
                self._saw_end(proc)
                return False
            if not self._feed(proc, chunk) or (waiter is not None and waiter.done):
                return True
            # Two reads in a row yield once, so a flooding server cannot starve the
            # other tasks.
            await trio.lowlevel.checkpoint()

    def _saw_end(self, proc: _Process) -> None:
        """stdout ended: the reader task reports it (it waits for the exit code)."""
        proc.eof = True
        gate = proc.gate
        if gate is not None:
            gate.cancel()

    def _hand_over(self, proc: _Process) -> None:
        """The reading role is free: wake one parked caller to take it.

        Followers that cannot take it (answered, cancelled, or woken already: no parked
        task) are dropped as they are passed, so each is looked at once. (Scanning them
        on every hand-over made a round of 100 concurrent calls cost 100²/2 steps: the
        leader answers them all, and each then hands over on its way out.)"""
        followers = proc.followers
        while followers:
            follower = next(iter(followers))
            task = follower.task
            if task is not None and not follower.done:
                follower.task = None
                trio.lowlevel.reschedule(task)
                return
            del followers[follower]

    async def _read_loop(self, proc: _Process) -> None:
        fd = proc.stdout_fd
        with proc.reader_scope:
            while not proc.eof:
                now = self._clock()
                if proc.leader is not None or (proc.callers and proc.alive):
                    wake = now + self._LINGER
                elif now - proc.last_caller < self._LINGER:
                    wake = proc.last_caller + self._LINGER
                else:
                    proc.leader = _READER_TASK
                    try:
                        with trio.CancelScope() as scope:
                            proc.bg_wait = scope
                            try:
                                await trio.lowlevel.wait_readable(fd)
                            except (trio.ClosedResourceError, OSError):
                                self._saw_end(proc)
                            finally:
                                proc.bg_wait = None
                        if not scope.cancelled_caught and not proc.eof:
                            await self._read_ready(proc, fd, None)
                    finally:
                        proc.leader = None
                        if proc.followers and proc.alive:
                            self._hand_over(proc)
                    continue
                with trio.CancelScope(deadline=wake) as gate:
                    proc.gate = gate
                    await trio.sleep_forever()
                proc.gate = None
        if proc is self._proc and proc.alive:
            code = None
            with trio.move_on_after(SHUTDOWN_GRACE):
                code = await proc.process.wait()
            self._ended(proc, f"exit code {code}" if code is not None else "")

    async def _stderr_loop(self, proc: _Process) -> None:
        """Drain the child's stderr continuously (STDIO-5) into the log, bounded."""
        stderr = proc.process.stderr
        assert stderr is not None
        log = self._stderr_log()
        with proc.stderr_scope:
            while True:
                try:
                    chunk = await stderr.receive_some(PIPE_READ)
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                    return
                if not log.feed(chunk):
                    return
