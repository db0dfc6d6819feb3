"""The connection machine over the deprecated HTTP+SSE transport: the endpoint event,
POSTs that only need 2xx, answers on the stream, keep-alive pings, the stream ending.
Pure: time is a number."""

from __future__ import annotations

import pytest
from _machine_driver import (
    SSE_HEAD,
    Harness,
    body_of,
    header,
    init_result,
    result,
    sse_event,
)

from mcp_proto import deprecations
from mcp_proto.config import sse_config
from mcp_proto.connection import (
    CallFailed,
    CallSucceeded,
    CloseTransport,
    Connected,
    ConnectFailed,
    ConnectionState,
    Diagnostic,
    Disconnected,
    ExchangeFailure,
    OpenTransport,
    StartExchange,
)
from mcp_proto.errors import ConnectionError, ServerError, TransportError, UnauthorizedError
from mcp_proto.limits import Limits

URL = "http://127.0.0.1:9/sse"


@pytest.fixture(autouse=True)
def _fresh_notices() -> None:
    deprecations.reset()


def harness(**kwargs: object) -> Harness:
    kwargs.setdefault("ping", None)
    return Harness(sse_config(URL, **kwargs))  # type: ignore[arg-type]


def open_stream(h: Harness) -> StartExchange:
    h.conn.connect(h.now)
    assert h.take_frames() == [OpenTransport()]
    h.conn.transport_opened(h.now)
    (get,) = h.exchanges()
    assert get.method == "GET" and get.url == URL and get.streaming
    assert get.read_timeout is None
    assert header(get, "Accept") == "text/event-stream"
    return get


def connect_legacy(h: Harness) -> StartExchange:
    stream = open_stream(h)
    h.conn.exchange_head(stream.xid, 200, SSE_HEAD, h.now)
    h.conn.exchange_data(stream.xid, sse_event("/messages?sid=1", event="endpoint"), h.now)
    (init,) = h.exchanges()
    h.reply_status(init, 202)
    h.conn.exchange_data(stream.xid, sse_event(init_result(body_of(init)["id"])), h.now)
    (initialized,) = h.exchanges()
    h.reply_status(initialized, 202)
    assert [type(e) for e in h.take_events() if not isinstance(e, Diagnostic)] == [Connected]
    return stream


def test_the_endpoint_event_starts_the_handshake_and_answers_come_on_the_stream() -> None:
    h = harness()
    stream = open_stream(h)
    assert h.take_events() == []
    assert h.conn.state is ConnectionState.OPENING
    h.conn.exchange_head(stream.xid, 200, SSE_HEAD, 0.0)
    h.conn.exchange_data(stream.xid, sse_event("/messages?sid=1", event="endpoint"), 0.0)
    (init,) = h.exchanges()
    assert init.method == "POST" and init.url == "http://127.0.0.1:9/messages?sid=1"
    assert header(init, "Accept") == "application/json"
    h.reply_status(init, 202)
    assert h.take_events() == []
    h.conn.exchange_data(stream.xid, sse_event(init_result(body_of(init)["id"])), 0.0)
    # Ready once the server took notifications/initialized (issue 24 B).
    assert [type(e) for e in h.take_events() if not isinstance(e, Diagnostic)] == []
    (initialized,) = h.exchanges()
    h.reply_status(initialized, 202)
    assert [type(e) for e in h.take_events() if not isinstance(e, Diagnostic)] == [Connected]
    cid = h.conn.start_call("tools/list", now=0.0)
    (post,) = h.exchanges()
    h.reply_status(post, 200, b"Accepted")
    h.conn.exchange_data(stream.xid, sse_event(result(body_of(post)["id"], {"tools": []})), 0)
    assert h.take_events()[-1] == CallSucceeded(cid, "tools/list", {"tools": []})


def test_initialize_declares_every_capability_the_stream_carries_server_requests() -> None:
    # Issue 24 A: the event stream is the channel for server requests; only plain HTTP
    # (no channel, HTTP-4) leaves out roots, sampling and elicitation.
    caps = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}}}
    h = Harness(sse_config(URL, ping=None), capabilities=caps)
    stream = open_stream(h)
    h.conn.exchange_head(stream.xid, 200, SSE_HEAD, h.now)
    h.conn.exchange_data(stream.xid, sse_event("/messages?sid=1", event="endpoint"), h.now)
    (init,) = h.exchanges()
    assert body_of(init)["params"]["capabilities"] == caps


