"""The connection machine over stdio: handshake, calls, progress, timeouts, server
requests, end of stream, retries and close. Pure: time is a number."""

from __future__ import annotations

import pytest
from _machine_driver import JITTER_R, Harness, init_result, notification, request, result
from _proto_support import error

from mcp_proto.config import stdio_config
from mcp_proto.connection import (
    CallFailed,
    CallProgress,
    CallSucceeded,
    Closed,
    CloseTransport,
    Connected,
    ConnectFailed,
    ConnectionState,
    Diagnostic,
    Disconnected,
    LogMessage,
    OpenTransport,
    ServerRequest,
    Write,
)
from mcp_proto.connection._stdio import EARLY_BUDGET
from mcp_proto.errors import (
    CapabilityError,
    ConnectionError,
    IncompatibleServerError,
    LineTooLongError,
    LocalProtocolError,
    RequestTimeoutError,
    ServerError,
)
from mcp_proto.http import backoff_delay
from mcp_proto.limits import Limits


def harness(**kwargs: object) -> Harness:
    limits = kwargs.pop("limits", None)
    return Harness(stdio_config(["srv"], **kwargs), limits=limits)  # type: ignore[arg-type]


def test_handshake_opens_then_initializes_then_notifies() -> None:
    h = harness()
    h.conn.connect(0.0)
    assert h.conn.state is ConnectionState.OPENING
    assert h.take_frames() == [OpenTransport()]
    h.conn.transport_opened(0.0)
    (init,) = h.written()
    assert init["method"] == "initialize"
    assert init["params"]["clientInfo"] == {"name": "machine-test", "version": "1.0"}
    assert h.conn.state is ConnectionState.HANDSHAKING
    assert h.conn.next_deadline() == 15.0  # stdio_config's read_timeout
    h.feed(init_result(init["id"]))
    assert [m["method"] for m in h.written()] == ["notifications/initialized"]
    (connected,) = h.take_events()
    assert isinstance(connected, Connected)
    assert connected.info.protocol_version == "2025-11-25"
    assert h.conn.is_connected and h.conn.server == connected.info
    assert h.conn.next_deadline() is None


def test_connect_is_idempotent_while_connecting() -> None:
    h = harness()
    h.conn.connect(0.0)
    h.conn.connect(0.0)
    assert h.take_frames() == [OpenTransport()]


def test_a_call_before_connect_connects_and_is_sent_once_ready() -> None:
    h = harness()
    cid = h.conn.start_call("tools/list", now=0.0)
    assert h.take_frames() == [OpenTransport()]
    h.conn.transport_opened(0.0)
    (init,) = h.written()
    h.feed(init_result(init["id"]))
    initialized, call = h.written()
    assert initialized["method"] == "notifications/initialized"
    assert call["method"] == "tools/list"
    h.feed(result(call["id"], {"tools": []}))
    events = h.take_events()
    assert [type(e) for e in events] == [Connected, CallSucceeded]
    assert events[1] == CallSucceeded(cid, "tools/list", {"tools": []})
    assert h.conn.pending_count == 0


def test_a_round_started_without_flush_goes_out_as_one_write() -> None:
    h = harness()
    h.connect_stdio()
    ids = [h.conn.start_call("ping", now=0.0, flush=False) for _ in range(3)]
    assert h.take_frames() == []  # held in the outbox
    h.conn.flush(0.0)
    (frame,) = h.take_frames()
    assert isinstance(frame, Write) and len(frame.messages) == 3
    h.frames.append(frame)
    sent = h.written()
    h.feed(*(result(m["id"], {}) for m in sent))
    assert h.take_events() == [CallSucceeded(cid, "ping", {}) for cid in ids]


