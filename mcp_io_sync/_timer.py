"""The blocking shell's one timer per server (issue 9, item 5: "one timer")."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

from mcp_proto.connection import Connection

__all__ = ["Timer"]


class Timer:
    """The one thread that honours every deadline of the machine (callers waiting for
    an answer also wake at ``next_deadline()``; whoever comes first handles it).

    Per server, not per client: a server's machine has its own lock and deadlines,
    and a timer sharing that lock (its condition is built on it) needs no heap across
    servers and no hand-off between locks. Started on the first deadline; it sleeps
    until ``next_deadline()`` and calls ``handle_timeout``. It is woken only when a
    deadline earlier than the one it sleeps to appears (``BaseServer._check_timer``):
    request timeouts of calls made one after the other, each later than the last, do
    not wake it."""

    def __init__(
        self,
        lock: threading.RLock,
        conn: Connection,
        expire: Callable[[], None],
        name: str,
    ) -> None:
        self.cond = threading.Condition(lock)
        self._conn = conn
        self._expire = expire
        self.wake_at = math.inf  # guarded by the server's lock
        self.stopped = False
        self.thread = threading.Thread(target=self._run, name=f"mcp-timer-{name}", daemon=True)

    def _run(self) -> None:
        conn = self._conn
        while True:
            with self.cond:
                while True:
                    if self.stopped:
                        return
                    deadline = conn.next_deadline()
                    now = time.monotonic()
                    if deadline is not None and now >= deadline:
                        break
                    self.wake_at = math.inf if deadline is None else deadline
                    self.cond.wait(None if deadline is None else deadline - now)
                self.wake_at = math.inf
            self._expire()
