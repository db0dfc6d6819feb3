"""The blocking shell's wake-up of a waiting caller (``_Signal``): Event semantics on a
bare lock, one waiter, consumed by ``wait``. The callers' loops rely on: a set before
the wait is not lost, a second set is harmless, a wake-up never outlives ``clear``."""

from __future__ import annotations

import threading

from mcp_io_sync._waiter import _Signal, _Waiter


def test_a_set_before_the_wait_is_not_lost_and_is_consumed() -> None:
    signal = _Signal()
    signal.set()
    signal.set()  # a second set (an answer after a role hand-over) is a no-op
    assert signal.wait(0.0) is True
    assert signal.wait(0.0) is False  # consumed


def test_clear_drops_a_pending_wake_up() -> None:
    signal = _Signal()
    signal.set()
    signal.clear()
    assert signal.wait(0.0) is False
    signal.clear()  # clearing an unset signal is fine too
    assert signal.wait(0.0) is False


def test_a_set_from_another_thread_wakes_the_waiter() -> None:
    signal = _Signal()
    woke: list[bool] = []
    waiter = threading.Thread(target=lambda: woke.append(signal.wait(None)))
    waiter.start()
    signal.set()
    waiter.join(10)
    assert woke == [True]


def test_a_waiter_makes_its_signal_once() -> None:
    waiter = _Waiter()
    assert waiter.event is None
    first = waiter.get_event()
    assert waiter.get_event() is first
