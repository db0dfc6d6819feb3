"""The Trio shell's stdio server: a child process, reader tasks, a session.

Same protocol core as the blocking shell (``mcp_proto.Session``, ``LineFramer``); only
the mechanics differ: tasks in the client's nursery instead of threads, a timer task
(``BaseServer``) instead of timed waits.

The round trip is kept to two scheduler passes: a small request is written with one
``os.write`` on the non-blocking pipe (the caller's checkpoint is parking for the
answer), and the reader task reads before it waits, so it delivers an answer and goes
back to ``wait_readable`` without a pass of its own.
"""

from __future__ import annotations

import logging
import os
import subprocess
from typing import Any, cast

import trio

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
from mcp_proto.errors import ConnectionError, LineTooLongError, MCPError
from mcp_proto.session import Session
from mcp_proto.stdio import LineFramer, frame

from ._base import BaseServer

__all__ = ["StdioServer"]

SHUTDOWN_GRACE = 2.0
_READ_CHUNK = 65536


def _fileno(stream: trio.abc.Stream | trio.abc.SendStream | trio.abc.ReceiveStream | None) -> int:
    """The fd of one of the child's pipes (a ``trio.lowlevel.FdStream`` on POSIX; -1
    once closed, so a late write fails with EBADF instead of reaching a reused fd)."""
    return cast("trio.lowlevel.FdStream", stream).fileno()


class _Process:
    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.pgid = server_group(process.pid)  # started with start_new_session=True
        self.write_lock = trio.Lock()
        self.alive = True
        self.big_pipes = False  # the pipes were enlarged for large messages
        # One scope per task: a CancelScope can be entered only once.
        self.reader_scope = trio.CancelScope()
        self.stderr_scope = trio.CancelScope()

    async def stop(self) -> None:
        """Close stdin and wait; then SIGTERM and wait; then SIGKILL and wait: bounded in
        time (STDIO-6). Signals go to the server's process group and every wait is for
        the whole group, so a server started through a launcher (``npx``, ``sh -c``)
        ends with everything it started (issue 8, item 6)."""
        self.alive = False
        p = self.process
        with trio.CancelScope(shield=True):
            try:
                if p.stdin is not None:
                    await p.stdin.aclose()
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
                pass
            for sig in (None, TERMINATE, KILL):
                if sig is not None:
                    self._signal(sig)
                if await self._wait_all(trio.current_time() + SHUTDOWN_GRACE):
                    break
        self.reader_scope.cancel()
        self.stderr_scope.cancel()

    def _signal(self, sig: int) -> None:
        if self.pgid is not None and signal_group(self.pgid, sig):
            return
        if self.process.returncode is None:  # no group of its own: the child alone
            try:
                self.process.send_signal(sig)
            except OSError:
                pass

    async def _wait_all(self, deadline: float) -> bool:
        """Wait until the child exited (reaped) and its group is empty, or ``deadline``."""
        with trio.move_on_at(deadline):
            await self.process.wait()
        if self.process.returncode is None:
            return False
        if self.pgid is None:
            return True
        # Descendants left in the group once the leader is gone: poll (they are not our
        # children, so there is nothing to wait() on), backing off to 50 ms.
        pause = 0.002
        while group_alive(self.pgid):
            remaining = deadline - trio.current_time()
            if remaining <= 0:
                return False
            await trio.sleep(min(pause, remaining))
            pause = min(pause * 2, 0.05)
        return True


