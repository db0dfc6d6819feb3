"""What both shells' ``Subscription`` handles (``subscriptions/listen``, 2026-07-28) are
built from alike: :class:`mcp_proto.client.subscription.SubscriptionView` (what the
handle shows) over the machine's subscription state, and the listeners registered on it.
Each shell adds how the listeners run and how a caller waits (a thread and a condition
in ``mcp_io_sync/_listen.py``, a task and an event in ``mcp_io_trio/_listen.py``)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from mcp_proto.client.subscription import ListenEvent, SubscriptionView
from mcp_proto.connection.events import ListenNotification
from mcp_proto.modern.notify_queue import ListenFilter

__all__ = ["Listener", "SubscriptionBase"]

#: A listener: called with (method, params) for each notification, in order (under
#: Trio it may be an ``async def``).
Listener = Callable[[str, dict[str, Any]], Any]


class SubscriptionBase(SubscriptionView):
    """A subscription handle's state; :meth:`_init_io` is the shell's part of building it."""

    def __init__(
        self,
        server: Any,  # the shell's BaseServer (each shell's class says which)
        sub_id: int,
        requested: ListenFilter,
        *,
        logger: logging.Logger,
        max_pending: int | None = None,
        max_pending_bytes: int | None = None,
    ) -> None:
        self._init_view(server, sub_id, requested, logger, max_pending, max_pending_bytes)
        self._listeners: list[Listener] = []
        #: Whether the listeners' dispatcher (a thread or a task) was started.
        self._dispatching = False
        self._init_io()

    # ------------------------------------------------------------ the shell's part

    #: Held while an event is taken in: the blocking shell's condition (the server's
    #: dispatching thread feeds it, callers and the dispatcher thread wait on it).
    _guard: AbstractContextManager[Any]

    def _init_io(self) -> None:
        """The shell's own state (how listeners run and callers wait): sets ``_guard``."""

    def _start_dispatcher(self) -> bool:
        """Start the thread or task that runs the listeners (``_run``); whether it
        started (not when the client is closing)."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _changed(self) -> None:
        """Wake whoever waits for a change (under ``_guard``)."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _run(self) -> Any:
        """The subscription's dispatcher: listeners, in order, off the reader (SUB-6);
        it ends with the subscription."""
        raise NotImplementedError  # pragma: no cover - the shell's

    # ------------------------------------------------------------ both shells

    def _apply(self, event: ListenEvent) -> None:
        """An event of this subscription (from the server's dispatch, in the machine's
        order). Only queues: the listeners run in the subscription's dispatcher,
        started with its first notification, never in the transport's reader (SUB-6:
        a listener may make requests of the same server)."""
        with self._guard:
            if not self._take(event):
                return
            if isinstance(event, ListenNotification) and not self._dispatching:
                self._dispatching = self._start_dispatcher()
            self._changed()

    def on_notification(self, listener: Listener) -> Listener:
        """Add a listener (usable as a decorator)."""
        # One append, atomic for a list (the blocking shell's dispatcher thread takes a
        # copy of the list for each notification): no lock needed in either shell.
        self._listeners.append(listener)
        return listener
