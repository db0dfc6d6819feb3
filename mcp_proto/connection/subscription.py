"""What a shell's ``Subscription`` handle shows, kept from the machine's events (pure).

A shell owns one :class:`SubscriptionState` per subscription and feeds it the
``Listen*`` events of its sub id (:meth:`SubscriptionState.apply`), in the order the
machine emitted them. Its listeners run on the subscription's own dispatcher thread or
task (never the transport reader: SUB-6), which pops from :attr:`queue`.

The routing of a notification on a listen stream is fixed (NOTIF-3):

1. subscription bookkeeping: the machine's (acknowledgment, server teardown);
2. the client drops the caches the notification invalidates (NOTIF-4: a listener that
   reacts to ``list_changed`` by listing again refetches);
3. :meth:`SubscriptionState.apply` queues it for the subscription's listeners;
4. the host's ``on_notification`` callback, last.

:func:`route_listen_notification` performs steps 2-4 in that order for a shell.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import MCPError
from ..modern.notify_queue import ListenFilter, NotificationQueue, Queued
from .events import ListenAcknowledged, ListenEnded, ListenInterrupted, ListenNotification

__all__ = ["SubscriptionState", "route_listen_notification"]

ListenEvent = ListenAcknowledged | ListenNotification | ListenInterrupted | ListenEnded


class SubscriptionState:
    """The state of one subscription as its handle shows it (SUB-3, SUB-7, SUB-12,
    SUB-14). Not thread-safe: the shell serialises ``apply`` and ``pop``."""

    def __init__(
        self,
        sub_id: int,
        requested: ListenFilter,
        *,
        max_count: int | None = None,
        max_bytes: int | None = None,
    ) -> None:
        self.sub_id = sub_id
        self.requested = requested
        self.queue = NotificationQueue(max_count, max_bytes)
        #: The granted filter, deep-frozen (SUB-3); ``None`` before the first ack.
        self.acknowledged: Mapping[str, Any] | None = None
        #: Requested fields (wire names) the server did not really grant (SUB-3).
        self.unsupported: tuple[str, ...] = ()
        #: True while acknowledged and not dropped (SUB-14).
        self.active = False
        self.ended = False
        #: Why it ended (``None``: closed by the client, or gracefully by the server).
        self.error: MCPError | None = None
        #: The last drop, while it waits to re-open.
        self.interruption: MCPError | None = None

    # Lag metrics (SUB-12).
    @property
    def pending_notifications(self) -> int:
        return self.queue.pending

    @property
    def pending_notification_bytes(self) -> int:
        return self.queue.pending_bytes

    @property
    def dropped_notifications(self) -> int:
        return self.queue.dropped

    def apply(self, event: ListenEvent) -> list[Queued]:
        """Take one event of this subscription; returns the queued notifications it
        evicted (the listener fell behind: SUB-9). Events after the end are ignored."""
        if self.ended or event.sub_id != self.sub_id:
            return []
        if isinstance(event, ListenAcknowledged):
            ack = event.acknowledgment
            self.acknowledged = ack.acknowledged
            self.unsupported = ack.unsupported
            self.active = True
            self.interruption = None
        elif isinstance(event, ListenNotification):
            return self.queue.push(event.method, event.params)
        elif isinstance(event, ListenInterrupted):
            self.active = False
            self.interruption = event.error
        else:
            self.active = False
            self.ended = True
            self.error = event.error
        return []

    def pop(self) -> Queued | None:
        """The oldest queued notification for the listeners, or ``None``."""
        return self.queue.pop()


def route_listen_notification(
    event: ListenNotification,
    state: SubscriptionState | None,
    *,
    invalidate: Callable[[str, dict[str, Any]], None],
    host: Callable[[str, dict[str, Any]], None],
) -> list[Queued]:
    """NOTIF-3 steps 2-4 for one notification on a listen stream: caches dropped,
    then queued for the subscription (``state``; ``None`` once its handle is gone),
    then the host's callback. A raising ``invalidate`` stops nothing (NOTIF-7): the
    notification is still queued and the host still called; the error is re-raised
    after both, for the shell to log."""
    failure: BaseException | None = None
    try:
        invalidate(event.method, event.params)
    except Exception as exc:
        failure = exc
    evicted = state.apply(event) if state is not None else []
    host(event.method, event.params)
    if failure is not None:
        raise failure
    return evicted