def test_progress_events_come_before_the_result() -> None:
    h = harness()
    h.connect_stdio()
    cid = h.conn.start_call("tools/call", {"name": "slow"}, now=0.0, progress=True)
    (call,) = h.written()
    token = call["params"]["_meta"]["progressToken"]
    progress = [
        notification("notifications/progress", {"progressToken": token, "progress": i, "total": 3})
        for i in (1, 2, 3)
    ]
    h.feed(*progress, result(call["id"], {"content": []}))
    events = h.take_events()
    assert events == [
        CallProgress(cid, 1.0, 3.0, None),
        CallProgress(cid, 2.0, 3.0, None),
        CallProgress(cid, 3.0, 3.0, None),
        CallSucceeded(cid, "tools/call", {"content": []}),
    ]


def test_timeout_fails_the_call_and_sends_cancelled() -> None:
    h = harness()
    h.connect_stdio()
    cid = h.conn.start_call("tools/call", {"name": "slow"}, now=1.0, timeout=5)
    (call,) = h.written()
    assert h.conn.next_deadline() == 6.0
    h.advance(5.999)
    assert h.take_events() == []
    h.advance(6.0)
    (failed,) = h.take_events()
    assert isinstance(failed, CallFailed) and failed.call_id == cid
    assert isinstance(failed.error, RequestTimeoutError)
    (cancelled,) = h.written()
    assert cancelled["method"] == "notifications/cancelled"
    assert cancelled["params"] == {"requestId": call["id"], "reason": "Request timed out"}
    # The late answer is discarded, not delivered twice.
    h.feed(result(call["id"], {}))
    assert [type(e).__name__ for e in h.take_events()] == ["MessageDiscarded"]


