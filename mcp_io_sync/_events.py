"""What the blocking client does with its servers' events: notifications (caches
first, then the host callbacks on one dispatcher thread), progress, subscriptions'
events in their routing order (NOTIF-3), and server requests on a bounded worker pool
(UT-8). A mixin of :class:`mcp_io_sync.Client`, kept apart so that ``_client.py``
holds the client's API and its effect loop. The routing itself, the same in every
shell, is :class:`mcp_proto.client.base.BaseClient`'s; this module provides its
primitives: queueing the host callbacks and serving server requests on threads."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from mcp_proto import events as ev
from mcp_proto.client.base import BaseClient
from mcp_proto.effects import Op
from mcp_proto.handlers import BUSY, FAILED

from ._base import BaseServer

__all__ = ["NotificationCallback", "ServerEvents"]

T = TypeVar("T")
NotificationCallback = Callable[[BaseServer, str, dict[str, Any]], Any]


class ServerEvents(BaseClient[BaseServer]):
    """The servers' events, for :class:`~mcp_io_sync.Client` (which sets these)."""

    logger: logging.Logger
    _dispatch_queue: queue.Queue[Callable[[], Any] | None]
    _dispatcher: threading.Thread | None
    _workers: ThreadPoolExecutor
    _backlog: threading.BoundedSemaphore
    _lock: threading.Lock
    _closed: bool

    def _run(self, op: Op[T]) -> T:  # pragma: no cover - the client's
        raise NotImplementedError

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

    def _serve(self, server: BaseServer, generation: Any, request: ev.ServerRequest) -> None:
        """Answer a server request on the worker pool (UT-8: bounded)."""
        if self._closed or not self._backlog.acquire(blocking=False):
            server.reply(generation, request.request_id, BUSY)
            return

        def job() -> None:
            try:
                server.reply(
                    generation, request.request_id, self._run(self._answer_op(server.name, request))
                )
            except Exception:
                self.logger.exception("serving %s failed", request.method)
                server.reply(generation, request.request_id, FAILED)
            finally:
                self._backlog.release()

        try:
            self._workers.submit(job)
        except RuntimeError:  # pool shut down
            self._backlog.release()