def test_the_deprecation_notice_comes_once_per_process_once_connected() -> None:
    deprecations.reset()
    h = harness()
    stream = open_stream(h)
    h.conn.exchange_head(stream.xid, 200, SSE_HEAD, h.now)
    assert h.take_events() == []  # tried is not used: a fallback chain tries it
    h.conn.exchange_data(stream.xid, sse_event("/messages?sid=1", event="endpoint"), h.now)
    (init,) = h.exchanges()
    h.reply_status(init, 202)
    h.conn.exchange_data(stream.xid, sse_event(init_result(body_of(init)["id"])), h.now)
    notices = [e for e in h.take_events() if isinstance(e, Diagnostic)]
    assert [
        (n.level, n.deprecation, "HTTP+SSE transport is deprecated" in n.message) for n in notices
    ] == [("warning", "http_sse", True)]
    # The machine hands the notice over; the driver spends it (announce) once written.
    assert deprecations.announce("http_sse", lambda text: None)
    again = harness()
    connect_legacy(again)
    assert [e for e in again.take_events() if isinstance(e, Diagnostic)] == []


def test_the_deprecation_notice_is_handed_over_again_until_written() -> None:
    """DEP-12: the HTTP+SSE notice goes through the claim/confirm/release step like
    the others: a logger that raises or drops it leaves it due for the next connection."""
    deprecations.reset()

    def raises(text: str) -> None:
        raise OSError("the log device is gone")

    def handed_over() -> list[Diagnostic]:
        h = harness()
        stream = open_stream(h)
        h.conn.exchange_head(stream.xid, 200, SSE_HEAD, h.now)
        h.conn.exchange_data(stream.xid, sse_event("/messages?sid=1", event="endpoint"), h.now)
        (init,) = h.exchanges()
        h.reply_status(init, 202)
        h.conn.exchange_data(stream.xid, sse_event(init_result(body_of(init)["id"])), h.now)
        return [e for e in h.take_events() if isinstance(e, Diagnostic) and e.deprecation]

    written: list[str] = []
    for emit, expected in [
        (raises, "due"),
        (lambda text: False, "due"),  # a logger that wrote nowhere
        (written.append, "announced"),
    ]:
        (notice,) = handed_over()
        deprecations.announce(notice.deprecation, emit)
        assert deprecations.state("http_sse") == expected
    assert len(written) == 1 and "Migrate the server to Streamable HTTP" in written[0]
    assert handed_over() == []


def test_a_stream_that_is_not_an_sse_server_announces_nothing() -> None:
    deprecations.reset()
    h = harness()
    stream = open_stream(h)
    h.conn.exchange_head(stream.xid, 200, [("content-type", "text/html")], h.now)
    h.conn.exchange_end(stream.xid, h.now)
    assert not any(isinstance(e, Diagnostic) and "HTTP+SSE" in e.message for e in h.take_events())
    assert deprecations.claim("http_sse") is not None  # still unannounced


def test_an_endpoint_on_another_origin_is_refused() -> None:
    h = harness()
    cid = h.conn.start_call("tools/list", now=0.0)
    stream = open_stream(h)
    h.conn.exchange_head(stream.xid, 200, SSE_HEAD, 0.0)
    h.conn.exchange_data(stream.xid, sse_event("http://evil.example/x", event="endpoint"), 0)
    events = h.take_events(ConnectFailed, CallFailed)
    assert isinstance(events[0], ConnectFailed)
    assert "another origin" in str(events[0].error)
    assert events[1].call_id == cid
    assert CloseTransport(graceful=False) in h.take_frames()
    assert h.exchanges() == []