def test_a_server_request_is_answered() -> None:
    h = harness()
    h.connect_stdio()
    h.feed(request("s1", "roots/list"))
    (event,) = h.take_events()
    assert event == ServerRequest("s1", "roots/list", {})
    assert h.conn.unanswered_server_requests == 1
    h.conn.answer("s1", {"roots": []}, now=0.0)
    assert h.written() == [{"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}}]
    assert h.conn.unanswered_server_requests == 0


def test_an_error_response_fails_the_call_with_a_typed_error() -> None:
    h = harness(retries=3)
    h.connect_stdio()
    cid = h.conn.start_call("tools/list", now=0.0)
    (call,) = h.written()
    h.feed(error(call["id"], -32601, "no such method"))
    (failed,) = h.take_events()
    assert isinstance(failed, CallFailed) and failed.call_id == cid
    assert isinstance(failed.error, ServerError) and failed.error.code == -32601
    assert h.written() == []  # a JSON-RPC error is never retried


def test_eof_disconnects_and_fails_calls_in_flight() -> None:
    h = harness()
    h.connect_stdio()
    a = h.conn.start_call("tools/list", now=0.0)
    b = h.conn.start_call("tools/call", {"name": "x"}, now=0.0)
    h.written()
    h.conn.receive_eof(0.0, "exit status 1")
    events = h.take_events()
    assert isinstance(events[0], Disconnected)
    assert str(events[0].error) == "server 'srv' closed its output (exit status 1)"
    failed = {e.call_id: e for e in events[1:]}
    assert set(failed) == {a, b} and len(events) == 3
    assert all(isinstance(e.error, ConnectionError) for e in failed.values())
    assert h.take_frames() == [CloseTransport(graceful=False)]
    assert h.conn.state is ConnectionState.IDLE
    assert h.conn.pending_count == 0


def test_a_retry_after_eof_reconnects_first_and_tools_call_is_never_retried() -> None:
    h = harness(retries=2, retry_backoff=1.0)
    h.connect_stdio()
    listing = h.conn.start_call("tools/list", now=0.0)
    calling = h.conn.start_call("tools/call", {"name": "x"}, now=0.0)
    h.written()
    h.conn.receive_eof(0.0)
    events = h.take_events()
    assert [type(e) for e in events] == [Disconnected, Diagnostic, CallFailed]
    assert events[2].call_id == calling
    assert "retry 1 in" in events[1].message
    expected = backoff_delay(1, 1.0, jitter=JITTER_R * 0.25)
    assert h.conn.next_deadline() == expected
    assert h.take_frames() == [CloseTransport(graceful=False)]
    h.advance(expected)
    # The retry of a call whose transport died reconnects first.
    assert h.take_frames() == [OpenTransport()]
    h.conn.transport_opened(h.now)
    (init,) = h.written()
    h.feed(init_result(init["id"]))
    _initialized, resent = h.written()
    assert resent["method"] == "tools/list"
    h.feed(result(resent["id"], {"tools": []}))
    assert h.take_events()[-1] == CallSucceeded(listing, "tools/list", {"tools": []})


def test_close_refuses_unanswered_server_requests_after_the_grace() -> None:
    h = harness()
    h.connect_stdio()
    cid = h.conn.start_call("tools/list", now=0.0)
    h.written()
    h.feed(request(7, "sampling/createMessage", {"messages": []}))
    h.take_events()
    h.conn.close(1.0)
    assert h.conn.state is ConnectionState.CLOSING
    assert h.conn.next_deadline() == 1.5  # CLOSE_ANSWER_WAIT
    assert h.take_frames() == []
    h.advance(1.5)
    (refusal,) = h.written()
    assert refusal["id"] == 7 and refusal["error"]["code"] == -32000
    assert h.take_frames() == [CloseTransport(graceful=True)]
    (failed,) = h.take_events()
    assert isinstance(failed, CallFailed) and failed.call_id == cid
    assert isinstance(failed.error, ConnectionError)
    h.conn.transport_closed(1.6)
    assert h.take_events() == [Closed()]
    assert h.conn.state is ConnectionState.CLOSED
    # A handler's late answer is dropped.
    h.conn.answer(7, {}, now=2.0)
    assert h.written() == []


def test_close_finishes_as_soon_as_the_last_server_request_is_answered() -> None:
    h = harness()
    h.connect_stdio()
    h.feed(request(7, "roots/list"))
    h.take_events()
    h.conn.close(1.0)
    h.conn.answer(7, {"roots": []}, now=1.1)
    assert h.written() == [{"jsonrpc": "2.0", "id": 7, "result": {"roots": []}}]
    assert h.take_frames() == [CloseTransport(graceful=True)]
    assert h.conn.next_deadline() is None


def test_close_of_an_idle_connection_is_immediate_and_a_later_call_reopens() -> None:
    h = harness()
    h.conn.close(0.0)
    assert h.take_events() == [Closed()]
    assert h.take_frames() == []
    h.conn.start_call("ping", now=1.0)
    assert h.take_frames() == [OpenTransport()]


def test_caller_mistakes_raise_and_start_nothing() -> None:
    h = harness()
    h.connect_stdio(caps={})
    with pytest.raises(ValueError):
        h.conn.start_call("ping", now=0.0, timeout=-1)
    with pytest.raises(ValueError):
        h.conn.start_call("ping", now=0.0, timeout=float("nan"))
    with pytest.raises(ValueError):
        h.conn.start_call("ping", ["not", "a", "dict"], now=0.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        h.conn.start_call("ping", {"_meta": 3}, now=0.0)
    with pytest.raises(CapabilityError):
        h.conn.start_call("tools/list", now=0.0)
    with pytest.raises(ValueError):
        h.conn.start_call("ping", {"x": object()}, now=0.0)
    assert h.written() == [] and h.take_events() == []
    assert h.conn.pending_count == 0


def test_params_that_cannot_be_encoded_raise_before_connecting() -> None:
    h = harness()
    with pytest.raises(ValueError):
        h.conn.start_call("ping", {"x": object()}, now=0.0)
    assert h.take_frames() == [] and h.conn.pending_count == 0


def test_at_most_max_pending_requests_calls() -> None:
    h = harness(limits=Limits(max_pending_requests=2))
    h.connect_stdio()
    h.conn.start_call("ping", now=0.0)
    h.conn.start_call("ping", now=0.0)
    with pytest.raises(LocalProtocolError):
        h.conn.start_call("ping", now=0.0)
    assert len(h.written()) == 2


def test_an_oversized_line_disconnects_with_line_too_long() -> None:
    h = harness(max_line_size=1024)
    h.connect_stdio()
    cid = h.conn.start_call("ping", now=0.0)
    h.written()
    h.conn.receive_data(b"x" * 2000, 0.0)
    events = h.take_events()
    disconnected = next(e for e in events if isinstance(e, Disconnected))
    assert isinstance(disconnected.error, LineTooLongError)
    failed = [e for e in events if isinstance(e, CallFailed)]
    assert [e.call_id for e in failed] == [cid]
    assert CloseTransport(graceful=False) in h.take_frames()


def test_open_failure_is_connect_failed_and_fails_the_waiting_calls() -> None:
    h = harness()
    cid = h.conn.start_call("tools/list", now=0.0)
    h.take_frames()
    boom = ConnectionError("cannot start 'srv': No such file")
    h.conn.transport_failed(boom, 0.0)
    events = h.take_events()
    assert events == [ConnectFailed(boom), CallFailed(cid, "tools/list", boom)]
    assert h.take_frames() == []  # nothing was opened: nothing to close
    assert h.conn.state is ConnectionState.IDLE


def test_an_unsupported_version_fails_the_connect_and_closes() -> None:
    h = harness(retries=3)
    cid = h.conn.start_call("tools/list", now=0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    (init,) = h.written()
    h.feed(init_result(init["id"], version="1999-01-01"))
    events = h.take_events()
    assert isinstance(events[0], ConnectFailed)
    assert isinstance(events[0].error, IncompatibleServerError)
    # The answer proves an MCP server that cannot be used: never retried.
    assert events[1] == CallFailed(cid, "tools/list", events[0].error)
    assert h.take_frames() == [CloseTransport(graceful=False)]


def test_handshake_timeout_mentions_unusable_output() -> None:
    h = harness()
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    h.written()
    h.feed(b"Welcome to my server!")
    h.advance(15.0)
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, RequestTimeoutError)
    assert "Welcome to my server!" in str(failed.error)
    assert h.conn.first_unusable == "Welcome to my server!"


def test_eof_during_the_handshake_mentions_unusable_output() -> None:
    h = harness()
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    h.written()
    h.feed(b"Traceback (most recent call last):")
    h.conn.receive_eof(0.0, "exit status 1")
    (failed,) = h.take_events(ConnectFailed)
    assert "exit status 1" in str(failed.error)
    assert "Traceback" in str(failed.error)


def test_a_handshake_answer_read_with_the_end_of_output_connects_then_disconnects() -> None:
    """The answer to initialize comes in the same read as the end of the output (its
    last line without a newline; found by fuzz/fuzz_connection.py): the answer is
    routed first, so the connection is ready, then lost like any ready one. Before,
    the loss closed the session under a READY connection: a queued notification then
    made ``receive_eof`` raise, and every later call failed instead of reconnecting."""
    h = Harness(stdio_config(["srv"]), capabilities={"roots": {"listChanged": True}})
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    (init,) = h.written()
    h.conn.notify("notifications/roots/list_changed", None, now=0.0)
    h.conn.receive_data(init_result(init["id"]), 0.0)  # no newline: held by the framer
    h.conn.receive_eof(0.0, "exit status 0")  # must not raise
    assert [type(e) for e in h.take_events(Connected, Disconnected)] == [Connected, Disconnected]
    # The notification waits for the next process, which is started at once.
    assert h.conn.state is ConnectionState.OPENING
    assert h.take_frames()[-1] == OpenTransport()
    call = h.conn.start_call("tools/list", now=1.0)  # waits too: no error
    h.conn.transport_opened(1.0)
    (init,) = h.written()
    h.feed(init_result(init["id"]))
    sent = h.written()
    assert [m["method"] for m in sent] == [
        "notifications/initialized",
        "notifications/roots/list_changed",
        "tools/list",
    ]
    h.feed(result(sent[-1]["id"], {"tools": []}))
    (done,) = h.take_events(CallSucceeded)
    assert done.call_id == call


def test_cancel_call_fails_it_and_sends_cancelled() -> None:
    h = harness()
    h.connect_stdio()
    cid = h.conn.start_call("tools/call", {"name": "x"}, now=0.0)
    (call,) = h.written()
    h.conn.cancel_call(cid, "user gave up", now=1.0)
    (failed,) = h.take_events()
    assert failed.call_id == cid and "user gave up" in str(failed.error)
    (cancelled,) = h.written()
    assert cancelled["params"] == {"requestId": call["id"], "reason": "user gave up"}
    h.conn.cancel_call(cid, "again", now=1.0)  # ended: ignored
    assert h.take_events() == []


def test_notifications_wait_for_the_connection() -> None:
    h = harness()
    h.conn.notify("notifications/roots/list_changed", now=0.0, only_if_connected=True)
    assert h.take_frames() == []
    h.conn.notify("notifications/custom", {"a": 1}, now=0.0)
    assert h.take_frames() == [OpenTransport()]
    h.conn.transport_opened(0.0)
    (init,) = h.written()
    h.feed(init_result(init["id"]))
    initialized, custom = h.written()
    assert initialized["method"] == "notifications/initialized"
    assert custom == {"jsonrpc": "2.0", "method": "notifications/custom", "params": {"a": 1}}


def test_zero_copy_reads_through_get_buffer() -> None:
    h = harness()
    h.connect_stdio()
    cid = h.conn.start_call("ping", now=0.0)
    (call,) = h.written()
    data = result(call["id"], {}) + b"\n"
    with h.conn.get_buffer(len(data)) as view:
        view[: len(data)] = data
    h.conn.buffer_updated(len(data), 0.0)
    assert h.take_events() == [CallSucceeded(cid, "ping", {})]
    h.conn.buffer_updated(0, 0.0)
    assert isinstance(h.take_events()[0], Disconnected)


def test_close_while_opening_ends_the_waiting_call_and_does_not_reopen() -> None:
    # Found by the stateful test: an ended call left in the queue reopened the
    # transport once the close completed.
    h = harness()
    cid = h.conn.start_call("tools/list", now=0.0)
    assert h.take_frames() == [OpenTransport()]
    h.conn.close(0.0)
    assert h.take_frames() == [CloseTransport(graceful=True)]
    (failed,) = h.take_events()
    assert failed.call_id == cid and isinstance(failed.error, ConnectionError)
    h.conn.transport_closed(0.1)
    assert h.take_events() == [Closed()]
    assert h.take_frames() == []
    assert h.conn.state is ConnectionState.CLOSED


def test_eof_during_the_close_grace_finishes_the_close_once() -> None:
    h = harness()
    h.connect_stdio()
    h.feed(request(7, "roots/list"))
    h.take_events()
    h.conn.close(0.0)
    h.conn.receive_eof(0.1)
    # The process is gone: no refusal is written to it.
    assert h.take_frames() == [CloseTransport(graceful=False)]
    h.conn.receive_eof(0.2)
    h.advance(1.0)
    assert h.take_frames() == []
    h.conn.transport_closed(1.0)
    assert h.take_events() == [Closed()]


def test_a_server_request_is_answered_once() -> None:
    h = harness()
    h.connect_stdio()
    h.feed(request("s1", "roots/list"))
    h.take_events()
    h.conn.refuse("s1", -1, "no", now=0.0)
    h.conn.answer("s1", {"roots": []}, now=0.0)
    h.conn.answer("never-asked", {}, now=0.0)
    (only_answer,) = h.written()
    assert only_answer["error"]["code"] == -1


def test_lines_before_an_oversized_one_are_delivered_first() -> None:
    h = harness(max_line_size=1024)
    h.connect_stdio()
    done = h.conn.start_call("ping", now=0.0)
    waiting = h.conn.start_call("tools/list", now=0.0)
    first, _ = h.written()
    h.conn.receive_data(result(first["id"], {}) + b"\n" + b"x" * 2000, 0.0)
    events = h.take_events()
    assert events[0] == CallSucceeded(done, "ping", {})
    assert isinstance(events[1], Diagnostic)  # the line too long, for the log
    assert isinstance(events[2], Disconnected)
    assert [e.call_id for e in events[3:]] == [waiting]


def test_a_queued_call_the_server_cannot_serve_fails_with_capability_error() -> None:
    h = harness()
    cid = h.conn.start_call("tools/list", now=0.0)  # before the capabilities are known
    h.take_frames()
    h.conn.transport_opened(0.0)
    (init,) = h.written()
    h.feed(init_result(init["id"], caps={}))
    assert [m["method"] for m in h.written()] == ["notifications/initialized"]
    events = h.take_events()
    assert isinstance(events[0], Connected)
    assert events[1].call_id == cid and isinstance(events[1].error, CapabilityError)


def test_progress_goes_only_to_calls_that_asked_for_it_with_its_message() -> None:
    h = harness()
    h.connect_stdio()
    quiet = h.conn.start_call(
        "tools/call", {"name": "x", "_meta": {"progressToken": "mine"}}, now=0
    )
    loud = h.conn.start_call("tools/call", {"name": "y"}, now=0.0, progress=True)
    q, loud_msg = h.written()
    token = loud_msg["params"]["_meta"]["progressToken"]
    h.feed(
        notification("notifications/progress", {"progressToken": "mine", "progress": 1}),
        notification(
            "notifications/progress", {"progressToken": token, "progress": 2, "message": "half"}
        ),
        result(q["id"], {}),
        result(loud_msg["id"], {}),
    )
    assert h.take_events() == [
        CallProgress(loud, 2.0, None, "half"),
        CallSucceeded(quiet, "tools/call", {}),
        CallSucceeded(loud, "tools/call", {}),
    ]


def test_introspection_and_messages() -> None:
    h = harness()
    assert h.conn.era == "legacy" and h.conn.server is None and not h.conn.is_connected
    h.connect_stdio()
    h.feed(request(1, "roots/list"))
    h.take_events()
    h.conn.close(0.0)
    with pytest.raises(LocalProtocolError, match="server 'srv' is closing"):
        h.conn.start_call("ping", now=0.0)
    with pytest.raises(LocalProtocolError, match="server 'srv' is closing"):
        h.conn.connect(0.0)
    with pytest.raises(LocalProtocolError, match="server 'srv' is closing"):
        h.conn.notify("notifications/x", now=0.0)


def test_a_retry_diagnostic_is_info_and_a_closed_calls_error_says_so() -> None:
    h = harness(retries=1)
    h.connect_stdio()
    a = h.conn.start_call("tools/list", now=0.0)
    h.written()
    h.conn.receive_eof(0.0)
    (diag,) = h.take_events(Diagnostic)
    assert diag.level == "info"
    assert diag.message.startswith("server 'srv': tools/list failed (")
    h.conn.close(0.0)
    (failed,) = h.take_events(CallFailed)
    assert failed.call_id == a
    assert str(failed.error) == "server 'srv': the client closed the connection"


def test_the_limits_reach_the_session() -> None:
    h = harness(limits=Limits(max_log_message=8))
    h.connect_stdio()
    h.feed(notification("notifications/message", {"level": "info", "data": "a" * 100}))
    (log,) = h.take_events(LogMessage)
    assert len(log.text) < 40


def test_a_queued_call_whose_progress_token_is_taken_fails_alone() -> None:
    h = harness()
    params = {"name": "x", "_meta": {"progressToken": "t"}}
    first = h.conn.start_call("tools/call", params, now=0.0, progress=True)
    second = h.conn.start_call("tools/call", params, now=0.0, progress=True)
    h.take_frames()
    h.conn.transport_opened(0.0)
    (init,) = h.written()
    h.feed(init_result(init["id"]))
    _initialized, sent = h.written()
    assert sent["params"]["_meta"]["progressToken"] == "t"
    (failed,) = h.take_events(CallFailed)
    assert failed.call_id == second and isinstance(failed.error, LocalProtocolError)
    assert "cannot be sent" in str(failed.error) and "already in use" in str(failed.error)
    assert h.conn.pending_count == 1 and first in h.conn._calls.calls


@pytest.mark.parametrize("protocol", ["auto", "modern", "legacy"])
def test_a_server_that_prints_its_usage_and_exits_is_quoted(protocol: str) -> None:
    # Issue 24 C: during the discover probe the loss failed the connect without what
    # the server wrote; the user saw "closed its output (exit code 2)" and nothing else.
    h = Harness(stdio_config(["srv"], protocol=protocol), probe=True)
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    h.written()
    h.feed(b"usage: srv [--port N] --token TOKEN")
    h.conn.receive_eof(0.0, "exit code 2")
    (failed,) = h.take_events(ConnectFailed)
    assert str(failed.error) == (
        "server 'srv' closed its output (exit code 2); the server wrote output that is "
        "not JSON-RPC, first: [usage: srv [--port N] --token TOKEN]"
    )
    assert type(failed.error) is ConnectionError


def test_a_silent_server_on_auto_names_both_waits() -> None:
    # Issue 24 D: the probe's wait and then initialize's: the message said only one of
    # them, while the user waited both.
    h = Harness(stdio_config(["srv"], read_timeout=3.0), probe=True)
    h.conn.connect(0.0)
    h.take_frames()
    h.conn.transport_opened(0.0)
    assert [m["method"] for m in h.written()] == ["server/discover"]
    h.advance(3.0)
    assert [m["method"] for m in h.written()] == ["initialize"]
    h.advance(6.0)
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, RequestTimeoutError)
    assert str(failed.error) == (
        "initialize timed out (request 2); server/discover had gone unanswered for 3s "
        "before it (6s in all; protocol='legacy' skips that probe)"
    )


# A server's banner can be read before the driver reports the process started: the
# shells start the reader first (so no output is missed), and a shell script's
# `echo hello; exec python server.py` is out within the fork. Those lines are the
# server's first output; they are kept for the session and quoted like any other.


@pytest.mark.parametrize("probe", [False, True], ids=["legacy", "auto"])
def test_a_banner_read_before_the_transport_opened_is_quoted(probe: bool) -> None:
    h = Harness(stdio_config(["srv"], read_timeout=1.0), probe=probe)
    h.conn.connect(0.0)
    assert h.take_frames() == [OpenTransport()]
    h.feed(b"Listening on port 8080 (HTTP only)")
    h.conn.transport_opened(0.0)
    first = h.written()[0]
    assert first["method"] == ("server/discover" if probe else "initialize")
    h.advance(10.0)
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, RequestTimeoutError)
    assert "first: [Listening on port 8080 (HTTP only)]" in str(failed.error)
    assert h.conn.first_unusable == "Listening on port 8080 (HTTP only)"


def test_a_message_read_before_the_transport_opened_reaches_the_session() -> None:
    """A ping written before the client's first request comes after it, in the order
    the server wrote, and so does the end of the output: neither is dropped for
    arriving early."""
    h = harness()
    h.conn.connect(0.0)
    h.take_frames()
    h.feed(request(7, "ping"), b"usage: srv --token TOKEN")
    h.conn.receive_eof(0.0, "exit code 2")
    assert h.take_events() == [] and h.conn.state is ConnectionState.OPENING
    h.conn.transport_opened(0.0)
    ping, failed = h.take_events(ServerRequest, ConnectFailed)
    assert ping == ServerRequest(7, "ping", {})
    assert str(failed.error) == (
        "server 'srv' closed its output (exit code 2); the server wrote output that is "
        "not JSON-RPC, first: [usage: srv --token TOKEN]"
    )


def test_what_is_read_before_the_transport_opened_is_bounded() -> None:
    h = harness(read_timeout=1.0)
    h.conn.connect(0.0)
    h.take_frames()
    first, rest = b"x" * (EARLY_BUDGET + 10), b"y" * 1000
    h.feed(first, *[rest] * 100)
    (warning,) = h.take_events(Diagnostic)
    assert "before it was reported started" in warning.message
    h.conn.transport_opened(0.0)
    h.written()
    h.advance(5.0)
    (failed,) = h.take_events(ConnectFailed)
    assert "first: [xxx" in str(failed.error)
