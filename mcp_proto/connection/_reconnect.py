"""Reconnecting an HTTP+SSE connection in the background (SSE-5), pure.

docs/requirements.md SSE-5: keep-alive pings (``config.ping``); the connection is
dead after ``KEEPALIVE_MISSES`` unanswered ones (``_legacy_sse.py``), and then it is
re-established in the background with jittered exponential backoff: at most
:data:`RECONNECT_ATTEMPTS` attempts, none more than
:data:`~mcp_proto.http.MAX_RECONNECT_DELAY` (30 s) after the previous failure. The
event stream is the only channel on which the server reaches the client (2024-11-05
§ Transports, HTTP with SSE), so a host that only waits for notifications or server
requests would otherwise never get it back: nothing reconnects until its next request.

The same holds for the event stream ending or failing under a ready connection. A
refusal (an authorization challenge, an incompatible server) is not retried: the same
request would meet it again.

The policy is a value: the machine asks it when the next attempt is due (time is a
number) and hands it the jitter, a fraction in [0, 1) the shell's random source drew
(no randomness in the core). The shells only wait for the deadline.
"""

from __future__ import annotations

from typing import Final

import attrs

from ..errors import IncompatibleServerError, MCPError, UnauthorizedError
from ..http import backoff_delay

__all__ = ["RECONNECT_ATTEMPTS", "RECONNECT_JITTER", "BackgroundReconnect", "worth_reconnecting"]

#: Attempts after a loss before the background gives up (SSE-5: 5 attempts); the
#: next request of the host connects again as usual.
RECONNECT_ATTEMPTS: Final = 5
#: The share of a delay the jitter may add (as the listen streams' re-open backoff).
RECONNECT_JITTER: Final = 0.25


def worth_reconnecting(error: MCPError) -> bool:
    """Whether a loss (or a failed attempt) is one a later attempt may cure."""
    return not isinstance(error, (UnauthorizedError, IncompatibleServerError))


@attrs.define
class BackgroundReconnect:
    """The background reconnection of one connection: ``attempt`` attempts made or
    due since the loss (0: none under way), the next one due ``at``."""

    attempt: int = 0
    at: float | None = None

    @property
    def running(self) -> bool:
        return self.attempt > 0

    def next_attempt(self, now: float, base: float, jitter: float) -> float | None:
        """After a loss (or a failed attempt): when the next attempt is due, or ``None``
        when :data:`RECONNECT_ATTEMPTS` have been made (the run is over). ``base`` is
        the first delay (``retry_backoff``), doubled each attempt, capped at 30 s;
        ``jitter`` in [0, 1) stretches it by up to :data:`RECONNECT_JITTER`."""
        if self.attempt >= RECONNECT_ATTEMPTS:
            self.reset()
            return None
        self.attempt += 1
        self.at = now + backoff_delay(self.attempt, base, jitter=jitter * RECONNECT_JITTER)
        return self.at

    def due(self, now: float) -> bool:
        """Whether the attempt scheduled is due at ``now`` (then it is taken)."""
        if self.at is not None and now >= self.at:
            self.at = None
            return True
        return False

    def reset(self) -> None:
        """Connected, closed by the host, or given up: no attempt under way."""
        self.attempt = 0
        self.at = None