def test_no_endpoint_in_time_fails_the_connect() -> None:
    h = harness(read_timeout=5.0)
    stream = open_stream(h)
    h.conn.exchange_head(stream.xid, 200, SSE_HEAD, 0.0)
    assert h.conn.next_deadline() == 5.0
    h.advance(5.0)
    (failed,) = h.take_events(ConnectFailed)
    assert "announced no endpoint in time" in str(failed.error)


def test_a_401_on_the_stream_is_typed_and_a_non_stream_refused() -> None:
    h = harness()
    stream = open_stream(h)
    h.conn.exchange_head(
        stream.xid, 401, [("WWW-Authenticate", 'Bearer resource_metadata="https://a/m"')], 0
    )
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, UnauthorizedError)
    assert failed.error.resource_metadata == "https://a/m"
    h = harness()
    stream = open_stream(h)
    h.conn.exchange_head(stream.xid, 200, [("Content-Type", "text/html")], 0.0)
    (failed,) = h.take_events(ConnectFailed)
    assert "not an event stream" in str(failed.error)


def test_the_stream_ending_disconnects_and_fails_calls() -> None:
    h = harness()
    stream = connect_legacy(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    (post,) = h.exchanges()
    h.reply_status(post, 202)
    h.conn.exchange_end(stream.xid, 0.0)
    events = h.take_events()
    assert isinstance(events[0], Disconnected)
    assert "closed the event stream" in str(events[0].error)
    assert [e.call_id for e in events if isinstance(e, CallFailed)] == [cid]
    assert CloseTransport(graceful=False) in h.take_frames()
    assert h.conn.state is ConnectionState.IDLE


def test_a_post_that_is_not_2xx_fails_the_call() -> None:
    h = harness()
    connect_legacy(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    (post,) = h.exchanges()
    h.reply_status(post, 400, b"nope")
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, ServerError)


def test_keepalive_three_unanswered_pings_disconnect() -> None:
    h = harness(ping=10.0)
    stream = connect_legacy(h)
    assert h.conn.next_deadline() == 10.0
    h.advance(10.0)
    (ping,) = h.exchanges()
    assert body_of(ping)["method"] == "ping"
    h.reply_status(ping, 202)
    # Answered: the misses start over.
    h.conn.exchange_data(stream.xid, sse_event(result(body_of(ping)["id"], {})), 10.0)
    assert h.take_events() == []  # the machine's own ping: no call events
    for n in range(3):
        deadline = h.conn.next_deadline()
        assert deadline is not None
        h.advance(deadline)
        # (the server takes every POST: the previous ping's notifications/cancelled
        # goes first, one POST at a time)
        methods: list[str] = []
        while "ping" not in methods:
            (post,) = h.exchanges()
            h.reply_status(post, 202)
            methods.append(body_of(post)["method"])
        assert methods == (["ping"] if n == 0 else ["notifications/cancelled", "ping"])
        h.advance(h.now + 25.0)  # ping * 2.5: unanswered
        if n < 2:
            assert h.take_events(Disconnected) == []
    (lost,) = h.take_events(Disconnected)
    assert "stopped answering pings" in str(lost.error)
    assert isinstance(lost.error, ConnectionError)
    assert CloseTransport(graceful=False) in h.take_frames()


def test_a_ping_due_while_the_pending_table_is_full_is_skipped_not_raised() -> None:
    # Found by test_connection_interleavings: a keep-alive ping due while the session
    # had max_pending_requests in flight raised LocalProtocolError out of
    # handle_timeout. The calls in flight probe the connection already: no ping is
    # sent, nothing is raised, and the next ping is scheduled.
    h = Harness(sse_config(URL, ping=10.0), limits=Limits(max_pending_requests=2))
    connect_legacy(h)
    h.conn.start_call("tools/list", now=0.0)
    h.conn.start_call("prompts/list", now=0.0)
    (first,) = h.exchanges()
    h.reply_status(first, 202)
    (second,) = h.exchanges()
    h.reply_status(second, 202)
    h.advance(10.0)
    assert [x for x in h.exchanges() if body_of(x).get("method") == "ping"] == []
    assert h.take_events(Disconnected) == []
    assert h.conn.next_deadline() == 20.0


def test_a_failed_post_fails_its_call_and_a_broken_stream_disconnects() -> None:
    h = harness(retries=0)
    stream = connect_legacy(h)
    cid = h.conn.start_call("tools/list", now=0.0)
    (post,) = h.exchanges()
    h.conn.exchange_failed(post.xid, ExchangeFailure("network", "refused"), 0.0)
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, TransportError)
    h.conn.exchange_failed(stream.xid, ExchangeFailure("network", "reset"), 0.0)
    (lost,) = h.take_events(Disconnected)
    assert "event stream" in str(lost.error)


