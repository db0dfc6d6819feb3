"""What both shells' clients do alike with their servers' events, without waiting.

The routing of the events (the caches first, then the host callbacks; progress;
subscriptions' events in their routing order, NOTIF-3; server requests) is
:class:`mcp_proto.client.base.BaseClient`'s, the same in every shell. A shell's
``ServerEvents`` (``mcp_io_sync/_events.py``: a dispatcher thread and a worker pool;
``mcp_io_trio/_events.py``: a dispatcher task and tasks under a limiter) provides
its primitives: queueing a job for the host callbacks (``_submit``), serving a
server request where it may wait (``_serve``), and the one-shot marker of
:class:`CallbackEvents`. Here, on those: the rule that a call returns only after the
callbacks queued for it have run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["CallbackEvents", "Marker"]


class Marker(Protocol):
    """A one-shot event: ``threading.Event`` or ``trio.Event``."""

    def set(self) -> None: ...


class CallbackEvents:
    """Mixed in before ``BaseClient`` by both shells' ``ServerEvents``."""

    def _submit(self, job: Callable[[], Any]) -> bool:
        """Queue ``job`` for the host callbacks' dispatcher; False if not queued."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _marker(self) -> Marker | None:
        """A new marker for the dispatcher to set, or None where no dispatcher would
        ever run it (the client is closing)."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _settle(self, marker: Any) -> Callable[[], Any]:
        """What a caller runs before it returns: wait until ``marker`` is set (a plain
        function, or a coroutine function in an async shell). Never from the
        dispatcher itself: a callback calling the server runs there, and the marker is
        behind it, so that wait would never end."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def _settle_after_callbacks(self, waiter: Any) -> None:
        """A call's answer arrived after progress callbacks were queued for it: queue a
        marker behind them, and have the caller wait for it before returning (issue 9,
        item 6: a call returns only after those callbacks have run). Called in order
        with the queued callbacks (on the reading thread, or in the reading task)."""
        marker = self._marker()
        if marker is None:
            return  # no dispatcher runs: nothing would ever set the marker
        if not self._submit(marker.set):
            return  # closed, or the queue overflowed (callbacks were dropped): no wait
        waiter.settle = self._settle(marker)
