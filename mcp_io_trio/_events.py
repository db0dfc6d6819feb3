"""The Trio client's primitives for its servers' events (the routing and the rules
around it: ``mcp_io_common/events.py``): the host callbacks (plain or ``async def``)
run in one dispatcher task, server requests in tasks of their own under a capacity
limiter (UT-8). A mixin of :class:`mcp_io_trio.Client`, kept apart so that
``_client.py`` holds the client's API and its effect loop."""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import trio

from mcp_io_common.events import CallbackEvents
from mcp_proto import events as ev
from mcp_proto.client.base import BaseClient
from mcp_proto.effects import Op
from mcp_proto.handlers import BUSY, FAILED
from mcp_proto.limits import Limits

from ._base import BaseServer

__all__ = ["ServerEvents"]

T = TypeVar("T")


async def _maybe_await(value: Any) -> Any:
    """A host callback may be plain or ``async def``."""
    if inspect.isawaitable(value):
        return await value
    return value


class ServerEvents(CallbackEvents, BaseClient[BaseServer]):
    """The servers' events, for :class:`~mcp_io_trio.Client` (which sets these)."""

    logger: logging.Logger
    limits: Limits
    _send_job: trio.MemorySendChannel[Callable[[], Any]]
    _receive_job: trio.MemoryReceiveChannel[Callable[[], Any]]
    _limiter: trio.CapacityLimiter
    _backlog: int
    _nursery: trio.Nursery | None
    _dispatch_task: trio.lowlevel.Task | None

    async def _run(self, op: Op[T]) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    async def _notify_callbacks(
        self, server: BaseServer, method: str, params: dict[str, Any]
    ) -> None:
        for callback in list(self._callbacks):
            try:
                await _maybe_await(callback(server, method, params))
            except Exception:
                self.logger.exception("notification callback failed")

    def _submit(self, job: Callable[[], Any]) -> bool:
        """Queue ``job`` for the dispatcher task; False if it was not queued."""
        try:
            self._send_job.send_nowait(job)
        except trio.WouldBlock:
            self.logger.warning("host callbacks are behind; dropping a notification")
            return False
        except trio.ClosedResourceError:
            return False
        return True

    def _marker(self) -> trio.Event | None:
        return trio.Event() if self._nursery is not None else None

    def _settle(self, marker: trio.Event) -> Callable[[], Awaitable[None]]:
        async def settle() -> None:
            if trio.lowlevel.current_task() is not self._dispatch_task:
                await marker.wait()

        return settle

    async def _dispatch_loop(self) -> None:
        self._dispatch_task = trio.lowlevel.current_task()
        async for job in self._receive_job:
            try:
                await _maybe_await(job())
            except Exception:
                self.logger.exception("callback failed")

    def _serve(self, server: BaseServer, generation: Any, request: ev.ServerRequest) -> None:
        """Answer a server request in the nursery under a capacity limiter (UT-8)."""
        if self._nursery is None:
            return  # the client is closing: the server's process is about to go too
        if self._backlog >= self.limits.server_request_backlog:
            # UT-8: answer at once instead of queuing without bound.
            self._nursery.start_soon(server.reply, generation, request.request_id, BUSY)
            return
        self._backlog += 1

        async def job() -> None:
            try:
                async with self._limiter:
                    reply = await self._run(self._answer_op(server.name, request))
                await server.reply(generation, request.request_id, reply)
            except Exception:
                self.logger.exception("serving %s failed", request.method)
                await server.reply(generation, request.request_id, FAILED)
            finally:
                self._backlog -= 1

        self._nursery.start_soon(job)
