"""The request pipeline: calls, attempts, the retry table, backoff and expiry re-sends.

A *call* is what the user started (``Connection.start_call``); an *attempt* is one
JSON-RPC request carrying it on one session. A call keeps its call id across attempts.
Every attempt that ends without a result is judged here, once, for every transport:

* an expired HTTP session (``SessionExpiredError``, 2025-11-25 § Session Management):
  re-sent once on the new session when the retry table allows the method, else the
  call fails ("... a new session was started but the request was not re-sent");
* any other error: retried after ``backoff_delay(attempt, config.retry_backoff,
  jitter=random() * 0.25)`` (a deadline, never a sleep) while ``is_retryable`` says so
  and ``config.retries`` is not used up (RETRY-1..3, RETRY-6, TIME-3, SIZE-2).

The places later features plug into (issue 9 item 3) are the hook methods of
:class:`Pipeline`: :meth:`Pipeline.request_params` (per-request ``_meta``, a cache
lookup, ``input_required`` rounds) and :meth:`Pipeline.judge` (authorization: a 401
may one day trigger a token refresh instead of failing the call).
"""

from __future__ import annotations

import enum
import heapq
from collections import deque
from collections.abc import Callable
from typing import Any, Final

from .. import jsonrpc
from ..config import ServerConfig
from ..errors import MCPError, ResponseStreamClosedError, SessionExpiredError
from ..http import backoff_delay, is_retryable

__all__ = ["Call", "CallState", "Pipeline", "Verdict"]


class CallState(enum.Enum):
    QUEUED = "queued"  # waiting for the connection to be ready
    SENT = "sent"  # an attempt is in flight (``rid`` on the current session)
    BACKOFF = "backoff"  # waiting for its retry deadline
    DONE = "done"


class Call:
    """One call the user started, across its attempts (mutable; identity equality).
    A plain slotted class: made once per call, on the hot path."""

    __slots__ = (
        "call_id",
        "expired_once",
        "failures",
        "method",
        "params",
        "progress",
        "quiet_timeout",
        "reissued",
        "retry_at",
        "rid",
        "state",
        "timeout",
        "tool",
    )

    def __init__(
        self,
        call_id: int,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        progress: bool,
    ) -> None:
        self.call_id = call_id
        self.method = method
        self.params = params
        self.timeout = timeout  # per attempt (None: no timeout)
        self.progress = progress
        self.state = CallState.QUEUED
        self.rid: jsonrpc.RequestId | None = None
        self.failures = 0  # attempts that failed and counted against config.retries
        self.expired_once = False  # re-sent once already after a session expiry
        self.retry_at: float | None = None
        #: For ``tools/call``: the called tool's definition (a ``Tool`` or its dict),
        #: whose ``x-mcp-header`` annotations become ``Mcp-Param-*`` headers (HDR-1).
        self.tool: Any = None
        self.reissued = False  # modern HTTP: re-issued once already after a broken stream
        #: TASK-19: a task-augmented request's timeout sends no notifications/cancelled
        #: (the task is cancelled with tasks/cancel instead: 2025-11-25 § Tasks).
        self.quiet_timeout = False

    def __repr__(self) -> str:
        return f"Call({self.call_id}, {self.method!r}, {self.state.value}, rid={self.rid!r})"


class Verdict(enum.Enum):
    FAIL = "fail"
    RESEND = "resend"  # at once, on the next session (after a session expiry)
    BACKOFF = "backoff"


