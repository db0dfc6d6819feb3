"""Each SSE stream keeps its own resumption cursor (issue 8, item 1).

2025-11-25 § Resumability: event ids are "a cursor within that particular stream";
the server replays "on the stream that was disconnected" and "MUST NOT replay messages
that would have been delivered on a different stream". So the standalone GET stream
must open without a ``Last-Event-ID`` (a TypeScript-SDK server with an event store takes
one for a resume of the stream it belongs to, and never opens the standalone stream),
and each stream resumes with its own last id.
"""

from __future__ import annotations

from mcp_proto.http import HttpSessionState, SseStream
from mcp_proto.sse import SSEEvent, SSEParser


def last_event_id(headers: list[tuple[str, str]]) -> str | None:
    values = [v for k, v in headers if k.lower() == "last-event-id"]
    assert len(values) <= 1, headers
    return values[0] if values else None


def feed(state: HttpSessionState, stream: SseStream, raw: bytes) -> None:
    """Run ``raw`` through a parser as the shells do, noting every event on ``stream``."""
    parser = SSEParser()
    parser.receive_data(raw)
    parser.receive_data(b"")
    while isinstance(event := parser.next_event(), SSEEvent):
        state.note_event(event, stream)
    stream.note_id(parser.last_event_id)


def test_the_state_has_no_connection_wide_event_id() -> None:
    # One cursor per connection was the defect: it is gone from the session state.
    state = HttpSessionState(session_id="s")
    assert not hasattr(state, "last_event_id")


def test_a_fresh_get_stream_carries_no_last_event_id_after_a_post_stream() -> None:
    state = HttpSessionState(protocol_version="2025-11-25", session_id="s")
    # The initialize POST answered on an SSE stream with ids (server-everything does).
    post = SseStream()
    feed(state, post, b'id: post-1\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n')
    assert post.last_event_id == "post-1"
    get = SseStream()
    assert last_event_id(state.get_headers(get)) is None
    assert last_event_id(state.get_headers()) is None


def test_each_stream_keeps_its_own_last_event_id() -> None:
    state = HttpSessionState(session_id="s")
    post_a, post_b, get = SseStream(), SseStream(), SseStream()
    feed(state, post_a, b"id: a-1\ndata: {}\n\nid: a-2\ndata: {}\n\n")
    feed(state, get, b"id: g-1\ndata:\n\n")
    feed(state, post_b, b"id: b-1\ndata: {}\n\n")
    feed(state, post_a, b"id: a-3\ndata: {}\n\n")  # a resumed POST stream
    assert (post_a.last_event_id, post_b.last_event_id, get.last_event_id) == (
        "a-3",
        "b-1",
        "g-1",
    )
    assert last_event_id(state.get_headers(post_a)) == "a-3"
    assert last_event_id(state.get_headers(post_b)) == "b-1"


def test_a_resumed_get_stream_uses_the_get_streams_own_last_id() -> None:
    state = HttpSessionState(session_id="s")
    get = SseStream()
    assert last_event_id(state.get_headers(get)) is None  # opened afresh
    feed(state, get, b'id: g-7\ndata: {"jsonrpc":"2.0","method":"x"}\n\n')
    # Meanwhile a POST stream saw later ids: they must not leak into the GET's resume.
    post = SseStream()
    feed(state, post, b"id: p-99\ndata: {}\n\n")
    assert last_event_id(state.get_headers(get)) == "g-7"
    # A priming event (an id, empty data) moves the cursor too (SEP-1699).
    feed(state, get, b"id: g-8\ndata:\n\n")
    assert last_event_id(state.get_headers(get)) == "g-8"


def test_an_unretainable_id_leaves_the_stream_cursor_alone() -> None:
    state = HttpSessionState()
    stream = SseStream()
    feed(state, stream, b"id: ok-1\ndata: {}\n\n")
    feed(state, stream, b"id: " + b"x" * 2048 + b"\ndata: {}\n\n")  # UT-4
    assert last_event_id(state.get_headers(stream)) == "ok-1"


def test_retry_advice_from_any_stream_sets_the_reconnect_delay() -> None:
    state = HttpSessionState()
    feed(state, SseStream(), b"retry: 2500\nid: 1\ndata:\n\n")
    assert state.reconnect_delay == 2.5
