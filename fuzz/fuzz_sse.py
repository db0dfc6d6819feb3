"""Fuzz target: the SSE parser (``mcp_proto.sse.SSEParser``) and the HTTP resumption state
it feeds (``HttpSessionState.note_event`` with one ``SseStream``).

Feeds: the body of a ``text/event-stream`` response. The first byte picks
``max_event_size``, the second the chunk size; the rest is the stream.

Contract: only ``ResponseTooLargeError`` escapes; events, ids, retries and whether (and
before which event) the bound trips do not depend on chunking; every event is well
typed; the resumption state only ever keeps a retainable id and a clamped delay.
"""

from __future__ import annotations

from typing import Any

from _fuzzlib import Reader, Target

from mcp_proto import NEED_DATA
from mcp_proto.errors import ResponseTooLargeError
from mcp_proto.http import (
    MAX_RECONNECT_DELAY,
    MIN_RECONNECT_DELAY,
    HttpSessionState,
    SseStream,
)
from mcp_proto.sse import SSEEvent, SSEParser, is_retainable_event_id

LIMITS = (3, 8, 32, 256, 1 << 20)


def _run(chunks: list[bytes], limit: int) -> list[Any]:
    parser = SSEParser(limit)
    state = HttpSessionState()
    stream = SseStream()
    out: list[Any] = []

    def drain() -> None:
        while (event := parser.next_event()) is not NEED_DATA:
            assert isinstance(event, SSEEvent)
            assert isinstance(event.event, str) and isinstance(event.data, str)
            assert event.id is None or isinstance(event.id, str)
            assert event.retry is None or (isinstance(event.retry, int) and event.retry >= 0)
            assert len(event.data.encode("utf-8", "surrogatepass")) <= 3 * limit
            state.note_event(event, stream)
            out.append(event)
        stream.note_id(parser.last_event_id)
        assert stream.last_event_id is None or is_retainable_event_id(stream.last_event_id)
        assert MIN_RECONNECT_DELAY <= state.reconnect_delay <= MAX_RECONNECT_DELAY

    try:
        for chunk in [*chunks, b""]:
            parser.receive_data(chunk)
            drain()
    except ResponseTooLargeError as exc:
        assert str(exc) == f"an SSE event exceeded max_event_size ({limit} bytes)"
        # Events completed earlier in the same chunk are still queued: the bound trips
        # before the same event however the stream is chunked, if they are drained.
        drain()
        out.append("too large")
    out.append(("last id", parser.last_event_id, "retry", parser.retry))
    return out


def check(data: bytes) -> None:
    reader = Reader(data)
    limit = LIMITS[reader.below(len(LIMITS))]
    step = 1 + reader.below(16)
    stream = reader.rest()
    whole = _run([stream] if stream else [], limit)
    pieces = [stream[i : i + step] for i in range(0, len(stream), step)]
    assert _run(pieces, limit) == whole, "chunking changed the events"


TARGET = Target(
    name="sse",
    description="event-stream bytes -> SSEParser -> events, resumption state",
    check=check,
    seeds=(
        b"\x04\x03" + b"event: message\nid: 1\ndata: {}\n\n",
        b"\x04\x01" + b"\xef\xbb\xbfdata: a\r\ndata: b\r\rretry: 5\n\n",
        b"\x01\x02" + b": comment\nid: \xff\ndata: x\n\nid\n\n",
        b"\x00\x01" + b"data:12\n\ndata:123\n\n",
        b"\x03\x07" + b"retry: 000000000000000000000099\nid: a\x00b\n\n",
    ),
    max_len=2048,
)

if __name__ == "__main__":
    from run import main

    main(["sse"])
