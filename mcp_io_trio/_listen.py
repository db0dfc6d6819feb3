"""``Subscription``: a ``subscriptions/listen`` subscription (Trio shell).

The machine carries the subscription (``mcp_proto.connection._listen``); what the handle
shows is :class:`mcp_proto.client.subscription.SubscriptionView`'s. This shell adds how
its listeners run, in a task of its own in the client's nursery, never in the
transport's reader (SUB-6: a listener may make requests of the same server), and how a
task waits for the acknowledgment.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import trio

from mcp_io_common.subscription import Listener, SubscriptionBase

if TYPE_CHECKING:
    from ._base import BaseServer

__all__ = ["Listener", "Subscription"]


class Subscription(SubscriptionBase):
    """One subscription on one 2026-07-28 server (``await server.listen(...)`` /
    ``await client.listen(...)``): ``close`` and ``wait_acknowledged`` are coroutines."""

    server: BaseServer

    def _init_io(self) -> None:
        self._spawn: Callable[..., bool] = self.server._spawn  # in the client's nursery
        self._change = trio.Event()  # set (and replaced) on every change
        self._guard = contextlib.nullcontext()  # single-threaded: nothing to guard

    async def wait_acknowledged(self, timeout: float | None = None) -> Mapping[str, Any]:
        """Wait until the server acknowledges; returns the granted filter. Raises why
        the subscription ended if it ends first, or ``RequestTimeoutError`` if
        ``timeout`` passes."""
        state = self._state
        with trio.move_on_after(math.inf if timeout is None else timeout):
            while state.acknowledged is None and not state.ended:
                await self._change.wait()
        return self._acknowledgment(timeout)

    async def _wait_live(self, timeout: float | None) -> Mapping[str, Any]:
        """Wait until the subscription is live now (acknowledged, not dropped) or
        ended; what :meth:`SubscriptionView._live_acknowledgment` says then."""
        with trio.move_on_after(math.inf if timeout is None else timeout):
            while not self._live_settled():
                await self._change.wait()
        return self._live_acknowledgment(timeout)

    async def close(self) -> None:
        """End the subscription (the server is told, per its transport). Queued
        notifications are dropped. Idempotent."""
        self._stop()
        self._changed()
        await self.server._close_listen(self.sub_id)

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        with trio.CancelScope(shield=True):
            await self.close()

    def _start_dispatcher(self) -> bool:
        return self._spawn(self._run)

    def _changed(self) -> None:
        changed, self._change = self._change, trio.Event()
        changed.set()

    async def _run(self) -> None:
        # (docstring: mcp_io_common/subscription.py)
        state = self._state
        while True:
            entry = state.pop()
            if entry is None:
                if state.ended or self._stopped:
                    return
                await self._change.wait()
                continue
            for listener in list(self._listeners):
                try:
                    result = listener(entry.method, entry.params or {})
                    if inspect.isawaitable(result):
                        await _awaited(result)
                except Exception:
                    # A raising listener is logged and stops nothing (NOTIF-7).
                    self._logger.exception("subscription listener failed")


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value