class Pipeline:
    """Open calls, by call id and by the JSON-RPC id of their current attempt."""

    def __init__(self, config: ServerConfig, name: str, random: Callable[[], float]) -> None:
        self._config = config
        self._name = name
        self._random = random
        self._next_id = 1
        self.calls: dict[int, Call] = {}
        self.queued: deque[Call] = deque()
        self._by_rid: dict[jsonrpc.RequestId, Call] = {}
        # (deadline, call id) of calls in backoff; stale entries are skipped lazily.
        # Read by the machine's next_deadline (empty: no backoff deadline to ask for).
        self.backoff: list[tuple[float, int]] = []

    # -------------------------------------------------------------- bookkeeping

    def new(
        self, method: str, params: dict[str, Any] | None, timeout: float | None, progress: bool
    ) -> Call:
        call = Call(self._next_id, method, params, timeout, progress)
        self._next_id += 1
        self.calls[call.call_id] = call
        return call

    def queue(self, call: Call) -> None:
        call.state = CallState.QUEUED
        call.rid = None
        self.queued.append(call)

    @property
    def has_queued(self) -> bool:
        """Whether a call waits for the connection (ended calls still in the queue
        are dropped here, lazily)."""
        queued = self.queued
        while queued and queued[0].state is not CallState.QUEUED:
            queued.popleft()
        return bool(queued)

    def take_queued(self) -> list[Call]:
        out = [c for c in self.queued if c.state is CallState.QUEUED]
        self.queued.clear()
        return out

    def sent(self, call: Call, rid: jsonrpc.RequestId) -> None:
        call.state = CallState.SENT
        call.rid = rid
        self._by_rid[rid] = call

    def by_rid(self, rid: jsonrpc.RequestId) -> Call | None:
        return self._by_rid.get(rid)

    def detach(self, rid: jsonrpc.RequestId) -> Call | None:
        """The attempt ``rid`` ended: its call, no longer tied to that id."""
        call = self._by_rid.pop(rid, None)
        if call is not None:
            call.rid = None
        return call

    def answered(self, rid: jsonrpc.RequestId) -> Call | None:
        """The attempt ``rid`` was answered: its call, finished (``detach`` then
        ``finish`` in one step, for the hot path)."""
        call = self._by_rid.pop(rid, None)
        if call is not None:
            call.rid = None
            call.state = CallState.DONE
            self.calls.pop(call.call_id, None)
        return call

    def finish(self, call: Call) -> None:
        call.state = CallState.DONE
        if call.rid is not None:
            self._by_rid.pop(call.rid, None)
            call.rid = None
        self.calls.pop(call.call_id, None)

    def forget_attempts(self) -> None:
        """The session is gone: no id of it means anything any more."""
        self._by_rid.clear()

    @property
    def open_count(self) -> int:
        return len(self.calls)

    # -------------------------------------------------------------- time

    def next_deadline(self) -> float | None:
        heap = self.backoff
        while heap:
            deadline, call_id = heap[0]
            call = self.calls.get(call_id)
            if call is not None and call.state is CallState.BACKOFF and call.retry_at == deadline:
                return deadline
            heapq.heappop(heap)
        return None

    def due(self, now: float) -> None:
        """Queue again the calls whose backoff ended (oldest deadline first)."""
        while True:
            deadline = self.next_deadline()
            if deadline is None or deadline > now:
                return
            _, call_id = heapq.heappop(self.backoff)
            call = self.calls[call_id]
            call.retry_at = None
            self.queue(call)

    # -------------------------------------------------------------- hooks

    def request_params(self, call: Call) -> dict[str, Any] | None:
        """Hook: the params of the next attempt of ``call``. Per-request ``_meta``, a
        cache lookup and ``input_required`` rounds plug in here (issue 9 item 3)."""
        return call.params

    def judge(
        self, call: Call, error: MCPError, now: float, *, modern_http: bool = False
    ) -> tuple[Verdict, MCPError | str]:
        """Hook: what to do after an attempt of ``call`` failed with ``error``.

        Returns ``(FAIL, error to report)``, ``(RESEND, "")`` or ``(BACKOFF, the
        diagnostic to log)``; for BACKOFF the call's ``retry_at`` is set.
        ``modern_http``: the attempt was a 2026-07-28 request over HTTP.
        """
        if modern_http and isinstance(error, ResponseStreamClosedError):
            # RETRY-7 / SHTTP-7: a modern response stream that ends without the result
            # is re-issued once as a new request (new id), tools/call included: the
            # closed stream was the cancellation. A second break fails the call.
            if call.reissued:
                twice = ResponseStreamClosedError(
                    f"server {self._name!r}: the response stream of {call.method} closed "
                    "before the response twice (re-issued once)"
                )
                twice.__cause__ = error
                return Verdict.FAIL, twice
            call.reissued = True
            return Verdict.RESEND, ""
        if isinstance(error, SessionExpiredError):
            # 2025-11-25 § Session Management: a new session is started; the request
            # is re-sent on it once, if it may be sent twice at all.
            if call.expired_once or not is_retryable(call.method, error):
                final = SessionExpiredError(
                    f"server {self._name!r}: the session expired during {call.method}; "
                    "a new session was started but the request was not re-sent"
                )
                final.__cause__ = error
                return Verdict.FAIL, final
            call.expired_once = True
            return Verdict.RESEND, ""
        call.failures += 1
        if call.failures > self._config.retries or not is_retryable(call.method, error):
            return Verdict.FAIL, error
        delay = backoff_delay(
            call.failures, self._config.retry_backoff, jitter=self._random() * 0.25
        )
        call.state = CallState.BACKOFF
        call.rid = None
        call.retry_at = now + delay
        heapq.heappush(self.backoff, (call.retry_at, call.call_id))
        return Verdict.BACKOFF, (
            f"server {self._name!r}: {call.method} failed ({error}); "
            f"retry {call.failures} in {delay:.2f}s"
        )


#: At close, how long handlers already answering server requests may still take before
#: what is left is refused (issue 8, item 5). Only spent while one is unanswered.
CLOSE_ANSWER_WAIT: Final = 0.5
