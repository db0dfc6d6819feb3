"""List an MCP server's tools with asyncio: a third driver for mcp_proto's machine.

    python examples/asyncio_client.py "python server.py --flag"    # a command line (shlex)
    python examples/asyncio_client.py -- python server.py --flag   # or its words after --
    python examples/asyncio_client.py http://127.0.0.1:8000/mcp    # Streamable HTTP
    python examples/asyncio_client.py http://127.0.0.1:8000/sse    # legacy HTTP+SSE

Every protocol rule (handshake, ids, timeouts, retries, sessions, resumption) is in
``mcp_proto.connection.Connection``. This file does a host loop's three jobs only
(docs/embedding.md): run the transport (a child process, or HTTP exchanges through
httpcore, which needs anyio under asyncio: ``pip install 'httpcore[asyncio]'``), keep one
timer at ``next_deadline()``, and after every input perform the machine's frames and
dispatch its events (``_pump``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import random
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any

import httpcore

from mcp_proto import NEED_DATA
from mcp_proto import connection as mc
from mcp_proto.config import (
    ServerConfig,
    detect_transport,
    sse_config,
    stdio_config,
    streamable_http_config,
)
from mcp_proto.connection.frames import FailureKind
from mcp_proto.effects import Call, Log, Op
from mcp_proto.errors import ConnectionError, MCPError
from mcp_proto.limits import Limits
from mcp_proto.pagination import list_all
from mcp_proto.types import Implementation, Tool

Progress = Callable[[float, "float | None", "str | None"], object]
GRACE = 2.0  # seconds between closing stdin, SIGTERM and SIGKILL (process mechanics)
# httpcore's exceptions, most specific first, and what the machine calls them.
FAILURES: list[tuple[type[Exception], FailureKind]] = [
    (httpcore.ReadTimeout, "read_timeout"),
    (httpcore.TimeoutException, "timeout"),
    (httpcore.NetworkError, "network"),
    (httpcore.ProtocolError, "protocol"),
    (httpcore.UnsupportedProtocol, "protocol"),
]
log = logging.getLogger("asyncio_client")


def log_at(level: str, message: str) -> None:
    """Log at a level given by name, "warning" or "WARNING" (the core's Diagnostic)."""
    number = logging.getLevelName(level.upper())
    log.log(number if isinstance(number, int) else logging.WARNING, "%s", message)


class AsyncioClient:
    """One server, driven from the running asyncio loop; ``now`` is ``loop.time()``."""

    def __init__(self, config: ServerConfig, *, limits: Limits | None = None) -> None:
        self.config = config
        self.conn = mc.Connection(
            config,
            name=config.name or "server",
            client_info=Implementation("asyncio-example", "0.1"),
            capabilities=dict,  # no roots/sampling/elicitation handlers here
            limits=limits,
            random=random.random,
        )
        self._loop = asyncio.get_running_loop()
        self._calls: dict[int, tuple[asyncio.Future[Any], Progress | None]] = {}
        self._connected: asyncio.Future[None] | None = None
        self._closed: asyncio.Future[None] = self._loop.create_future()
        self._timer: asyncio.TimerHandle | None = None
        self._pumping = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._proc: asyncio.subprocess.Process | None = None  # the current process
        self._procs: list[asyncio.subprocess.Process] = []  # every one started
        self._pool: httpcore.AsyncConnectionPool | None = None
        self._exchanges: dict[int, asyncio.Task[None]] = {}

    # ------------------------------------------------------------------ the user side

    async def connect(self) -> None:
        self._connected = self._loop.create_future()
        self.conn.connect(self._loop.time())
        self._pump()
        await self._connected

    async def call(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: Progress | None = None,
    ) -> Any:
        """One request: its result, or its typed error. Progress callbacks run inside
        ``_pump`` as their events come out, and the machine emits a call's progress
        before its result, so they have all run when this returns (issue 9 item 6)."""
        now = self._loop.time()
        want = progress is not None
        call_id = self.conn.start_call(method, params, now=now, timeout=timeout, progress=want)
        future: asyncio.Future[Any] = self._loop.create_future()
        self._calls[call_id] = (future, progress)
        self._pump()
        try:
            return await future
        except asyncio.CancelledError:
            if call_id in self._calls:  # the caller gave up: the machine cancels it
                self.conn.cancel_call(call_id, "cancelled by the caller", now=self._loop.time())
                self._pump()
            raise

    async def close(self) -> None:
        if not self._closed.done():
            self.conn.close(self._loop.time())
            self._pump()
            await self._closed
        for proc in self._procs:  # never leave a server running, whatever happened
            if proc.returncode is None:
                await self._stop(proc)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    # ------------------------------------------------------ the driver: pump and timer

    def _pump(self) -> None:
        """Perform every frame and dispatch every event until the machine has none,
        then re-arm the timer. A nested call (a callback starting a call) returns at
        once: the outer loop picks up what it queued."""
        if self._pumping:
            return
        self._pumping = True
        try:
            while True:
                todo = self.conn.frames_to_send()
                for frame in todo:
                    self._perform(frame)
                event = self.conn.next_event()
                if event is not NEED_DATA:
                    self._dispatch(event)
                elif not todo:
                    break
        finally:
            self._pumping = False
        deadline = self.conn.next_deadline()
        if self._timer is not None and self._timer.when() != deadline:
            self._timer.cancel()
            self._timer = None
        if deadline is not None and self._timer is None:
            self._timer = self._loop.call_at(deadline, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self.conn.handle_timeout(self._loop.time())
        self._pump()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = self._loop.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _perform(self, frame: mc.Frame) -> None:
        if isinstance(frame, mc.OpenTransport):
            if self.config.type == "stdio":
                self._spawn(self._start_process())
            elif importlib.util.find_spec("anyio") is None:
                hint = "HTTP under asyncio needs anyio: pip install 'httpcore[asyncio]'"
                self.conn.transport_failed(ConnectionError(hint), self._loop.time())
            else:
                self._pool = httpcore.AsyncConnectionPool(max_connections=16, retries=0)
                self.conn.transport_opened(self._loop.time())
        elif isinstance(frame, mc.Write):
            stdin = self._proc.stdin if self._proc is not None else None
            if stdin is not None and not stdin.is_closing():  # else: EOF tells the machine
                stdin.writelines([part for m in frame.messages for part in (m, b"\n")])
        elif isinstance(frame, mc.StartExchange):
            self._exchanges[frame.xid] = self._spawn(self._exchange(frame))
        elif isinstance(frame, mc.AbortExchange):
            task = self._exchanges.pop(frame.xid, None)
            if task is not None:
                task.cancel()
        elif isinstance(frame, mc.CloseTransport):
            # This transport only: a new one may be opened before it is gone.
            proc, self._proc = self._proc, None
            pool, self._pool = self._pool, None
            started = list(self._exchanges.values())  # the DELETE among them
            self._spawn(self._close_transport(proc, pool, started))

    def _dispatch(self, event: object) -> None:
        if isinstance(event, mc.CallProgress):
            progress = self._calls[event.call_id][1]
            try:
                if progress is not None:
                    progress(event.progress, event.total, event.message)
            except Exception:  # a host's bug must not stop the pump (and every call)
                log.exception("progress callback failed")
        elif isinstance(event, (mc.CallSucceeded, mc.CallFailed)):
            future = self._calls.pop(event.call_id)[0]
            if future.done():
                pass
            elif isinstance(event, mc.CallSucceeded):
                future.set_result(event.result)
            else:
                future.set_exception(event.error)
        elif isinstance(event, (mc.Connected, mc.ConnectFailed)):
            waiter, self._connected = self._connected, None
            if waiter is not None and not waiter.done():
                if isinstance(event, mc.ConnectFailed):
                    waiter.set_exception(event.error)
                else:
                    waiter.set_result(None)
        elif isinstance(event, mc.ServerRequest):  # every one must be answered
            if event.method == "ping":
                self.conn.answer(event.request_id, {})
            else:
                self.conn.refuse(event.request_id, -32601, f"{event.method} is not supported")
        elif isinstance(event, mc.Closed):
            if not self._closed.done():
                self._closed.set_result(None)
        elif isinstance(event, mc.Diagnostic):
            log_at(event.level, event.message)

    # ------------------------------------------------------------------ stdio

    async def _start_process(self) -> None:
        env = {**os.environ, **self.config.env} if self.config.env else None
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.config.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                env=env,
                cwd=self.config.cwd,
                start_new_session=True,  # its own process group, signalled on close
            )
        except OSError as exc:
            name = self.config.command[0]
            error = ConnectionError(f"cannot start {name!r}: {exc.strerror or exc}")
            self.conn.transport_failed(error, self._loop.time())
        else:
            self._proc = proc
            self._procs.append(proc)
            self.conn.transport_opened(self._loop.time())
            self._spawn(self._read(proc))
        self._pump()

    async def _read(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            if proc is self._proc:  # else closed (CloseTransport): drained, not fed
                self.conn.receive_data(chunk, self._loop.time())
                self._pump()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(proc.wait(), GRACE)
        if proc is self._proc:
            status = f"exit status {proc.returncode}" if proc.returncode is not None else ""
            self.conn.receive_eof(self._loop.time(), status)
            self._pump()

    async def _stop(self, proc: asyncio.subprocess.Process) -> None:
        """Close stdin, wait; SIGTERM the process group, wait; SIGKILL it (STDIO-6)."""
        if proc.stdin is not None:
            proc.stdin.close()
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, sig)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), GRACE)
                break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # what the server started and left behind

    async def _close_transport(
        self,
        proc: asyncio.subprocess.Process | None,
        pool: httpcore.AsyncConnectionPool | None,
        started: list[asyncio.Task[None]],
    ) -> None:
        if proc is not None:
            await self._stop(proc)
        await asyncio.gather(*started, return_exceptions=True)
        if pool is not None:
            await pool.aclose()
        self.conn.transport_closed(self._loop.time())
        self._pump()

    # ------------------------------------------------------------------ HTTP

    async def _exchange(self, frame: mc.StartExchange) -> None:
        xid, pool, now = frame.xid, self._pool, self._loop.time
        assert pool is not None
        rt = self.config.read_timeout
        timeouts = {"connect": rt, "write": rt, "pool": rt, "read": frame.read_timeout}
        try:
            async with pool.stream(
                frame.method,
                frame.url,
                headers=list(frame.headers),
                content=frame.body,
                extensions={"timeout": timeouts},
            ) as response:
                heads = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers]
                self.conn.exchange_head(xid, response.status, heads, now())
                self._pump()
                async for chunk in response.aiter_stream():
                    self.conn.exchange_data(xid, chunk, now())
                    self._pump()
                    if not self.conn.wants_exchange(xid):
                        return  # leaving the block closes the response
            self.conn.exchange_end(xid, now())
        except tuple(exc for exc, _ in FAILURES) as exc:
            kind = next(kind for cls, kind in FAILURES if isinstance(exc, cls))
            detail = str(exc) or type(exc).__name__
            self.conn.exchange_failed(xid, mc.ExchangeFailure(kind, detail), now())
        finally:
            self._exchanges.pop(xid, None)
        self._pump()


