"""How a shell's client routes its servers' events, the same in both shells.

The order is a protocol rule (NOTIF-3, NOTIF-4): the machine's bookkeeping comes first,
then the client's caches are invalidated, then a subscription's listeners get the
notification, and the host callbacks come last. Both clients inherit
:class:`EventRouting`; what differs between them (how a job is queued for the host's
callbacks, how a server request is served: a thread or a task) are the four methods a
shell provides.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from mcp_proto import events as ev
from mcp_proto.client import ClientCore
from mcp_proto.connection.events import (
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
)

from .notices import warning_is_written

__all__ = ["EventRouting"]

_LISTEN_EVENTS = (ListenAcknowledged, ListenNotification, ListenInterrupted, ListenEnded)


class _Server(Protocol):
    name: str
    _subscriptions: dict[int, Any]

    def _listen_event(self, event: Any) -> Any: ...


S = TypeVar("S", bound=_Server)


class EventRouting(Generic[S]):
    """The servers' events for a client (which sets the attributes below and provides
    ``_submit``, ``_settle_after_callbacks``, ``_serve`` and ``_notify_callbacks``)."""

    logger: logging.Logger
    _core: ClientCore
    _servers: dict[str, S]
    _callbacks: list[Any]

    def _submit(self, job: Callable[[], Any]) -> bool:  # pragma: no cover - the shell's
        """Queue ``job`` for the host callbacks' dispatcher; False if not queued."""
        raise NotImplementedError

    def _settle_after_callbacks(self, waiter: Any) -> None:  # pragma: no cover
        raise NotImplementedError

    def _serve(self, server: S, session: Any, request: ev.ServerRequest) -> None:
        raise NotImplementedError  # pragma: no cover - the shell's

    def _notify_callbacks(self, server: S, method: str, params: dict[str, Any]) -> Any:
        raise NotImplementedError  # pragma: no cover - the shell's

    def _on_server_event(self, server: S, event: Any) -> None:
        if isinstance(event, tuple):
            kind = event[0]
            if kind == "progress":
                _, callback, progress = event
                self._submit(lambda: callback(progress.progress, progress.total, progress.message))
            elif kind == "settle":
                self._settle_after_callbacks(event[1])
            elif kind == "request":
                self._serve(server, event[1], event[2])
            elif kind == "closed":
                self._core.server_disconnected(server.name)
            return
        if isinstance(event, _LISTEN_EVENTS):
            self._on_listen_event(server, event)
            return
        if isinstance(event, ev.NotificationReceived):
            # NOTIF-4: caches go first, where the event is dispatched, before any host
            # callback runs.
            self._core.handle_notification(server.name, event.method, event.params)
            if self._callbacks:
                method, params = event.method, event.params
                self._submit(lambda: self._notify_callbacks(server, method, params))
        elif isinstance(event, ev.LogMessage):
            self.logger.log(
                logging.getLevelName(event.level),
                "[%s]%s %s",
                server.name,
                f" {event.logger}:" if event.logger else "",
                event.text,
            )
        elif isinstance(event, ev.MessageDiscarded):
            self.logger.debug("server %s: discarded a message: %s", server.name, event.reason)

    def _on_synthetic_notification(self, name: str, method: str, params: dict[str, Any]) -> None:
        """A notification the client emits itself (HDR-5: the ``tools/list`` refresh
        after a -32020), routed as a received one after the core's bookkeeping and
        cache invalidation (NOTIF-3): queued for the listeners of that server's open
        subscriptions that asked for it, then for the host callbacks."""
        server = self._servers.get(name)
        if server is None:
            return
        for sub in list(server._subscriptions.values()):
            if not sub.closed and sub.requested.wants(method, params):
                sub._apply(ListenNotification(sub.sub_id, method, params))
        if self._callbacks:
            self._submit(lambda: self._notify_callbacks(server, method, params))

    def _on_listen_event(self, server: S, event: Any) -> None:
        """A subscription's event (from the server's dispatch, in order). A notification
        is routed in the fixed order (NOTIF-3): the machine did the bookkeeping; caches
        are dropped; it is queued for the subscription's listeners (their own thread or
        task: SUB-6); the host callbacks come last (queued, NOTIF-8)."""
        sub = server._listen_event(event)
        if not isinstance(event, ListenNotification):
            if sub is not None:
                sub._apply(event)
            return
        method, params = event.method, event.params
        try:
            self._core.handle_notification(server.name, method, params)
        except Exception:  # NOTIF-7: stops neither delivery nor the host callbacks
            self.logger.exception("cache invalidation failed")
        if sub is not None:
            sub._apply(event)
        if self._callbacks:
            self._submit(lambda: self._notify_callbacks(server, method, params))

    def _deprecation_notice(self, text: str) -> bool:
        """Write a deprecation notice (DEP-11); ``False`` (the notice stays due) when
        the logger would drop a warning or write it nowhere (DEP-12..14: level,
        effective handlers, closed streams; filters are not consulted)."""
        if not warning_is_written(self.logger):
            return False
        self.logger.warning("%s", text)
        return True
