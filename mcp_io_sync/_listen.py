"""``Subscription``: a ``subscriptions/listen`` subscription (blocking shell).

The machine carries the subscription (its listen requests, re-opens and re-sends:
``mcp_proto.connection._listen``); this handle shows its state
(``mcp_proto.connection.subscription.SubscriptionState``) and runs its listeners on
its own dispatcher thread, never on the transport's reader (SUB-6: a listener may make
requests of the same server).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

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

#: A listener: called with (method, params) for each notification, in order.
Listener = Callable[[str, dict[str, Any]], Any]


class Subscription:
    """One subscription on one 2026-07-28 server (``server.listen`` / ``client.listen``).

    ``acknowledged`` (the granted filter, deep-frozen) and ``unsupported`` (requested
    fields not really granted) are ``None`` / ``()`` until the server acknowledges;
    ``active`` is False while a dropped stream waits to re-open; ``close()`` ends it.
    Notifications wait for the listeners in a queue bounded by count and bytes; a
    listener that falls behind loses repeats, not signals (``dropped_notifications``).
    """

    MAX_PENDING_NOTIFICATIONS: Final = NotificationQueue.MAX_PENDING_NOTIFICATIONS
    MAX_PENDING_NOTIFICATION_BYTES: Final = NotificationQueue.MAX_PENDING_NOTIFICATION_BYTES

    def __init__(
        self,
        server: BaseServer,
        sub_id: int,
        requested: ListenFilter,
        *,
        logger: logging.Logger,
        max_pending: int | None = None,
        max_pending_bytes: int | None = None,
    ) -> None:
        self.server = server
        self.sub_id = sub_id
        self.requested = requested
        self._logger = logger
        self._state = SubscriptionState(
            sub_id, requested, max_count=max_pending, max_bytes=max_pending_bytes
        )
        self._cond = threading.Condition()
        self._listeners: list[Listener] = []
        self._thread: threading.Thread | None = None
        self._stopped = False  # close(): the listeners get nothing more

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
        """Why it ended (``None`` while open, or when closed cleanly)."""
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
        with self._cond:
            self._listeners.append(listener)
        return listener

    def wait_acknowledged(self, timeout: float | None = None) -> Mapping[str, Any]:
        """Block until the server acknowledges; returns the granted filter. Raises why
        the subscription ended if it ends first (``RequestTimeoutError`` when the
        acknowledgment did not come within ``ack_timeout``), or
        ``RequestTimeoutError`` if ``timeout`` passes."""
        with self._cond:
            state = self._state
            if not self._cond.wait_for(
                lambda: state.acknowledged is not None or state.ended, timeout
            ):
                raise RequestTimeoutError(
                    f"subscription {self.sub_id} on {self.server.name!r} was not "
                    f"acknowledged within {timeout}s",
                    method="subscriptions/listen",
                )
            if state.error is not None:
                raise state.error
            if state.acknowledged is None:
                raise ConnectionError(
                    f"subscription {self.sub_id} on {self.server.name!r} ended before "
                    "it was acknowledged"
                )
            return state.acknowledged

    def close(self) -> None:
        """End the subscription (the server is told: stdio ``notifications/cancelled``,
        HTTP closes the stream). Queued notifications are dropped. Idempotent."""
        with self._cond:
            self._stopped = True
            self._state.queue.clear()
            self._cond.notify_all()
        self.server._close_listen(self.sub_id)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ from the server

    def _apply(
        self, event: ListenAcknowledged | ListenNotification | ListenInterrupted | ListenEnded
    ) -> None:
        """An event of this subscription (on the server's dispatching thread, in the
        machine's order). Only queues: listeners run on the subscription's thread."""
        with self._cond:
            if self._stopped and isinstance(event, ListenNotification):
                return
            self._state.apply(event)
            if isinstance(event, ListenNotification) and self._thread is None:
                self._thread = threading.Thread(
                    target=self._run,
                    name=f"mcp-listen-{self.server.name}-{self.sub_id}",
                    daemon=True,
                )
                self._thread.start()
            self._cond.notify_all()
        if isinstance(event, ListenEnded) and event.error is not None:
            self._logger.info(
                "server %s: subscription %s ended: %s", self.server.name, self.sub_id, event.error
            )

    def _run(self) -> None:
        """The subscription's dispatcher: listeners, in order, off the reader (SUB-6)."""
        while True:
            with self._cond:
                entry = self._state.pop()
                while entry is None:
                    if self._state.ended or self._stopped:
                        return
                    self._cond.wait()
                    entry = self._state.pop()
                listeners = list(self._listeners)
            for listener in listeners:
                try:
                    listener(entry.method, entry.params or {})
                except Exception:
                    # A raising listener is logged and stops nothing (NOTIF-7).
                    self._logger.exception("subscription listener failed")


def subscribe_uri(server: BaseServer, uri: str) -> Subscription:
    """``subscribe_resource`` on a 2026-07-28 server (RES-7, RES-9): a subscription for
    ``uri``, confirmed by an acknowledgment naming it; otherwise (not granted, timed
    out, refused) ``ResourceReadError``, as for an unconfirmed ``resources/subscribe``."""
    sub = server.listen({"resource_subscriptions": [uri]})
    try:
        granted = sub.wait_acknowledged()
        if uri not in granted.get("resourceSubscriptions", ()):
            raise ResourceReadError(
                f"subscribing to {uri!r} on {server.name!r} was not confirmed: the "
                "server's acknowledgment does not name it"
            )
    except MCPError as exc:
        sub.close()
        if isinstance(exc, ResourceReadError):
            raise
        raise ResourceReadError(
            f"subscribing to {uri!r} on {server.name!r} was not confirmed: {exc}"
        ) from exc
    return sub