def test_close_refuses_unanswered_requests_by_post_and_sends_no_delete() -> None:
    h = harness()
    stream = connect_legacy(h)
    h.conn.exchange_data(stream.xid, sse_event(b'{"jsonrpc":"2.0","id":3,"method":"ping"}'), 0)
    h.take_events()
    h.conn.close(0.0)
    h.advance(0.5)
    (refusal,) = h.exchanges()
    assert refusal.method == "POST" and body_of(refusal)["error"]["code"] == -32000
    assert h.take_frames()[-1] == CloseTransport(graceful=True)


def test_the_next_call_after_the_stream_ended_reconnects() -> None:
    h = harness()
    stream = connect_legacy(h)
    h.conn.exchange_end(stream.xid, 0.0)
    h.take_events()
    h.take_frames()
    cid = h.conn.start_call("tools/list", now=1.0)
    assert h.take_frames() == [OpenTransport()]
    h.now = 1.0
    h.conn.transport_opened(1.0)
    (stream,) = h.exchanges()
    h.conn.exchange_head(stream.xid, 200, SSE_HEAD, 1.0)
    h.conn.exchange_data(stream.xid, sse_event("/messages?sid=2", event="endpoint"), 1.0)
    (init,) = h.exchanges()
    h.reply_status(init, 202)
    h.conn.exchange_data(stream.xid, sse_event(init_result(body_of(init)["id"])), 1.0)
    (initialized,) = h.exchanges()
    assert body_of(initialized)["method"] == "notifications/initialized"
    h.reply_status(initialized, 202)
    (post,) = h.exchanges()
    assert post.url == "http://127.0.0.1:9/messages?sid=2"
    assert body_of(post)["method"] == "tools/list"
    h.reply_status(post, 202)
    h.conn.exchange_data(stream.xid, sse_event(result(body_of(post)["id"], {"tools": []})), 1)
    assert h.take_events()[-1] == CallSucceeded(cid, "tools/list", {"tools": []})


def test_a_ping_post_refused_counts_as_a_miss_at_once() -> None:
    h = harness(ping=10.0)
    connect_legacy(h)
    for _ in range(3):
        h.advance(h.now + 10.0)
        (ping,) = h.exchanges()
        assert body_of(ping)["method"] == "ping"
        h.reply_status(ping, 503)  # no need to wait for the ping's timeout
    (lost,) = h.take_events(Disconnected)
    assert "stopped answering pings" in str(lost.error)
    assert h.now == 30.0


# ------------------------------------------------------------------ message order (issue 24 B)


def test_no_request_goes_out_before_the_server_took_notifications_initialized() -> None:
    # Lifecycle § Initialization: the client sends no request before initialized. Over
    # HTTP+SSE each message is a POST of its own: a request started before the
    # notification's 202 could reach the server first, on another connection.
    h = harness()
    cid = h.conn.start_call("tools/list", now=0.0)
    stream = open_stream(h)
    h.conn.exchange_head(stream.xid, 200, SSE_HEAD, 0.0)
    h.conn.exchange_data(stream.xid, sse_event("/messages?sid=1", event="endpoint"), 0.0)
    (init,) = h.exchanges()
    # The answer may come on the stream before the POST's own 202: the notification
    # waits for that head too.
    h.conn.exchange_data(stream.xid, sse_event(init_result(body_of(init)["id"])), 0.0)
    assert h.exchanges() == []
    h.reply_status(init, 202)
    (initialized,) = h.exchanges()
    assert body_of(initialized)["method"] == "notifications/initialized"
    h.advance(5.0)  # time passing changes nothing: the head is what is waited for
    assert h.exchanges() == []
    assert h.conn.state is ConnectionState.HANDSHAKING
    h.reply_status(initialized, 202)
    assert [type(e) for e in h.take_events() if not isinstance(e, Diagnostic)] == [Connected]
    (post,) = h.exchanges()
    assert body_of(post)["method"] == "tools/list"
    h.reply_status(post, 202)
    h.conn.exchange_data(stream.xid, sse_event(result(body_of(post)["id"], {"tools": []})), 5)
    assert h.take_events()[-1] == CallSucceeded(cid, "tools/list", {"tools": []})


