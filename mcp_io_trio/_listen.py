"""``Subscription``: a ``subscriptions/listen`` subscription (Trio shell).

The machine carries the subscription (``mcp_proto.connection._listen``); this handle
shows its state (``mcp_proto.connection.subscription.SubscriptionState``) and runs its
listeners in a task of its own in the client's nursery, never in the transport's
reader (SUB-6: a listener may make requests of the same server).
"""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

import trio

from mcp_proto.connection.events import (
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
)
from mcp_proto.connection.subscription import SubscriptionState
from mcp_proto.errors import ConnectionError, MCPError, RequestTimeoutError, ResourceReadError
from mcp_proto.modern.notify_queue import ListenFilter, NotificationQueue

if TYPE_CHECKING:
    from ._base import BaseServer

__all__ = ["Listener", "Subscription", "subscribe_uri"]

#: A listener: called with (method, params) for each notification, in order; may be
#: an ``async def``.
Listener = Callable[[str, dict[str, Any]], Any]


class Subscription:
    """One subscription on one 2026-07-28 server (``await server.listen(...)`` /
    ``await client.listen(...)``). See the blocking shell's ``Subscription``: the same
    state (``acknowledged``, ``unsupported``, ``active``, lag metrics); ``close`` and
    ``wait_acknowledged`` are coroutines."""

    MAX_PENDING_NOTIFICATIONS: Final = NotificationQueue.MAX_PENDING_NOTIFICATIONS
    MAX_PENDING_NOTIFICATION_BYTES: Final = NotificationQueue.MAX_PENDING_NOTIFICATION_BYTES

    def __init__(
        self,
        server: BaseServer,
        sub_id: int,
        requested: ListenFilter,
        *,
        logger: logging.Logger,
        spawn: Callable[..., bool],
        max_pending: int | None = None,
        max_pending_bytes: int | None = None,
    ) -> None:
        self.server = server
        self.sub_id = sub_id
        self.requested = requested
        self._logger = logger
        self._spawn = spawn
        self._state = SubscriptionState(
            sub_id, requested, max_count=max_pending, max_bytes=max_pending_bytes
        )
        self._listeners: list[Listener] = []
        self._changed = trio.Event()  # set (and replaced) on every change
        self._running = False  # the listener task was started
        self._stopped = False

    # ------------------------------------------------------------ what it shows

    @property
    def acknowledged(self) -> Mapping[str, Any] | None:
        return self._state.acknowledged

    @property
    def unsupported(self) -> tuple[str, ...]:
        return self._state.unsupported

    @property
    def active(self) -> bool:
        return self._state.active

    @property
    def closed(self) -> bool:
        return self._state.ended

    @property
    def error(self) -> MCPError | None:
        return self._state.error

    @property
    def pending_notifications(self) -> int:
        return self._state.pending_notifications

    @property
    def pending_notification_bytes(self) -> int:
        return self._state.pending_notification_bytes

    @property
    def dropped_notifications(self) -> int:
        return self._state.dropped_notifications

    # ------------------------------------------------------------ use

    def on_notification(self, listener: Listener) -> Listener:
        """Add a listener (usable as a decorator)."""
        self._listeners.append(listener)
        return listener

    async def wait_acknowledged(self, timeout: float | None = None) -> Mapping[str, Any]:
        """Wait until the server acknowledges; returns the granted filter. Raises why
        the subscription ended if it ends first, or ``RequestTimeoutError`` if
        ``timeout`` passes."""
        state = self._state
        with trio.move_on_after(math.inf if timeout is None else timeout):
            while state.acknowledged is None and not state.ended:
                await self._changed.wait()
        if state.error is not None:
            raise state.error
        if state.acknowledged is not None:
            return state.acknowledged
        if state.ended:
            raise ConnectionError(
                f"subscription {self.sub_id} on {self.server.name!r} ended before it "
                "was acknowledged"
            )
        raise RequestTimeoutError(
            f"subscription {self.sub_id} on {self.server.name!r} was not acknowledged "
            f"within {timeout}s",
            method="subscriptions/listen",
        )

    async def close(self) -> None:
        """End the subscription (stdio ``notifications/cancelled``; HTTP closes the
        stream). Queued notifications are dropped. Idempotent."""
        self._stopped = True
        self._state.queue.clear()
        self._signal()
        await self.server._close_listen(self.sub_id)

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        with trio.CancelScope(shield=True):
            await self.close()

    # ------------------------------------------------------------ from the server

    def _signal(self) -> None:
        changed, self._changed = self._changed, trio.Event()
        changed.set()

    def _apply(
        self, event: ListenAcknowledged | ListenNotification | ListenInterrupted | ListenEnded
    ) -> None:
        """An event of this subscription (from the server's dispatch, in order). Only
        queues: the listeners run in the subscription's own task."""
        if self._stopped and isinstance(event, ListenNotification):
            return
        self._state.apply(event)
        if isinstance(event, ListenNotification) and not self._running:
            self._running = self._spawn(self._run)
        if isinstance(event, ListenEnded) and event.error is not None:
            self._logger.info(
                "server %s: subscription %s ended: %s", self.server.name, self.sub_id, event.error
            )
        self._signal()

    async def _run(self) -> None:
        """The subscription's dispatcher: listeners, in order, off the reader (SUB-6)."""
        state = self._state
        while True:
            entry = state.pop()
            if entry is None:
                if state.ended or self._stopped:
                    return
                await self._changed.wait()
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


async def subscribe_uri(server: BaseServer, uri: str) -> Subscription:
    """``subscribe_resource`` on a 2026-07-28 server (RES-7, RES-9): a subscription for
    ``uri``, confirmed by an acknowledgment naming it; otherwise (not granted, timed
    out, refused) ``ResourceReadError``, as for an unconfirmed ``resources/subscribe``."""
    sub = await server.listen({"resource_subscriptions": [uri]})
    try:
        granted = await sub.wait_acknowledged()
        if uri not in granted.get("resourceSubscriptions", ()):
            raise ResourceReadError(
                f"subscribing to {uri!r} on {server.name!r} was not confirmed: the "
                "server's acknowledgment does not name it"
            )
    except MCPError as exc:
        await sub.close()
        if isinstance(exc, ResourceReadError):
            raise
        raise ResourceReadError(
            f"subscribing to {uri!r} on {server.name!r} was not confirmed: {exc}"
        ) from exc
    return sub
