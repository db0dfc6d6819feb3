"""What the blocking client does with its servers' events: notifications (caches
first, then the host callbacks on one dispatcher thread), progress, subscriptions'
events in their routing order (NOTIF-3), and server requests on a bounded worker pool
(UT-8). A mixin of :class:`mcp_io_sync.Client`, kept apart so that ``_client.py``
holds the client's API and its effect loop."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from mcp_io_common.notices import warning_is_written
from mcp_proto import events as ev
from mcp_proto import jsonrpc
from mcp_proto.client import ClientCore
from mcp_proto.connection.events import (
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
)
from mcp_proto.effects import Op
from mcp_proto.handlers import Reply, serve_request

from ._base import BaseServer

__all__ = ["NotificationCallback", "ServerEvents"]

T = TypeVar("T")
NotificationCallback = Callable[[BaseServer, str, dict[str, Any]], Any]

_LISTEN_EVENTS = (ListenAcknowledged, ListenNotification, ListenInterrupted, ListenEnded)


class ServerEvents:
    """The servers' events, for :class:`~mcp_io_sync.Client` (which sets these)."""

    logger: logging.Logger
    _core: ClientCore
    _servers: dict[str, BaseServer]
    _callbacks: list[NotificationCallback]
    _dispatch_queue: queue.Queue[Callable[[], Any] | None]
    _dispatcher: threading.Thread | None
    _workers: ThreadPoolExecutor
    _backlog: threading.BoundedSemaphore
    _lock: threading.Lock
    _closed: bool

    def _run(self, op: Op[T]) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

    def _on_server_event(self, server: BaseServer, event: Any) -> None:
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
            # NOTIF-4: caches go first, on this thread, before any host callback runs.
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

    def _on_listen_event(self, server: BaseServer, event: Any) -> None:
        """A subscription's event (on the server's dispatching thread, in order). A
        notification is routed in the fixed order (NOTIF-3): the machine did the
        bookkeeping; caches are dropped; it is queued for the subscription's listeners
        (their own thread: SUB-6); the host callbacks come last (queued, NOTIF-8)."""
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

    def _notify_callbacks(self, server: BaseServer, method: str, params: dict[str, Any]) -> None:
        for callback in list(self._callbacks):
            try:
                callback(server, method, params)
            except Exception:
                # NOTIF-7: a raising callback is logged and stops nothing.
                self.logger.exception("notification callback failed")

    def _submit(self, job: Callable[[], Any]) -> bool:
        """Queue ``job`` for the dispatcher thread; False if it was not queued."""
        with self._lock:
            if self._closed:
                return False
            if self._dispatcher is None:
                self._dispatcher = threading.Thread(
                    target=self._dispatch_loop, name="mcp-dispatch", daemon=True
                )
                self._dispatcher.start()
        try:
            self._dispatch_queue.put_nowait(job)
        except queue.Full:
            self.logger.warning("host callbacks are behind; dropping a notification")
            return False
        return True

    def _settle_after_callbacks(self, waiter: Any) -> None:
        """A call's answer arrived after progress callbacks were queued for it: queue a
        marker behind them, and have the caller wait for it before returning (issue 9,
        item 6: a call returns only after those callbacks have run). Called on the
        reading thread, in order with the queued callbacks."""
        ran = threading.Event()
        if not self._submit(ran.set):
            return  # closed, or the queue overflowed (callbacks were dropped): no wait
        dispatcher = self._dispatcher

        def settle() -> None:
            # A callback calling the server itself runs on the dispatcher: the marker
            # is behind it, so waiting there would never end.
            if threading.current_thread() is not dispatcher:
                ran.wait()

        waiter.settle = settle

    def _dispatch_loop(self) -> None:
        while True:
            job = self._dispatch_queue.get()
            if job is None:
                return
            try:
                job()
            except Exception:
                self.logger.exception("callback failed")

    def _serve(self, server: BaseServer, session: Any, request: ev.ServerRequest) -> None:
        """Answer a server request on the worker pool (UT-8: bounded)."""
        if self._closed or not self._backlog.acquire(blocking=False):
            server.reply(
                session, request.request_id, code=jsonrpc.INTERNAL_ERROR, message="Client busy"
            )
            return

        def job() -> None:
            try:
                reply: Reply = self._run(
                    serve_request(
                        self._core.handlers, request.method, request.params, server=server.name
                    )
                )
                server.reply(
                    session,
                    request.request_id,
                    reply.result,
                    code=reply.code,
                    message=reply.message or "",
                )
            except Exception:
                self.logger.exception("serving %s failed", request.method)
                server.reply(
                    session,
                    request.request_id,
                    code=jsonrpc.INTERNAL_ERROR,
                    message="Internal error",
                )
            finally:
                self._backlog.release()

        try:
            self._workers.submit(job)
        except RuntimeError:  # pool shut down
            self._backlog.release()

    def _deprecation_notice(self, text: str) -> bool:
        """Write a deprecation notice (DEP-11); ``False`` (the notice stays due) when
        the logger would drop a warning or write it nowhere (DEP-12..14: level,
        effective handlers, closed streams; filters are not consulted)."""
        if not warning_is_written(self.logger):
            return False
        self.logger.warning("%s", text)
        return True
