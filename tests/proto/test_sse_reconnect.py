"""SSE-5: an HTTP+SSE connection lost (keep-alive pings unanswered, the event stream
ended or broken) is re-established in the background with jittered exponential
backoff, at most 5 attempts, no delay above 30 s; the host's next request is not what
brings it back. Pure: time is a number, the jitter a value handed in."""

from __future__ import annotations

import pytest
from _machine_driver import SSE_HEAD, Harness, body_of, init_result, result, sse_event

from mcp_proto import deprecations
from mcp_proto.config import sse_config
from mcp_proto.connection import (
    CallSucceeded,
    Connected,
    ConnectFailed,
    ConnectionState,
    Diagnostic,
    Disconnected,
    ExchangeFailure,
    OpenTransport,
    StartExchange,
)
from mcp_proto.connection._reconnect import (
    RECONNECT_ATTEMPTS,
    BackgroundReconnect,
    worth_reconnecting,
)
from mcp_proto.errors import ConnectionError, TransportError, UnauthorizedError
from mcp_proto.http import MAX_RECONNECT_DELAY

URL = "http://127.0.0.1:9/sse"


@pytest.fixture(autouse=True)
def _fresh_notices() -> None:
    deprecations.reset()


# ------------------------------------------------------------------ the policy


def test_the_delays_double_from_the_base_and_stop_at_30s() -> None:
    policy = BackgroundReconnect()
    delays = []
    now = 100.0
    while (at := policy.next_attempt(now, 4.0, 0.0)) is not None:
        delays.append(at - now)
        now = at
    assert delays == [4.0, 8.0, 16.0, 30.0, 30.0]
    assert len(delays) == RECONNECT_ATTEMPTS
    assert not policy.running and policy.at is None  # given up: the run is over


def test_the_jitter_is_the_value_handed_in_and_never_passes_the_cap() -> None:
    policy = BackgroundReconnect()
    assert policy.next_attempt(0.0, 1.0, 0.5) == pytest.approx(1.125)  # +25% * 0.5
    for _ in range(3):
        policy.next_attempt(0.0, 1.0, 0.999)
    assert policy.at is not None and policy.at <= MAX_RECONNECT_DELAY
    # due() takes the attempt once.
    assert not policy.due(policy.at - 0.01)
    assert policy.due(policy.at)
    assert policy.at is None and policy.running


def test_refusals_are_not_retried() -> None:
    assert worth_reconnecting(ConnectionError("stream ended"))
    assert worth_reconnecting(TransportError("reset"))
    assert not worth_reconnecting(UnauthorizedError("401"))


# ------------------------------------------------------------------ the machine


def harness(**kwargs: object) -> Harness:
    kwargs.setdefault("ping", 10.0)
    kwargs.setdefault("retry_backoff", 1.0)
    return Harness(sse_config(URL, **kwargs), jitter=0.0)  # type: ignore[arg-type]


def establish(h: Harness, sid: int = 1) -> StartExchange:
    """Answer an opened transport as an HTTP+SSE server: (the event stream)."""
    h.conn.transport_opened(h.now)
    (stream,) = h.exchanges()
    assert stream.method == "GET"
    h.conn.exchange_head(stream.xid, 200, SSE_HEAD, h.now)
    h.conn.exchange_data(stream.xid, sse_event(f"/messages?sid={sid}", event="endpoint"), h.now)
    (init,) = h.exchanges()
    h.reply_status(init, 202)
    h.conn.exchange_data(stream.xid, sse_event(init_result(body_of(init)["id"])), h.now)
    (initialized,) = h.exchanges()
    h.reply_status(initialized, 202)
    return stream


def connected(h: Harness) -> StartExchange:
    h.conn.connect(h.now)
    assert h.take_frames() == [OpenTransport()]
    stream = establish(h)
    assert [type(e) for e in h.take_events() if not isinstance(e, Diagnostic)] == [Connected]
    return stream


def miss_three_pings(h: Harness) -> None:
    """The server stops answering: three keep-alive pings go unanswered."""
    for _ in range(3):
        deadline = h.conn.next_deadline()
        assert deadline is not None
        h.advance(deadline)
        for post in h.exchanges():
            h.reply_status(post, 202)  # taken, never answered on the stream
        h.advance(h.now + 25.0 - 1e-9)  # just before the ping's timeout...
        h.advance(h.now + 1e-9)  # ...and at it
        if h.take_events(Disconnected):
            return
    raise AssertionError("not disconnected after three missed pings")


