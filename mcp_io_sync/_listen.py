"""``Subscription``: a ``subscriptions/listen`` subscription (blocking shell).

The machine carries the subscription (its listen requests, re-opens and re-sends:
``mcp_proto.connection._listen``); what the handle shows is
:class:`mcp_proto.client.subscription.SubscriptionView`'s. This shell adds how its
listeners run, on the subscription's own dispatcher thread, never on the transport's
reader (SUB-6: a listener may make requests of the same server), and how a thread
waits for the acknowledgment.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mcp_io_common.subscription import Listener, SubscriptionBase

if TYPE_CHECKING:
    from ._base import BaseServer

__all__ = ["Listener", "Subscription"]


class Subscription(SubscriptionBase):
    """One subscription on one 2026-07-28 server (``server.listen`` / ``client.listen``);
    its listeners run on a thread of its own."""

    server: BaseServer

    def _init_io(self) -> None:
        self._cond = self._guard = threading.Condition()

    def wait_acknowledged(self, timeout: float | None = None) -> Mapping[str, Any]:
        """Block until the server acknowledges; returns the granted filter. Raises why
        the subscription ended if it ends first (``RequestTimeoutError`` when the
        acknowledgment did not come within ``ack_timeout``), or
        ``RequestTimeoutError`` if ``timeout`` passes."""
        with self._cond:
            state = self._state
            self._cond.wait_for(lambda: state.acknowledged is not None or state.ended, timeout)
            return self._acknowledgment(timeout)

    def _wait_live(self, timeout: float | None) -> Mapping[str, Any]:
        """Block until the subscription is live now (acknowledged, not dropped) or
        ended; what :meth:`SubscriptionView._live_acknowledgment` says then."""
        with self._cond:
            self._cond.wait_for(self._live_settled, timeout)
            return self._live_acknowledgment(timeout)

    def close(self) -> None:
        """End the subscription (the server is told: stdio ``notifications/cancelled``,
        HTTP closes the stream). Queued notifications are dropped. Idempotent."""
        with self._cond:
            self._stop()
            self._cond.notify_all()
        self.server._close_listen(self.sub_id)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start_dispatcher(self) -> bool:
        threading.Thread(
            target=self._run, name=f"mcp-listen-{self.server.name}-{self.sub_id}", daemon=True
        ).start()
        return True

    def _changed(self) -> None:
        self._cond.notify_all()

    def _run(self) -> None:
        # (docstring: mcp_io_common/subscription.py)
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
