"""A whole MCP client under asyncio on mcp_proto's ``BaseClient``; it imports no shell.

    python examples/asyncio_client.py "python server.py"            # list its tools
    python examples/asyncio_client.py -- python server.py --flag    # (argv after --)
    python examples/asyncio_client.py http://127.0.0.1:8000/mcp     # Streamable HTTP
    python examples/asyncio_client.py TARGET TOOL '{"arg": 1}'      # call_tool, print text
    python examples/asyncio_client.py --protocol legacy TARGET ...   # pin the era

Every protocol rule is in ``mcp_proto`` (the machine ``Connection``, the client
``BaseClient``). This file does what waits (docs/embedding.md, "Driving the whole
client"): ``AsyncioServer`` runs a machine's transport (a process, or HTTP through
httpcore[asyncio]), its timer and pump; ``AsyncioClient`` performs the effects.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import inspect
import json
import logging
import os
import random
import signal
import sys
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, TypeVar

import httpcore

from mcp_proto import NEED_DATA
from mcp_proto import connection as mc
from mcp_proto import events as ev
from mcp_proto.client.base import CANCELLED_REASON, EFFECTS, BaseClient
from mcp_proto.client.routing import CONNECTION_ENDED, ProgressDue, RequestDue
from mcp_proto.client.scoped import ServerMethods
from mcp_proto.config import (
    ServerConfig,
    detect_transport,
    sse_config,
    stdio_config,
    streamable_http_config,
)
from mcp_proto.connection.frames import FailureKind
from mcp_proto.effects import CallHost, Op, ProgressCallback
from mcp_proto.errors import ConnectionError, MCPError
from mcp_proto.handlers import Reply
from mcp_proto.server_view import ServerView
from mcp_proto.session import ServerInfo
from mcp_proto.types import Tool

T = TypeVar("T")
GRACE = 2.0  # seconds between closing stdin, SIGTERM and SIGKILL (process mechanics)
# httpcore's exceptions, most specific first, and what the machine calls them.
FAILURES: list[tuple[type[Exception], FailureKind]] = [
    (httpcore.ReadTimeout, "read_timeout"), (httpcore.TimeoutException, "timeout"),
    (httpcore.NetworkError, "network"), (httpcore.ProtocolError, "protocol"),
    (httpcore.UnsupportedProtocol, "protocol"),
]
log = logging.getLogger("asyncio_client")
_SHELL_ONLY = ("logger", "ssl_context", "proxy", "http_settings")  # httpcore's defaults here


class AsyncioServer(ServerView, ServerMethods):
    """One server's machine on the running loop (``now``: ``loop.time()``). ``BaseClient``
    calls its waiting methods; what the client routes goes to ``on_event``."""

    def __init__(
        self, config: ServerConfig, *, name: str, on_event: Callable[[Any, Any], None],
        **options: Any,  # client_info, capabilities, limits, era options, ...
    ) -> None:
        self.config = config
        self.name = name
        self._on_event = on_event
        options = {k: v for k, v in options.items() if k not in _SHELL_ONLY}
        self.conn = self._conn = mc.Connection(config, name=name, random=random.random, **options)
        self._loop = asyncio.get_running_loop()
        self._calls: dict[int, asyncio.Future[Any]] = {}
        self._progress: dict[int, ProgressCallback] = {}
        self._connected: list[asyncio.Future[ServerInfo]] = []
        self._closed: asyncio.Future[None] | None = None
        self._subscriptions: dict[int, Any] = {}  # (listen: not offered here)
        self._epoch = 0  # transports opened: a server request is answered on its own
        self._timer: asyncio.TimerHandle | None = None
        self._pumping = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._proc: asyncio.subprocess.Process | None = None  # the current process
        self._procs: list[asyncio.subprocess.Process] = []  # every one started
        self._pool: httpcore.AsyncConnectionPool | None = None
        self._exchanges: dict[int, asyncio.Task[None]] = {}

    async def ensure_connected(self) -> ServerInfo:
        info = self.conn.server
        if info is not None and self.conn.is_connected:
            return info
        waiter: asyncio.Future[ServerInfo] = self._loop.create_future()
        self._connected.append(waiter)
        self.conn.connect(self._loop.time())
        self._pump()
        return await waiter

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *,
        timeout: float | None = None, progress: ProgressCallback | None = None, tool: Any = None,
        cancel_on_timeout: bool = True,
    ) -> Any:
        """One request: its result, or its typed error. Progress goes to the client
        (queued on the loop ahead of the result, so it has run when this returns)."""
        now, want = self._loop.time(), progress is not None
        cid = self.conn.start_call(method, params, now=now, timeout=timeout,
                                   progress=want, tool=tool, cancel_on_timeout=cancel_on_timeout)
        future = self._calls[cid] = self._loop.create_future()
        if progress is not None:
            self._progress[cid] = progress
        self._pump()
        try:
            return await future
        except asyncio.CancelledError:
            if self._calls.pop(cid, None) is not None:  # the caller gave up: cancel it
                self.conn.cancel_call(cid, CANCELLED_REASON, now=self._loop.time())
                self._pump()
            raise
        finally:
            self._progress.pop(cid, None)

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, only_if_connected: bool = False
    ) -> None:
        if only_if_connected and not self.is_connected:
            return
        await self.ensure_connected()
        self.conn.notify(method, params, now=self._loop.time())
        self._pump()

    def reply(self, epoch: Any, request_id: Any, reply: Reply) -> None:
        if epoch != self._epoch:
            return  # asked on a transport that is gone
        if reply.code is None:
            self.conn.answer(request_id, reply.result)
        else:
            self.conn.refuse(request_id, reply.code, reply.message or "")
        self._pump()

    def set_header(self, name: str, value: str | None) -> None:
        self.conn.set_header(name, value)

    def set_era_log_level(self, level: str | None) -> None:
        self.conn.log_level = level

    async def cleanup(self) -> None:  # close (bounded), stop every process it started
        if self.conn.state not in (mc.ConnectionState.IDLE, mc.ConnectionState.CLOSED):
            self._closed = self._loop.create_future()
            self.conn.close(self._loop.time())
            self._pump()
            await self._closed
        for proc in self._procs:  # never leave a server running, whatever happened
            if proc.returncode is None:
                await self._stop(proc)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

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
        self._tasks.add(task := self._loop.create_task(coro))
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
            self._epoch += 1
            proc, self._proc = self._proc, None
            pool, self._pool = self._pool, None
            started = list(self._exchanges.values())  # the DELETE among them
            self._spawn(self._close_transport(proc, pool, started))

    def _dispatch(self, event: object) -> None:
        if isinstance(event, (mc.CallSucceeded, mc.CallFailed)):
            future = self._calls.pop(event.call_id, None)
            if future is not None and not future.done():
                if isinstance(event, mc.CallSucceeded):
                    future.set_result(event.result)
                else:
                    future.set_exception(event.error)
        elif isinstance(event, mc.CallProgress):
            callback = self._progress.get(event.call_id)
            if callback is not None:
                self._on_event(self, ProgressDue(callback, event))
        elif isinstance(event, (mc.Connected, mc.ConnectFailed)):
            waiters, self._connected = self._connected, []
            for waiter in (w for w in waiters if not w.done()):
                if isinstance(event, mc.ConnectFailed):
                    waiter.set_exception(event.error)
                else:
                    waiter.set_result(event.info)
        elif isinstance(event, mc.ServerRequest):  # every one is answered (reply)
            self._on_event(self, RequestDue(self._epoch, event))
        elif isinstance(event, (mc.Closed, mc.Disconnected)):
            closed = self._closed
            if isinstance(event, mc.Closed) and closed is not None and not closed.done():
                closed.set_result(None)
            self._on_event(self, CONNECTION_ENDED)
        elif isinstance(event, mc.Diagnostic):  # its level: "warning"...
            level = logging.getLevelNamesMapping().get(event.level.upper(), logging.WARNING)
            log.log(level, "%s", event.message)
        else:  # notifications, log messages, discarded input: the client routes them
            self._on_event(self, event)

    async def _start_process(self) -> None:
        env = {**os.environ, **self.config.env} if self.config.env else None
        try:
            pipe = asyncio.subprocess.PIPE  # its own process group, signalled on close:
            proc = await asyncio.create_subprocess_exec(
                *self.config.command, stdin=pipe, stdout=pipe, env=env, cwd=self.config.cwd,
                start_new_session=True,
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

    async def _close_transport(self, proc: Any, pool: Any, started: list[Any]) -> None:
        if proc is not None:
            await self._stop(proc)
        await asyncio.gather(*started, return_exceptions=True)
        if pool is not None:
            await pool.aclose()
        self.conn.transport_closed(self._loop.time())
        self._pump()

    async def _exchange(self, frame: mc.StartExchange) -> None:
        xid, pool, now = frame.xid, self._pool, self._loop.time
        assert pool is not None
        rt = self.config.read_timeout
        timeouts = {"connect": rt, "write": rt, "pool": rt, "read": frame.read_timeout}
        try:
            headers, ext = list(frame.headers), {"timeout": timeouts}
            async with pool.stream(
                frame.method, frame.url, headers=headers, content=frame.body, extensions=ext
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


class AsyncioClient(BaseClient[AsyncioServer]):
    """The whole client: ``BaseClient`` plus asyncio's waiting. Build it inside a
    running loop; ``async with`` closes it (every server process stopped)."""

    def _default_logger(self) -> Any:
        return log

    def _clock(self) -> float:
        return asyncio.get_running_loop().time()

    async def _sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def _server_class(self, kind: str) -> type[AsyncioServer]:
        return AsyncioServer

    def _init_io(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._jobs: set[asyncio.Task[Any]] = set()

    async def _run(self, op: Op[T]) -> T:
        """Perform ``op``'s effects (``BaseClient``'s table) until it returns."""
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = op.throw(error) if error is not None else op.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            value, error = None, None
            try:
                name, waits = EFFECTS[type(effect)]
                value = getattr(self, name)(effect)
                if waits and inspect.isawaitable(value):
                    value = await value
            except MCPError as exc:
                error = exc
            except Exception as exc:  # host code (CallHost) may raise anything
                if not isinstance(effect, CallHost):
                    raise
                error = exc

    def _submit(self, job: Callable[[], Any]) -> bool:
        """Host callbacks run on the loop, in order, after the event that queued them
        (a call's progress before its result wakes the caller: no settling needed)."""
        self._loop.call_soon(self._job, job)
        return True

    def _settle_after_callbacks(self, waiter: Any) -> None:
        pass

    def _job(self, job: Callable[[], Any]) -> None:
        try:
            result = job()
            if inspect.isawaitable(result):  # an async callback: a task of its own
                self._spawn(result)
        except Exception:
            log.exception("callback failed")

    def _spawn(self, coro: Any) -> None:
        self._jobs.add(task := self._loop.create_task(coro))
        task.add_done_callback(self._jobs.discard)

    def _serve(self, server: AsyncioServer, generation: Any, request: ev.ServerRequest) -> None:
        async def job() -> None:  # (the handlers' reply, or FAILED: _answer_op never raises)
            reply = await self._run(self._answer_op(server.name, request))
            server.reply(generation, request.request_id, reply)

        self._spawn(job())

    def _notify_callbacks(self, server: AsyncioServer, method: str, params: dict[str, Any]) -> None:
        for callback in list(self._callbacks):
            self._job(lambda callback=callback: callback(server, method, params))

    async def connect_all(self) -> None:
        for name in self._servers:
            await self._run(self._core._connect(name))

    async def list_tools(self, *, cache: bool = True) -> list[Tool]:
        return await self._run(self._core.list_tools(cache=cache))

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *,
        progress: ProgressCallback | None = None, timeout: float | None = None,
    ) -> dict[str, Any]:
        op = self._core.call_tool(name, arguments, progress=progress, timeout=timeout)
        return await self._run(op)

    async def read_resource(self, uri: str) -> list[Any]:
        return await self._run(self._core.read_resource(uri))

    def on_notification(self, callback: Callable[..., Any]) -> Callable[..., Any]:
        """``callback(server, method, params)`` (plain or async) for every notification."""
        self._callbacks.append(callback)
        return callback

    async def close(self) -> None:  # every server closed, its processes stopped
        await asyncio.gather(*(s.cleanup() for s in self._servers.values()))
        for task in list(self._jobs):
            task.cancel()

    async def __aenter__(self) -> AsyncioClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def parse(argv: list[str]) -> tuple[ServerConfig, str | None, dict[str, Any]]:
    """(config, tool or None, its arguments): ``[--protocol ERA] TARGET [TOOL JSON_ARGS]``,
    where ``-- words...`` is an argv and a TARGET a URL or a command line."""
    protocol: Any = "auto"
    if argv[:1] == ["--protocol"] and len(argv) >= 2:
        protocol, argv = argv[1], argv[2:]
    tool, arguments = None, {}
    if len(argv) == 3 and argv[0] != "--":
        tool, arguments, argv = argv[1], json.loads(argv[2]), argv[:1]
        if not isinstance(arguments, dict):
            raise ValueError("JSON_ARGS must be a JSON object")
    if len(argv) >= 2 and argv[0] == "--":
        return stdio_config(argv[1:], protocol=protocol), None, {}
    if len(argv) != 1:
        raise ValueError("usage: asyncio_client.py TARGET [TOOL JSON_ARGS] (or: -- CMD ARGS...)")
    kind = detect_transport(argv[0])
    if kind == "sse":
        return sse_config(argv[0]), tool, arguments
    make = stdio_config if kind == "stdio" else streamable_http_config
    return make(argv[0], protocol=protocol), tool, arguments


async def run(config: ServerConfig, tool: str | None, arguments: dict[str, Any]) -> list[str]:
    async with AsyncioClient([config]) as client:
        await client.connect_all()
        if tool is not None:
            result = await client.call_tool(tool, arguments)
            return [c["text"] for c in result.get("content", ()) if c.get("type") == "text"]
        tools = await client.list_tools()  # "name — first line of its description"
        return [" — ".join(filter(None, [t.name, (t.description or "").strip().split("\n")[0]]))
                for t in tools]


def main(argv: list[str] | None = None) -> int:
    try:
        config, tool, arguments = parse(sys.argv[1:] if argv is None else argv)
        lines = asyncio.run(run(config, tool, arguments))
    except (MCPError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # the server was stopped on the way out (close())
        return 130
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