class StdioServer(BaseServer):
    """One MCP server reached over stdio (Trio shell). Its reader tasks run in the
    client's nursery; a process that exited is restarted on the next request
    (STDIO-10)."""

    type = "stdio"
    _transmit_checkpoints = False  # small writes go out without a scheduler pass

    def __init__(self, config: ServerConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._proc: _Process | None = None

    def _transport_alive(self) -> bool:
        return self._proc is not None and self._proc.alive

    async def _open(self) -> None:
        env = {**os.environ, **self.config.env} if self.config.env else None
        try:
            process = await trio.lowlevel.open_process(
                list(self.config.command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                cwd=self.config.cwd,
                # Its own session and process group: a Ctrl-C at the host's terminal
                # does not kill the server mid-reply (close() ends it), and closing can
                # signal the group, which reaches what a launcher started (item 6).
                start_new_session=True,
            )
        except OSError as exc:
            raise ConnectionError(
                f"cannot start {self.config.command[0]!r}: {exc.strerror or exc}"
            ) from exc
        proc = _Process(process)
        self._proc = proc
        nursery = self._nursery()
        nursery.start_soon(self._read_loop, proc)
        nursery.start_soon(self._stderr_loop, proc)

    async def _close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            await proc.stop()

    async def _transmit(self, session: Session, deadline: float | None = None) -> None:
        proc = self._proc if session is self._session else None
        if proc is None:
            if session.data_to_send():
                raise ConnectionError(f"server {self.name!r} is not connected")
            return
        # Small frames and a pipe with room (the usual case): one os.write, no lock, no
        # scheduler pass, so this is then not a checkpoint (BaseServer supplies the
        # callers' checkpoints: _transmit_checkpoints). Anything else goes out under the
        # write lock, which keeps frames in the order they were queued.
        lock = proc.write_lock
        if lock.locked():
            await lock.acquire()
            try:
                frames = session.data_to_send()
                if frames:
                    await self._write_all(proc, self._chunks(proc, frames))
            finally:
                lock.release()
            return
        frames = session.data_to_send()
        if not frames:
            return
        chunks = self._chunks(proc, frames)
        sent = 0
        if len(chunks) == 1:
            data = chunks[0]
            try:
                sent = os.write(_fileno(proc.process.stdin), data)
            except BlockingIOError:
                pass
            except OSError as exc:
                raise self._write_failed(proc, exc) from exc
            if sent == len(data):
                return
            chunks = [memoryview(data)[sent:]]
        lock.acquire_nowait()  # free: checked above, and nothing yielded since
        try:
            await self._write_all(proc, chunks)
        finally:
            lock.release()

    def _chunks(self, proc: _Process, frames: list[bytes]) -> list[bytes | memoryview]:
        """Small frames joined into one newline-separated write; large ones not copied
        (appending a newline to a large message costs as much as writing it)."""
        if max(map(len, frames)) < _READ_CHUNK:
            if len(frames) == 1:
                return [frame(frames[0])]
            return [b"".join([frame(f) for f in frames])]
        if not proc.big_pipes:
            proc.big_pipes = True
            enlarge_pipes(proc.process.stdin, proc.process.stdout)
        out: list[bytes | memoryview] = []
        for f in frames:
            out += (f, b"\n")
        return out

    async def _write_all(self, proc: _Process, chunks: list[bytes | memoryview]) -> None:
        """Write ``chunks`` in order, under the write lock, waiting for the pipe.

        Not cancellable: the frames were taken from the session, and they may include
        other tasks' requests drained with ours, so they all go out even if the caller
        is cancelled (a frame cut short would also glue half a message to the next).
        Bounded instead: a server that reads nothing for ``read_timeout`` loses its
        connection. A caller cancelled before this point sends nothing (BaseServer
        checks before queueing its request)."""
        fd = _fileno(proc.process.stdin)
        limit: float | None = None
        try:
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    try:
                        n = os.write(fd, view)
                    except BlockingIOError:
                        n = 0
                    if n:
                        view = view[n:]
                    else:
                        if limit is None:
                            limit = trio.current_time() + self.read_timeout
                        with trio.CancelScope(deadline=limit, shield=True) as scope:
                            await trio.lowlevel.wait_writable(fd)
                        if scope.cancelled_caught:
                            raise TimeoutError(
                                f"the process read nothing for {self.read_timeout} s"
                            )
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise self._write_failed(proc, exc) from exc

    def _write_failed(self, proc: _Process, exc: BaseException) -> ConnectionError:
        error = ConnectionError(f"server {self.name!r}: cannot write to the process: {exc}")
        self._connection_lost(proc, error)
        return error

    # ------------------------------------------------------------ reader side

    async def _read_loop(self, proc: _Process) -> None:
        stdout = proc.process.stdout
        assert stdout is not None
        framer = LineFramer(self.config.max_line_size or self._limits.max_line_size, decode=True)
        fd = _fileno(stdout)  # non-blocking: trio's FdStream made it so
        # Read first and wait for the pipe only once it is empty: no scheduler pass of
        # our own between answers (receive_some checkpoints before every read). A
        # short read means the pipe was drained: wait rather than try a read that
        # fails. Two reads in a row without parking yield once, so a flooding server
        # cannot starve the other tasks.
        parked = True
        drained = False
        with proc.reader_scope:
            while True:
                size = _READ_CHUNK
                if framer.buffered >= _READ_CHUNK:  # a large message is arriving
                    size = BIG_PIPE
                    if not proc.big_pipes:
                        proc.big_pipes = True
                        enlarge_pipes(stdout, proc.process.stdin)
                chunk: bytes | None = None
                if drained:
                    try:
                        await trio.lowlevel.wait_readable(fd)
                        parked = True
                    except (trio.ClosedResourceError, OSError):
                        chunk = b""
                if chunk is None:
                    try:
                        chunk = os.read(fd, size)
                    except BlockingIOError:
                        drained = True
                        continue
                    except OSError:
                        chunk = b""
                if not parked:
                    await trio.lowlevel.checkpoint()
                parked = False
                drained = len(chunk) < size
                framer.receive_data(chunk)
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
                    self._connection_lost(proc, exc)
                    self._nursery().start_soon(proc.stop)
                    return
                self._deliver_to(proc, lines)
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

    def _deliver_to(self, proc: _Process, lines: list[bytes | str]) -> None:
        if proc is self._proc and self._session is not None:
            self._deliver(self._session, lines)

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