def test_missed_pings_reconnect_in_the_background_once_the_server_is_back() -> None:
    h = harness()
    connected(h)
    miss_three_pings(h)
    frames = h.take_frames()
    assert OpenTransport() not in frames  # not at once: after the first delay
    lost_at = h.now
    assert h.conn.next_deadline() == pytest.approx(lost_at + 1.0)
    h.advance(lost_at + 1.0)
    # No request of the host: the machine opens the transport itself.
    assert OpenTransport() in h.take_frames()
    assert h.conn.state is ConnectionState.OPENING
    establish(h, sid=2)
    events = h.take_events()
    assert [type(e) for e in events if not isinstance(e, Diagnostic)] == [Connected]
    assert any("reconnected" in e.message for e in events if isinstance(e, Diagnostic))
    # Ready, with keep-alive again; the background run is over.
    assert h.conn.next_deadline() == pytest.approx(h.now + 10.0)
    h.conn.start_call("tools/list", now=h.now)
    (post,) = h.exchanges()
    assert post.url == "http://127.0.0.1:9/messages?sid=2"
    h.reply_status(post, 202)


def test_failed_attempts_back_off_and_stop_after_five() -> None:
    h = harness(retry_backoff=4.0)
    stream = connected(h)
    h.conn.exchange_end(stream.xid, h.now)  # the server closed the event stream
    assert h.take_events(Disconnected)
    starts = []
    diagnostics: list[Diagnostic] = []
    for _ in range(RECONNECT_ATTEMPTS):
        deadline = h.conn.next_deadline()
        assert deadline is not None
        starts.append(deadline)
        h.advance(deadline)
        assert OpenTransport() in h.take_frames()
        h.conn.transport_failed(TransportError("connection refused"), h.now)
        events = h.take_events()
        assert [type(e) for e in events if not isinstance(e, Diagnostic)] == [ConnectFailed]
        diagnostics += [e for e in events if isinstance(e, Diagnostic)]
    gaps = [b - a for a, b in zip([0.0, *starts], starts, strict=False)]
    assert gaps == [4.0, 8.0, 16.0, 30.0, 30.0]
    assert h.conn.next_deadline() is None  # given up
    warnings = [e.message for e in diagnostics if e.level == "warning"]
    assert any("after 5 attempts" in w for w in warnings)
    h.advance(h.now + 1000.0)
    assert OpenTransport() not in h.take_frames()
    # The host's next request connects again, as before.
    h.conn.start_call("tools/list", now=h.now)
    assert OpenTransport() in h.take_frames()


def test_an_attempt_that_succeeds_starts_the_count_over() -> None:
    h = harness(ping=None)
    stream = connected(h)
    h.conn.exchange_failed(stream.xid, ExchangeFailure("network"), h.now)
    h.advance(h.conn.next_deadline() or h.now)
    h.take_frames()
    h.conn.transport_failed(TransportError("refused"), h.now)  # attempt 1 fails
    h.advance(h.conn.next_deadline() or h.now)  # attempt 2, 2 s later
    h.take_frames()
    stream = establish(h)
    h.take_events()
    h.conn.exchange_end(stream.xid, h.now)  # lost again
    first = h.conn.next_deadline()
    assert first == pytest.approx(h.now + 1.0)  # the first delay again


def test_the_host_closing_cancels_the_background_run() -> None:
    h = harness()
    stream = connected(h)
    h.conn.exchange_end(stream.xid, h.now)
    assert h.conn.next_deadline() is not None
    h.conn.close(h.now)
    h.take_frames()
    assert h.conn.next_deadline() is None
    h.advance(h.now + 100.0)
    assert OpenTransport() not in h.take_frames()


def test_a_refusal_is_not_retried_in_the_background() -> None:
    h = harness()
    stream = connected(h)
    h.conn.exchange_end(stream.xid, h.now)
    h.advance(h.conn.next_deadline() or h.now)
    h.take_frames()
    h.conn.transport_opened(h.now)
    (get,) = h.exchanges()
    h.reply_status(get, 401, headers=[("WWW-Authenticate", 'Bearer realm="x"')])
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, UnauthorizedError)
    assert h.conn.next_deadline() is None


def test_a_call_after_the_reconnect_is_answered() -> None:
    h = harness(ping=None)
    stream = connected(h)
    h.conn.exchange_end(stream.xid, h.now)
    h.advance(h.conn.next_deadline() or h.now)
    h.take_frames()
    stream = establish(h, sid=3)
    cid = h.conn.start_call("tools/list", now=h.now)
    (post,) = h.exchanges()
    h.reply_status(post, 202)
    h.conn.exchange_data(stream.xid, sse_event(result(body_of(post)["id"], {"tools": []})), h.now)
    assert h.take_events()[-1] == CallSucceeded(cid, "tools/list", {"tools": []})
