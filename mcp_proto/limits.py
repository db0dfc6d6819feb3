"""Every bound the client applies to peer-controlled input, as one frozen value."""

from __future__ import annotations

import attrs

__all__ = ["Limits"]

_MiB = 1024 * 1024


def _positive(_inst: object, attribute: attrs.Attribute[int], value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"Limits.{attribute.name} must be a positive int, got {value!r}")


@attrs.frozen
class Limits:
    """Bounds on what a server can make the client hold or do.

    Defaults are chosen so honest servers never meet them while a hostile one cannot
    exhaust memory or CPU. Each is a policy, not a protocol rule; raise one if you
    legitimately exchange bigger payloads.
    """

    #: Longest stdio line (one JSON-RPC message) accepted. A line that grows past it
    #: without a newline is a fatal framing error (``LineTooLongError``): the
    #: connection is dropped and restarted on the next request. 32 MiB matches the
    #: seeds' SSE buffer cap and leaves room for large base64 resource blobs.
    max_line_size: int = attrs.field(default=32 * _MiB, validator=_positive)
    #: Longest single stderr line of a stdio server kept for the log (rest dropped).
    max_stderr_line: int = attrs.field(default=64 * 1024, validator=_positive)
    #: Pages followed by one auto-paginated list call (TOOL-2).
    max_pages: int = attrs.field(default=1000, validator=_positive)
    #: Characters of a server's ``notifications/message`` text kept in the log (LOG-4).
    max_log_message: int = attrs.field(default=4096, validator=_positive)
    #: Server-initiated requests (sampling, elicitation, roots, ping) handled at once
    #: (UT-8); further ones wait in a bounded queue.
    server_request_concurrency: int = attrs.field(default=8, validator=_positive)
    #: Server-initiated requests that may wait for a worker; beyond this they are
    #: answered at once with an error instead of queuing without bound.
    server_request_backlog: int = attrs.field(default=256, validator=_positive)
    #: Requests the client may have in flight to one server.
    max_pending_requests: int = attrs.field(default=100_000, validator=_positive)
    #: Notifications waiting for the host's callbacks before newer ones are dropped.
    max_queued_notifications: int = attrs.field(default=10_000, validator=_positive)