def test_a_refused_notifications_initialized_fails_the_connect() -> None:
    h = harness()
    cid = h.conn.start_call("tools/list", now=0.0)
    stream = open_stream(h)
    h.conn.exchange_head(stream.xid, 200, SSE_HEAD, 0.0)
    h.conn.exchange_data(stream.xid, sse_event("/messages?sid=1", event="endpoint"), 0.0)
    (init,) = h.exchanges()
    h.reply_status(init, 202)
    h.conn.exchange_data(stream.xid, sse_event(init_result(body_of(init)["id"])), 0.0)
    (initialized,) = h.exchanges()
    h.reply_status(initialized, 400, b"session not found")
    failed, call = h.take_events(ConnectFailed, CallFailed)
    assert isinstance(failed, ConnectFailed) and isinstance(failed.error, ServerError)
    assert call.call_id == cid
    assert [x for x in h.exchanges() if x.method == "POST"] == []  # tools/list never went


def test_posts_go_one_at_a_time_in_the_order_they_were_sent() -> None:
    h = harness(retries=0)
    stream = connect_legacy(h)
    cids = [h.conn.start_call(m, now=0.0) for m in ("tools/list", "prompts/list", "ping")]
    h.conn.exchange_data(stream.xid, sse_event(b'{"jsonrpc":"2.0","id":7,"method":"ping"}'), 0)
    h.conn.answer(7, {}, now=0.0)  # the host's answer: a message like the others
    order: list[str] = []
    # Each head lets the next go: a 202, an error status, a failed exchange alike.
    outcomes = iter(["202", "400", "failed", "202"])
    while True:
        started = h.exchanges()
        if not started:
            break
        (post,) = started
        msg = body_of(post)
        order.append(msg.get("method") or f"answer {msg['id']}")
        outcome = next(outcomes)
        if outcome == "failed":
            h.conn.exchange_failed(post.xid, ExchangeFailure("network", "reset"), 0.0)
        else:
            h.reply_status(post, int(outcome), b"" if outcome == "202" else b"no")
    assert order == ["tools/list", "prompts/list", "ping", "answer 7"]
    failed = {e.call_id for e in h.take_events(CallFailed)}
    assert failed == {cids[1], cids[2]}


def test_a_post_whose_call_ended_lets_the_next_go() -> None:
    # A request that times out before its POST's head: its exchange is dropped, and
    # what was queued behind it is not held for ever.
    h = harness(retries=0)
    connect_legacy(h)
    h.conn.start_call("tools/list", now=0.0, timeout=1.0)
    h.conn.start_call("prompts/list", now=0.0)
    (_first,) = h.exchanges()  # its head never comes
    h.advance(1.0)
    methods = [body_of(x)["method"] for x in h.exchanges()]
    assert methods[0] == "prompts/list"


def test_close_sends_what_is_still_queued() -> None:
    h = harness()
    stream = connect_legacy(h)
    h.conn.start_call("tools/list", now=0.0)
    (_post,) = h.exchanges()  # its head never comes
    for rid in (3, 4):
        request = f'{{"jsonrpc":"2.0","id":{rid},"method":"ping"}}'.encode()
        h.conn.exchange_data(stream.xid, sse_event(request), 0)
    h.take_events()
    h.conn.close(0.0)
    h.advance(0.5)
    refusals = [body_of(x) for x in h.exchanges()]
    assert [(r["id"], r["error"]["code"]) for r in refusals] == [(3, -32000), (4, -32000)]
    assert h.take_frames()[-1] == CloseTransport(graceful=True)
