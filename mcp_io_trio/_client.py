"""The Trio ``Client``: drives ``mcp_proto.ClientCore`` operations in its own nursery."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Concatenate, Literal, ParamSpec, TypeVar

import trio

from mcp_io_common.client_io import ClientIO
from mcp_io_common.servers import raise_first
from mcp_proto.client import ClientCore
from mcp_proto.client.base import EFFECTS, results_in_order
from mcp_proto.client.router import ServerSelector
from mcp_proto.client.streaming import END, ToolChunk, ToolStream
from mcp_proto.connection import CallCancelledError
from mcp_proto.effects import Call, CallHost, Connect, Op, RunAll
from mcp_proto.errors import MCPError

from ._base import BaseServer
from ._events import ServerEvents

if TYPE_CHECKING:
    # The 2026-07-28 revision's modules load when a server speaks it, not with the shell.
    from mcp_proto.modern.notify_queue import ListenFilter

    from ._listen import Listener, Subscription

__all__ = ["Client"]

T = TypeVar("T")
P = ParamSpec("P")


def awaiting(
    op: Callable[Concatenate[ClientCore, P], Op[T]],
) -> Callable[Concatenate[Client, P], Awaitable[T]]:
    """A public coroutine method running the core operation ``op`` to its end (its
    signature and docstring are the operation's: written once, in ``mcp_proto.client``)."""

    @functools.wraps(op)
    async def method(self: Client, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(op(self._core, *args, **kwargs))

    return method


class Client(ClientIO[BaseServer], ServerEvents):
    """An MCP client aggregating one or more servers (Trio API).

    Use it as ``async with Client(...) as client:`` (or through :func:`connect`): its
    background tasks (readers, the callback dispatcher, server-request handlers) live
    in its own nursery, closed on exit. Handlers and callbacks may be plain or
    ``async`` functions; plain ones run in the event loop, so they must not block.
    :class:`BaseClient` holds the constructor, the effect table and the event routing.
    """

    logger: logging.Logger
    _server_base = BaseServer

    # ------------------------------------------------------------ the shell's part

    def _clock(self) -> float:
        return trio.current_time()

    async def _sleep(self, seconds: float) -> None:
        await trio.sleep(seconds)

    def _server_options(self, cls: type[BaseServer]) -> dict[str, Any]:
        return {"nursery": self._get_nursery}

    def _init_io(self) -> None:
        self._send_job, self._receive_job = trio.open_memory_channel[Callable[[], Any]](
            self.limits.max_queued_notifications
        )
        self._limiter = trio.CapacityLimiter(self.limits.server_request_concurrency)
        self._backlog = 0
        self._nursery: trio.Nursery | None = None
        self._dispatch_task: trio.lowlevel.Task | None = None
        self._nursery_cm: Any = None

    def _spawn(self, op: Op[Any]) -> None:
        self._start_op(op, "a task the server asked for")  # in the nursery, logged

    # ------------------------------------------------------------ nursery

    def _get_nursery(self) -> trio.Nursery:
        if self._nursery is None:
            raise RuntimeError(
                "use the Trio client inside 'async with' (connect(...) or Client(...))"
            )
        return self._nursery

    async def __aenter__(self) -> Client:
        self._nursery_cm = trio.open_nursery()
        self._nursery = await self._nursery_cm.__aenter__()
        self._nursery.start_soon(self._dispatch_loop)
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        try:
            with trio.CancelScope(shield=True):
                await self.close()
        finally:
            assert self._nursery is not None
            self._nursery.cancel_scope.cancel()
            nursery_cm, self._nursery_cm = self._nursery_cm, None
            self._nursery = None
            # The body's own exception is not handed to the nursery: it would come back
            # wrapped in an ExceptionGroup, and callers expect ``except ToolNotFound``
            # to work around ``async with connect(...)``. Background tasks never raise
            # on purpose; if one did, its error surfaces here.
            await nursery_cm.__aexit__(None, None, None)
        return None

    # ------------------------------------------------------------ driving the core

    async def _run(self, op: Op[T]) -> T:
        """Perform ``op``'s effects until it returns (the table's methods; what they
        return is awaited when the table says the effect waits)."""
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = op.throw(error) if error is not None else op.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            error = None  # (value: set below, or unused: a failure is thrown in)
            try:
                if type(effect) is Call:  # the common effect, without a coroutine of its own
                    value = await self._servers[effect.server].request(
                        effect.method,
                        effect.params,
                        timeout=effect.timeout,
                        progress=effect.progress,
                        tool=effect.tool,  # HDR-1: the fast path carries it too
                        cancel_on_timeout=effect.cancel_on_timeout,  # TASK-19
                    )
                elif type(effect) is Connect:  # (every call_tool: no coroutine when connected)
                    server = self._servers[effect.server]
                    value = server.connected_info() or await server.ensure_connected()
                else:
                    name, waits = EFFECTS[type(effect)]
                    value = getattr(self, name)(effect)
                    if waits and inspect.isawaitable(value):  # (host code may be plain)
                        value = await value
            except MCPError as exc:
                error = exc
            except Exception as exc:
                if not isinstance(effect, CallHost):
                    raise
                error = exc

    async def _perform_run_all(self, effect: RunAll) -> list[Any]:
        """The operations side by side, one task each (``call_tools(...,
        concurrent=True)``); the first failure in order once all have finished."""
        ops = effect.ops
        results: list[Any] = [None] * len(ops)
        failures: dict[int, MCPError] = {}

        async def run_one(i: int) -> None:
            try:
                results[i] = await self._run(ops[i])
            except MCPError as exc:
                failures[i] = exc

        async with trio.open_nursery() as nursery:
            for i in range(len(ops)):
                nursery.start_soon(run_one, i)
        return results_in_order(results, failures)

    # ------------------------------------------------------------ servers

    async def connect_all(self) -> None:
        # (docstring: mcp_io_common/client_io.py)
        raise_first(await self._each_server(lambda server: server.ensure_connected()))

    async def _each_server(
        self, do: Callable[[BaseServer], Awaitable[Any]]
    ) -> list[BaseException | None]:
        """``await do(server)`` for every server, all at the same time: what each raised,
        ``None`` where it returned. Ten servers that take a second each to start, or a
        grace period each to close (a server that ignores its closed stdin), would add up
        one after the other."""
        servers = list(self._servers.values())
        failures: list[BaseException | None] = [None] * len(servers)

        async def one(i: int) -> None:
            try:
                await do(servers[i])
            except Exception as exc:  # the others go on; raised by the caller
                failures[i] = exc

        if len(servers) == 1:
            await one(0)
            return failures
        async with trio.open_nursery() as nursery:
            for i in range(len(servers)):
                nursery.start_soon(one, i)
        return failures

    # ------------------------------------------------------------ public API

    list_tools = awaiting(ClientCore.list_tools)

    find_tools = awaiting(ClientCore.find_tools)

    find_tool = awaiting(ClientCore.find_tool)

    call_tool = awaiting(ClientCore.call_tool)

    async def call_tool_streaming(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        server: ServerSelector | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[ToolChunk]:
        # (docstring: mcp_io_common/client_io.py)
        woken = [trio.Event()]
        stream = ToolStream(wake=lambda: woken[0].set())
        scope = trio.CancelScope()
        finished = trio.Event()
        op = stream.op(self._core, name, arguments, server=server, timeout=timeout)

        async def drive() -> None:
            try:
                with scope:
                    await self._run(op)
                if scope.cancelled_caught:
                    stream.fail(CallCancelledError("the streaming call was left early"))
            except Exception as exc:  # a bug of the client: the consumer sees it
                stream.fail(exc)
            finally:
                finished.set()

        self._get_nursery().start_soon(drive)
        try:
            while True:
                chunk = stream.take()
                if chunk is None:
                    await woken[0].wait()
                    woken[0] = trio.Event()
                    continue
                if chunk is END:
                    return
                yield chunk  # type: ignore[misc]  # (END and None are not chunks)
        finally:
            left = not stream.ended
            if left:
                scope.cancel()
            with trio.CancelScope(shield=True):
                await finished.wait()
                if left:
                    # (bounded, as any request, by the server's read timeout)
                    await self._run(stream.leave_op(self._core))

    call_tools = awaiting(ClientCore.call_tools)

    list_prompts = awaiting(ClientCore.list_prompts)

    get_prompt = awaiting(ClientCore.get_prompt)

    list_resources = awaiting(ClientCore.list_resources)

    list_resource_templates = awaiting(ClientCore.list_resource_templates)

    read_resource = awaiting(ClientCore.read_resource)

    subscribe_resource = awaiting(ClientCore.subscribe_resource)

    unsubscribe_resource = awaiting(ClientCore.unsubscribe_resource)

    complete = awaiting(ClientCore.complete)

    set_log_level = awaiting(ClientCore.set_log_level)

    set_roots = awaiting(ClientCore.set_roots)

    # ------------------------------------------------------------ 2026-07-28

    resume_input_required = awaiting(ClientCore.resume_input_required)

    cache_info = awaiting(ClientCore.cache_info)

    ping = awaiting(ClientCore.ping)

    send_rpc = awaiting(ClientCore.send_rpc)

    send_notification = awaiting(ClientCore.send_notification)

    # ------------------------------------------------------------ tasks (both eras)

    call_tool_as_task = awaiting(ClientCore.call_tool_as_task)

    get_task = awaiting(ClientCore.get_task)

    get_task_result = awaiting(ClientCore.get_task_result)

    list_tasks = awaiting(ClientCore.list_tasks)

    cancel_task = awaiting(ClientCore.cancel_task)

    update_task = awaiting(ClientCore.update_task)

    wait_for_task = awaiting(ClientCore.wait_for_task)

    # ------------------------------------------------------------ skills (SEP-2640)

    list_skills = awaiting(ClientCore.list_skills)

    get_skill = awaiting(ClientCore.get_skill)

    load_skill = awaiting(ClientCore.load_skill)

    read_skill_file = awaiting(ClientCore.read_skill_file)

    async def listen(
        self,
        notifications: ListenFilter | Mapping[str, object],
        callback: Listener | None = None,
        *,
        server: ServerSelector | None = None,
        ack_timeout: float | Literal[False] | None = None,
    ) -> Subscription:
        # (docstring: mcp_io_common/client_io.py)
        return await self._listen_target(server).listen(
            notifications, callback, ack_timeout=ack_timeout
        )

    def _start_op(self, op: Op[Any], what: str) -> None:
        """``op`` in the background, in the client's nursery, a failure logged (as
        ``what`` failed): a property assignment, which cannot await (await
        ``set_log_level`` / ``set_roots`` to see a failure), or a task the server asked
        for (``_spawn``)."""

        async def run() -> None:
            try:
                await self._run(op)
            except Exception:
                self.logger.exception("%s failed", what)

        self._get_nursery().start_soon(run)

    async def flush_callbacks(self) -> None:
        """Wait until the notification and progress callbacks queued so far have run."""
        done = trio.Event()
        self._submit(done.set)
        await done.wait()

    to_openai_tools = awaiting(ClientCore.to_openai_tools)

    to_anthropic_tools = awaiting(ClientCore.to_anthropic_tools)

    to_google_tools = awaiting(ClientCore.to_google_tools)

    async def cleanup(self) -> None:
        """Stop every server (bounded: STDIO-6). The client stays usable inside its
        ``async with``: servers restart on demand. Open subscriptions are kept: they
        wait, and are sent again when their server next connects (SUB-22). All at the
        same time: each close is bounded (a server that ignores its closed stdin gets a
        grace period, then SIGTERM), and N of them one after the other would add up."""
        raise_first(await self._each_server(lambda server: server.cleanup()))

    async def close(self) -> None:
        """Like :meth:`cleanup`, but every open subscription ends first (the client is
        done); leaving ``async with`` does this."""
        await self._run(self._end_subscriptions_op())
        await self.cleanup()
