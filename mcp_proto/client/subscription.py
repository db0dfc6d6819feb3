"""What a ``subscriptions/listen`` handle shows, the same in every shell.

The machine carries the subscription (``mcp_proto.connection``); its state as the
client sees it is :class:`~mcp_proto.connection.subscription.SubscriptionState`. A
shell's ``Subscription`` adds only how its listeners run and how one waits for the
acknowledgment (a thread and a condition, a task and an event); this mixin holds the
rest: the fields, what the handle shows, the routing of its events into the state, and
the errors of a wait that did not end acknowledged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Protocol

from ..connection.events import (
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
)
from ..connection.subscription import SubscriptionState
from ..errors import ConnectionError, MCPError, RequestTimeoutError
from ..modern.notify_queue import ListenFilter, NotificationQueue

__all__ = ["ListenEvent", "SubscriptionView"]

ListenEvent = ListenAcknowledged | ListenNotification | ListenInterrupted | ListenEnded

#: The request a subscription is (2026-07-28 server/utilities/subscriptions.mdx).
_LISTEN: Final = "subscriptions/listen"


class _Logger(Protocol):
    def info(self, msg: str, *args: Any) -> None: ...


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class SubscriptionView:
    """One subscription on one 2026-07-28 server (``server.listen`` / ``client.listen``).

    ``acknowledged`` (the granted filter, deep-frozen) and ``unsupported`` (requested
    fields not really granted) are ``None`` / ``()`` until the server acknowledges;
    ``active`` is False while a dropped stream waits to re-open; ``close()`` ends it.
    Notifications wait for the listeners in a queue bounded by count and bytes; a
    listener that falls behind loses repeats, not signals (``dropped_notifications``).
    """

    MAX_PENDING_NOTIFICATIONS: Final = NotificationQueue.MAX_PENDING_NOTIFICATIONS
    MAX_PENDING_NOTIFICATION_BYTES: Final = NotificationQueue.MAX_PENDING_NOTIFICATION_BYTES

    server: Any
    _logger: Any

    def _init_view(
        self,
        server: _Named,
        sub_id: int,
        requested: ListenFilter,
        logger: _Logger,
        max_pending: int | None,
        max_pending_bytes: int | None,
    ) -> None:
        self.server = server
        self.sub_id = sub_id
        self.requested = requested
        self._logger = logger
        self._state = SubscriptionState(
            sub_id, requested, max_count=max_pending, max_bytes=max_pending_bytes
        )
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

    # ------------------------------------------------------------ for the shell

    def _take(self, event: ListenEvent) -> bool:
        """Apply an event of this subscription to its state (on the server's
        dispatching thread or task, in the machine's order). False: dropped (a
        notification after ``close``)."""
        if self._stopped and isinstance(event, ListenNotification):
            return False
        self._state.apply(event)
        if isinstance(event, ListenEnded) and event.error is not None:
            self._logger.info(
                "server %s: subscription %s ended: %s", self.server.name, self.sub_id, event.error
            )
        return True

    def _stop(self) -> None:
        """``close``: the listeners get nothing more; queued notifications go."""
        self._stopped = True
        self._state.queue.clear()

    def _live_settled(self) -> bool:
        """Whether a wait for the subscription to be live is over (RES-11)."""
        return self._state.active or self._state.ended

    def _live_acknowledgment(self, timeout: float | None) -> Mapping[str, Any]:
        """What a wait for the subscription to be live gives once over: the filter
        the server grants on the stream it honours now, or why it ended, or the
        timeout (RES-11, RES-12)."""
        state = self._state
        if state.ended:
            return self._acknowledgment(timeout)  # raises why it ended
        if state.active and state.acknowledged is not None:
            return state.acknowledged
        raise RequestTimeoutError(
            f"subscription {self.sub_id} on {self.server.name!r} did not become live "
            f"again within {timeout}s",
            method=_LISTEN,
        )

    def _acknowledgment(self, timeout: float | None) -> Mapping[str, Any]:
        """What a wait for the acknowledgment that has ended gives: the granted filter,
        or why the subscription ended first, or the timeout (``timeout`` passed)."""
        state = self._state
        if state.error is not None:
            raise state.error
        if state.acknowledged is not None:
            return state.acknowledged
        name = self.server.name
        if state.ended:
            raise ConnectionError(
                f"subscription {self.sub_id} on {name!r} ended before it was acknowledged"
            )
        raise RequestTimeoutError(
            f"subscription {self.sub_id} on {name!r} was not acknowledged within {timeout}s",
            method=_LISTEN,
        )
