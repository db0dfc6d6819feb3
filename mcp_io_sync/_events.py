"""The blocking client's primitives for its servers' events (the routing and the
rules around it: ``mcp_io_common/events.py``): the host callbacks run on one
dispatcher thread, server requests on a bounded worker pool (UT-8). A mixin of
:class:`mcp_io_sync.Client`, kept apart so that ``_client.py`` holds the client's API
and its effect loop."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from mcp_io_common.events import CallbackEvents
from mcp_proto import events as ev
from mcp_proto.client.base import BaseClient
from mcp_proto.effects import Op
from mcp_proto.handlers import BUSY, FAILED

from ._base import BaseServer

__all__ = ["ServerEvents"]

T = TypeVar("T")


class ServerEvents(CallbackEvents, BaseClient[BaseServer]):
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

    def _marker(self) -> threading.Event:
        return threading.Event()

    def _settle(self, marker: threading.Event) -> Callable[[], None]:
        dispatcher = self._dispatcher  # (started by the _submit that queued the marker)

        def settle() -> None:
            if threading.current_thread() is not dispatcher:
                marker.wait()

        return settle

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