# ---------------------------------------------------------------------- the program


async def run_op(client: AsyncioClient, op: Op[Any]) -> Any:
    """Drive one of the core's operations (a generator of effects) with this client."""
    outcome: Any = None
    try:
        while True:
            effect = op.send(outcome)
            outcome = None
            if isinstance(effect, Call):
                outcome = await client.call(effect.method, effect.params, timeout=effect.timeout)
            elif isinstance(effect, Log):
                log_at(effect.level, effect.message)
    except StopIteration as done:
        return done.value


def config_for(argv: list[str]) -> ServerConfig:
    """``-- words...`` is an argv; one argument is a URL or a command line."""
    if len(argv) >= 2 and argv[0] == "--":
        return stdio_config(argv[1:])
    if len(argv) != 1:
        raise ValueError("usage: asyncio_client.py TARGET  (or: asyncio_client.py -- CMD ARGS...)")
    kind = detect_transport(argv[0])
    if kind == "stdio":
        return stdio_config(argv[0])
    return (sse_config if kind == "sse" else streamable_http_config)(argv[0])


async def list_tools(config: ServerConfig) -> list[Tool]:
    client = AsyncioClient(config)
    try:
        await client.connect()
        limit = client.conn.limits.max_pages
        items = await run_op(client, list_all("server", "tools/list", "tools", max_pages=limit))
        return [Tool.from_dict(item) for item in items]
    finally:
        await client.close()


def main(argv: list[str] | None = None) -> int:
    try:
        tools = asyncio.run(list_tools(config_for(sys.argv[1:] if argv is None else argv)))
    except (MCPError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # the server was stopped on the way out (close())
        return 130
    for tool in tools:
        summary = (tool.description or "").strip().split("\n")[0]
        print(f"{tool.name} — {summary}" if summary else tool.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
