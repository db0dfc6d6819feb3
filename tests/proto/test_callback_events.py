"""The rule both shells' clients share for a call whose progress callbacks were queued
before its answer (``mcp_io_common.events.CallbackEvents``; issue 9, item 6): a marker
is queued behind them and the caller waits for it, unless no dispatcher would ever run
it or it could not be queued (then the caller does not wait at all). The shells' real
dispatchers are tests/shells/test_delivery_order.py's and test_progress_and_notes.py's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp_io_common.events import CallbackEvents


class _Marker:
    def __init__(self) -> None:
        self.is_set = False

    def set(self) -> None:
        self.is_set = True


class _Waiter:
    settle: Callable[[], Any] | None = None


class _Events(CallbackEvents):
    def __init__(self, *, dispatching: bool = True, queue_room: bool = True) -> None:
        self.dispatching = dispatching
        self.queue_room = queue_room
        self.queued: list[Callable[[], Any]] = []
        self.markers: list[_Marker] = []

    def _submit(self, job: Callable[[], Any]) -> bool:
        if not self.queue_room:
            return False
        self.queued.append(job)
        return True

    def _marker(self) -> _Marker | None:
        if not self.dispatching:
            return None
        marker = _Marker()
        self.markers.append(marker)
        return marker

    def _settle(self, marker: _Marker) -> Callable[[], Any]:
        return lambda: ("waited for", marker)


def test_the_caller_waits_for_a_marker_queued_behind_the_callbacks() -> None:
    events = _Events()
    events.queued.append(lambda: "a progress callback")
    waiter = _Waiter()
    events._settle_after_callbacks(waiter)
    (marker,) = events.markers
    assert len(events.queued) == 2  # behind the callback queued before
    assert waiter.settle is not None
    assert waiter.settle() == ("waited for", marker)
    events.queued[1]()  # the dispatcher reaches it
    assert marker.is_set


def test_no_wait_when_no_dispatcher_runs() -> None:
    events = _Events(dispatching=False)
    waiter = _Waiter()
    events._settle_after_callbacks(waiter)
    assert waiter.settle is None
    assert events.queued == []


def test_no_wait_when_the_marker_could_not_be_queued() -> None:
    # Closed, or the queue overflowed: waiting would never end.
    events = _Events(queue_room=False)
    waiter = _Waiter()
    events._settle_after_callbacks(waiter)
    assert waiter.settle is None
