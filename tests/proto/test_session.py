"""The per-server Session state machine: handshake, state table, responses, progress,
deadlines, cancellation, logging, capability gating (LIFE-1/2, STDIO-3, UT-7, PROG-1/2/5,
TIME-3, LOG-3/4, UT-10, CAP-1/2, HYG-1)."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from _proto_support import (
    ALL_CAPS,
    CLIENT_INFO,
    error,
    events,
    notification,
    ready_session,
    request,
    result,
    sent,
    wire,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    precondition,
    rule,
)

from mcp_proto import NEED_DATA
from mcp_proto.errors import (
    CapabilityError,
    ConnectionError,
    HeaderMismatchError,
    IncompatibleServerError,
    LocalProtocolError,
    MCPError,
    MissingRequiredClientCapabilityError,
    RemoteProtocolError,
    RequestTimeoutError,
    ServerError,
    TransportError,
    UnsupportedProtocolVersionError,
)
from mcp_proto.events import (
    LogMessage,
    MessageDiscarded,
    NotificationReceived,
    ProgressReceived,
    RequestFailed,
    ResponseReceived,
    ServerRequest,
)
from mcp_proto.limits import Limits
from mcp_proto.session import DISCARD_BACKLOG, REQUIRED_CAPABILITY, Session, State
from mcp_proto.types import Implementation
from mcp_proto.versions import LEGACY_VERSIONS


def new_session(**kwargs: Any) -> Session:
    kwargs.setdefault("capabilities", {"roots": {"listChanged": True}})
    return Session(client_info=CLIENT_INFO, **kwargs)


# ---------------------------------------------------------------- handshake (LIFE-1/2)


def test_handshake_happy_path() -> None:
    caps = {"roots": {"listChanged": True}, "sampling": {}}
    session = new_session(capabilities=caps)
    assert session.state is State.IDLE
    assert session.next_event() is NEED_DATA
    rid = session.start_handshake(now=100.0, timeout=30.0)
    assert session.state is State.INITIALIZING
    (init,) = sent(session)
    assert init == {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": caps,
            "clientInfo": {"name": "test-client", "version": "9.9.9"},
        },
    }
    assert session.next_deadline() == 130.0
    server_result = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {"listChanged": True}, "logging": {}},
        "serverInfo": {"name": "srv", "version": "2.0", "title": "Server"},
        "instructions": "Use the tools.",
    }
    session.receive_message(result(rid, server_result))
    (event,) = events(session)
    assert event == ResponseReceived(rid, "initialize", server_result)
    assert session.pending_count == 0
    info = session.complete_handshake(event.result)
    assert session.state is State.READY
    assert session.server is info
    assert info.protocol_version == "2025-11-25"
    assert info.protocol_era == "legacy"
    assert info.capabilities == server_result["capabilities"]
    assert info.server_info == Implementation(name="srv", version="2.0", title="Server")
    assert info.instructions == "Use the tools."
    assert info.has_capability("tools", "listChanged")
    assert not info.has_capability("prompts")
    # notifications/initialized is queued right away, without params.
    assert sent(session) == [{"jsonrpc": "2.0", "method": "notifications/initialized"}]


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
def test_each_legacy_version_accepted(version: str) -> None:
    session = ready_session(version=version)
    assert session.state is State.READY
    assert session.server is not None
    assert session.server.protocol_version == version


@pytest.mark.parametrize(
    "server_result",
    [
        {"protocolVersion": "1999-01-01", "capabilities": {}},
        {"protocolVersion": "2026-07-28", "capabilities": {}},  # not a handshake-era one
        {"protocolVersion": "2025-11-25 ", "capabilities": {}},
        {"capabilities": {}},
        {"protocolVersion": None},
        {"protocolVersion": 20251125},
        {"protocolVersion": ["2025-11-25"]},
        {"protocolVersion": {"v": "2025-11-25"}},
        [],
        "2025-11-25",
        None,
        42,
    ],
)
def test_refused_versions_raise_connection_error(server_result: Any) -> None:
    session = new_session()
    rid = session.start_handshake(now=0.0, timeout=None)
    sent(session)
    session.receive_message(result(rid, server_result))
    (event,) = events(session)
    with pytest.raises(ConnectionError) as info:
        session.complete_handshake(event.result)
    assert not isinstance(info.value, ServerError)
    # The typed fact the connect fallback and the user read: the revision the server
    # named, when it named one as a string (a mutation-run survivor without this).
    assert isinstance(info.value, IncompatibleServerError)
    named = server_result.get("protocolVersion") if isinstance(server_result, dict) else None
    assert info.value.protocol_version == (named if isinstance(named, str) else None)
    assert session.state is State.INITIALIZING  # the shell disconnects next
    assert session.server is None
    assert sent(session) == []  # no notifications/initialized


def test_refused_version_text_is_sanitised() -> None:
    session = new_session()
    session.start_handshake(now=0.0, timeout=None)
    with pytest.raises(ConnectionError) as info:
        session.complete_handshake({"protocolVersion": "\nFAKE LOG LINE" + "x" * 500})
    message = str(info.value)
    assert "\n" not in message
    assert "FAKE LOG LINE" in message
    assert len(message) < 400
    # Exactly 64 characters of the peer's repr are quoted (a mutation-run survivor).
    quoted = "'\\nFAKE LOG LINE" + "x" * 48
    assert message == (
        f"the server answered initialize with protocol version {quoted}... (truncated "
        "from 517 chars); this client speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05"
    )


def test_handshake_tolerates_malformed_optional_fields() -> None:
    session = new_session()
    session.start_handshake(now=0.0, timeout=None)
    info = session.complete_handshake(
        {
            "protocolVersion": "2025-06-18",
            "capabilities": ["tools"],
            "serverInfo": {"name": 5},
            "instructions": {"x": 1},
        }
    )
    assert info.capabilities == {}
    assert info.server_info is None
    assert info.instructions is None
    assert session.state is State.READY


def test_handshake_verbs_in_wrong_state() -> None:
    session = new_session()
    with pytest.raises(LocalProtocolError):
        session.complete_handshake({"protocolVersion": "2025-11-25"})
    session.start_handshake(now=0.0, timeout=None)
    with pytest.raises(LocalProtocolError):
        session.start_handshake(now=0.0, timeout=None)
    session.complete_handshake({"protocolVersion": "2025-11-25"})
    with pytest.raises(LocalProtocolError):
        session.complete_handshake({"protocolVersion": "2025-11-25"})
    with pytest.raises(LocalProtocolError):
        session.start_handshake(now=0.0, timeout=None)


def test_initialize_error_response() -> None:
    session = new_session()
    rid = session.start_handshake(now=0.0, timeout=None)
    session.receive_message(
        error(rid, -32602, "Unsupported protocol version", {"supported": ["x"]})
    )
    (event,) = events(session)
    assert isinstance(event, RequestFailed)
    assert event.method == "initialize"
    assert isinstance(event.error, ServerError)
    assert event.error.data == {"supported": ["x"]}


# ---------------------------------------------------------------- the state table


def session_in(state: State) -> Session:
    if state is State.IDLE:
        return new_session()
    if state is State.INITIALIZING:
        session = new_session()
        session.start_handshake(now=0.0, timeout=None)
        sent(session)
        return session
    session = ready_session()
    if state is State.CLOSED:
        session.connection_lost(TransportError("gone"))
        events(session)
    return session


# (state, method) -> allowed? Lifecycle § Initialization: only pings before the
# server answered initialize; nothing at all once closed.
TABLE = [
    (State.IDLE, "initialize", True),
    (State.IDLE, "ping", False),
    (State.IDLE, "tools/list", False),
    (State.INITIALIZING, "ping", True),
    (State.INITIALIZING, "initialize", False),
    (State.INITIALIZING, "tools/list", False),
    (State.INITIALIZING, "x/custom", False),
    (State.READY, "ping", True),
    (State.READY, "tools/list", True),
    (State.READY, "x/custom", True),
    (State.CLOSED, "ping", False),
    (State.CLOSED, "tools/list", False),
    (State.CLOSED, "initialize", False),
]


@pytest.mark.parametrize(("state", "method", "allowed"), TABLE)
def test_state_table(state: State, method: str, allowed: bool) -> None:
    session = session_in(state)
    assert session.state is state
    before = session.pending_count
    if allowed:
        rid = session.send_request(method, None, now=0.0, timeout=None)
        assert session.is_pending(rid)
        (msg,) = sent(session)
        assert msg["method"] == method and msg["id"] == rid
    else:
        with pytest.raises(LocalProtocolError):
            session.send_request(method, None, now=0.0, timeout=None)
        assert sent(session) == []
        assert session.pending_count == before
    assert session.state is state


def test_closed_session_refuses_notifications_and_drops_answers() -> None:
    session = session_in(State.CLOSED)
    with pytest.raises(LocalProtocolError):
        session.send_notification("notifications/roots/list_changed")
    session.send_response(5, {})
    session.send_error_response(5, -32601, "Method not found")
    assert sent(session) == []
    assert session.cancel_request(1, "x") is False


@pytest.mark.parametrize("state", list(State))
def test_connection_lost_from_every_state(state: State) -> None:
    session = session_in(state)
    session.connection_lost(TransportError("gone"))
    assert session.state is State.CLOSED
    session.connection_lost(TransportError("again"))  # idempotent
    assert session.state is State.CLOSED


def test_ping_while_initializing_is_answered() -> None:
    session = session_in(State.INITIALIZING)
    pid = session.send_request("ping", None, now=0.0, timeout=None)
    session.receive_message(result(pid, {}))
    assert events(session) == [ResponseReceived(pid, "ping", {})]
    assert session.state is State.INITIALIZING


def test_notifications_and_answers_allowed_before_ready() -> None:
    session = session_in(State.INITIALIZING)
    session.send_notification("notifications/x", {"a": 1})
    session.send_response("srv-1", {})
    session.send_error_response(7, -32601, "Method not found", {"m": "x"})
    assert sent(session) == [
        {"jsonrpc": "2.0", "method": "notifications/x", "params": {"a": 1}},
        {"jsonrpc": "2.0", "id": "srv-1", "result": {}},
        {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32601, "message": "Method not found", "data": {"m": "x"}},
        },
    ]


def test_request_ids_are_unique_and_increasing() -> None:
    session = ready_session()
    ids = [session.send_request("ping", None, now=0.0, timeout=None) for _ in range(50)]
    assert len(set(ids)) == 50
    assert ids == sorted(ids)
    assert [m["id"] for m in sent(session)] == ids


def test_max_pending_requests() -> None:
    session = ready_session(limits=Limits(max_pending_requests=3))
    for _ in range(3):
        session.send_request("ping", None, now=0.0, timeout=None)
    sent(session)
    with pytest.raises(LocalProtocolError):
        session.send_request("ping", None, now=0.0, timeout=None)
    assert sent(session) == []
    assert session.pending_count == 3


@pytest.mark.parametrize(
    ("timeout", "message"),
    [
        (1e300, "timeout must be at most 1000000000 seconds, got 1e+300"),
        (10**400, "timeout must be at most 1000000000 seconds, got an integer of 1329 bits"),
        (float("inf"), "timeout must be a finite number, got inf"),
        (float("nan"), "timeout must be a finite number, got nan"),
        (-1, "timeout must be non-negative, got -1"),
        (True, "timeout must be a number, got True"),
        ("5", "timeout must be a number, got '5'"),
    ],
)
def test_unusable_timeout_is_a_value_error_and_leaves_no_trace(timeout: Any, message: str) -> None:
    """A caller's timeout=1e300 used to reach the blocking shell's timed wait and end in
    a bare OverflowError there; 10**400 failed on ``now + timeout`` itself."""
    session = ready_session()
    with pytest.raises(ValueError) as info:
        session.send_request("ping", None, now=0.0, timeout=timeout)
    assert str(info.value) == message
    assert session.pending_count == 0
    assert session.next_deadline() is None
    assert sent(session) == []


def test_timeout_bounds_are_accepted() -> None:
    session = ready_session()
    session.send_request("ping", None, now=0.0, timeout=0)
    session.send_request("ping", None, now=0.0, timeout=10**9)
    assert session.next_deadline() == 0.0


def test_unserialisable_params_leave_no_trace() -> None:
    session = ready_session()
    with pytest.raises(TypeError):
        session.send_request(
            "tools/call",
            {"name": "t", "arguments": {"x": object()}, "_meta": {"progressToken": "tok"}},
            now=0.0,
            timeout=1.0,
        )
    assert session.pending_count == 0
    assert session.next_deadline() is None
    assert sent(session) == []
    # The token was not registered either: a request may use it now.
    rid = session.send_request(
        "tools/call", {"name": "t", "_meta": {"progressToken": "tok"}}, now=0.0, timeout=None
    )
    session.receive_message(
        notification("notifications/progress", {"progressToken": "tok", "progress": 1})
    )
    assert events(session) == [ProgressReceived(rid, 1.0, None, None)]


# ---------------------------------------------------------------- responses (STDIO-3, UT-7)


def test_response_routed_to_its_request() -> None:
    session = ready_session()
    a = session.send_request("tools/list", None, now=0.0, timeout=None)
    b = session.send_request("prompts/list", None, now=0.0, timeout=None)
    session.receive_message(result(b, {"prompts": []}))
    session.receive_message(result(a, {"tools": []}))
    assert events(session) == [
        ResponseReceived(b, "prompts/list", {"prompts": []}),
        ResponseReceived(a, "tools/list", {"tools": []}),
    ]
    assert session.pending_count == 0


@pytest.mark.parametrize(
    "data",
    [
        result(987654321, {}),
        result("hostile-unknown-id", {}),
        result("1", {}),  # same digits, different type: not our request
        error(987654321, -32603, "x"),
        error(None, -32700, "Parse error"),
        wire({"jsonrpc": "2.0", "error": {"code": -32600, "message": "x"}}),
    ],
)
def test_responses_to_unknown_ids_are_discarded(data: bytes) -> None:
    session = ready_session()
    rid = session.send_request("ping", None, now=0.0, timeout=None)
    assert rid == 2  # initialize was 1
    session.receive_message(data)
    (event,) = events(session)
    assert isinstance(event, MessageDiscarded)
    assert session.is_pending(rid)


def test_duplicate_and_late_responses_are_discarded() -> None:
    session = ready_session()
    rid = session.send_request("ping", None, now=0.0, timeout=None)
    session.receive_message(result(rid, {}))
    session.receive_message(result(rid, {"again": True}))
    session.receive_message(error(rid, -1, "late"))
    first, *rest = events(session)
    assert first == ResponseReceived(rid, "ping", {})
    assert len(rest) == 2 and all(isinstance(e, MessageDiscarded) for e in rest)


def test_unsolicited_flood_does_not_grow_state() -> None:
    session = ready_session()
    for i in range(2000):
        session.receive_message(result(10**9 + i, {"x": "y" * 10}))
    assert session.pending_count == 0
    # Nobody took the events meanwhile: at most DISCARD_BACKLOG wait, the rest are
    # counted (reported with the next discard that finds room).
    assert len(events(session)) == DISCARD_BACKLOG
    assert session.discards_unreported == 2000 - DISCARD_BACKLOG
    assert session._progress == {} and session._pending == {}


def test_batch_of_responses() -> None:
    session = ready_session()
    a = session.send_request("ping", None, now=0.0, timeout=None)
    b = session.send_request("ping", None, now=0.0, timeout=None)
    session.receive_message(
        json.dumps(
            [
                {"jsonrpc": "2.0", "id": a, "result": {}},
                {"jsonrpc": "2.0", "id": b, "error": {"code": -32603, "message": "x"}},
            ]
        )
    )
    first, second = events(session)
    assert first == ResponseReceived(a, "ping", {})
    assert isinstance(second, RequestFailed) and second.request_id == b


@pytest.mark.parametrize(
    "data",
    [
        b"not json",
        b"\xff\xfe",
        b"[]",
        b"42",
        b'"str"',
        b"null",
        b"{}",
        b'{"jsonrpc":"2.0"}',
        b'{"jsonrpc":"2.0","method":5}',
        b'{"jsonrpc":"2.0","id":true,"result":{}}',
    ],
)
def test_garbage_becomes_message_discarded(data: bytes) -> None:
    session = ready_session()
    session.receive_message(data)
    (event,) = events(session)
    assert isinstance(event, MessageDiscarded)
    assert "SECRET" not in event.reason


def test_discard_reasons_never_quote_the_payload() -> None:
    session = ready_session()
    secret = "sk-SECRET-abc"
    for data in (
        f'{{"token":"{secret}"'.encode(),
        f'{{"jsonrpc":"2.0","params":"{secret}","method":"m"}}'.encode(),
        f'["{secret}"]'.encode(),
        f'{{"jsonrpc":"{secret}"}}'.encode(),
        notification("notifications/progress", {"progressToken": secret, "progress": 1}),
        error(None, -1, secret),
    ):
        session.receive_message(data)
    for event in events(session):
        assert isinstance(event, MessageDiscarded)
        assert "SECRET" not in event.reason


# ---------------------------------------------------------------- error responses


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (-32020, HeaderMismatchError),
        (-32021, MissingRequiredClientCapabilityError),
        (-32022, UnsupportedProtocolVersionError),
        (-32601, ServerError),
        (-32602, ServerError),
        (-32603, ServerError),
        (-32002, ServerError),
        (42, ServerError),
    ],
)
def test_error_response_typed(code: int, cls: type[ServerError]) -> None:
    session = ready_session()
    rid = session.send_request("tools/call", {"name": "t"}, now=0.0, timeout=None)
    session.receive_message(error(rid, code, "it failed", {"detail": [1, 2]}))
    (event,) = events(session)
    assert isinstance(event, RequestFailed)
    assert event.request_id == rid and event.method == "tools/call"
    assert type(event.error) is cls
    assert event.error.code == code
    assert event.error.message == "it failed"
    assert event.error.data == {"detail": [1, 2]}
    assert event.error.method == "tools/call"
    assert str(event.error) == f"it failed (code {code})"
    assert not session.is_pending(rid)


@pytest.mark.parametrize(
    ("error_member", "message"),
    [
        ("boom", "malformed JSON-RPC error object"),
        (None, "malformed JSON-RPC error object"),
        ([1, 2], "malformed JSON-RPC error object"),
        ({}, "server error"),
        ({"code": "-32601", "message": "m"}, "m"),
        ({"code": True, "message": "m"}, "m"),
        ({"code": 1.5, "message": "m"}, "m"),
        ({"code": -32020, "message": 5}, "server error"),
        ({"code": None, "message": None, "data": "d"}, "server error"),
    ],
)
def test_malformed_error_objects(error_member: Any, message: str) -> None:
    session = ready_session()
    rid = session.send_request("ping", None, now=0.0, timeout=None)
    session.receive_message(wire({"jsonrpc": "2.0", "id": rid, "error": error_member}))
    (event,) = events(session)
    assert isinstance(event, RequestFailed)
    assert isinstance(event.error, ServerError)
    assert event.error.message == message
    code = error_member.get("code") if isinstance(error_member, dict) else None
    if isinstance(code, int) and not isinstance(code, bool):
        assert event.error.code == code
    else:
        assert event.error.code is None
        assert type(event.error) is ServerError


# ---------------------------------------------------------------- server requests


def test_server_requests_and_notifications_become_events() -> None:
    session = ready_session()
    session.receive_message(request("s1", "roots/list"))
    session.receive_message(request(7, "sampling/createMessage", {"messages": []}))
    session.receive_message(notification("notifications/tools/list_changed"))
    session.receive_message(notification("notifications/cancelled", {"requestId": "s1"}))
    assert events(session) == [
        ServerRequest("s1", "roots/list", {}),
        ServerRequest(7, "sampling/createMessage", {"messages": []}),
        NotificationReceived("notifications/tools/list_changed", {}),
        NotificationReceived("notifications/cancelled", {"requestId": "s1"}),
    ]


def test_answer_to_a_server_request_with_a_lone_surrogate_id() -> None:
    session = ready_session()
    session.receive_message(rb'{"jsonrpc":"2.0","id":"\ud800","method":"ping"}')
    (event,) = events(session)
    assert event == ServerRequest("\ud800", "ping", {})
    session.send_response(event.request_id, {})
    (msg,) = sent(session)
    assert msg == {"jsonrpc": "2.0", "id": "\ud800", "result": {}}


# ---------------------------------------------------------------- progress (PROG-1/2)


def progress(token: Any, value: Any = 1, **extra: Any) -> bytes:
    return notification(
        "notifications/progress", {"progressToken": token, "progress": value, **extra}
    )


def test_progress_token_generated_and_routed_while_pending() -> None:
    session = ready_session()
    rid = session.send_request(
        "tools/call", {"name": "t", "arguments": {}}, now=0.0, timeout=None, want_progress=True
    )
    (msg,) = sent(session)
    token = msg["params"]["_meta"]["progressToken"]
    assert isinstance(token, str)
    assert msg["params"]["arguments"] == {}
    session.receive_message(progress(token, 1, total=10, message="one"))
    session.receive_message(progress(token, 2.5))
    assert events(session) == [
        ProgressReceived(rid, 1.0, 10.0, "one"),
        ProgressReceived(rid, 2.5, None, None),
    ]
    session.receive_message(result(rid, {"content": []}))
    session.receive_message(progress(token, 3))  # stale: after completion
    first, stale = events(session)
    assert isinstance(first, ResponseReceived)
    assert isinstance(stale, MessageDiscarded)


def test_progress_before_any_request_and_unknown_tokens_dropped() -> None:
    session = ready_session()
    for token in ("p1", "p2", 2, None, 1.0, True, [1], {"a": 1}):
        session.receive_message(progress(token))
    assert all(isinstance(e, MessageDiscarded) for e in events(session))


def test_progress_tokens_are_unique_across_requests() -> None:
    session = ready_session()
    ids = [
        session.send_request("ping", None, now=0.0, timeout=None, want_progress=True)
        for _ in range(5)
    ]
    tokens = [m["params"]["_meta"]["progressToken"] for m in sent(session)]
    assert len(set(tokens)) == 5
    for rid, token in zip(reversed(ids), reversed(tokens), strict=True):
        session.receive_message(progress(token, 1))
        assert events(session) == [ProgressReceived(rid, 1.0, None, None)]


def test_caller_meta_kept_with_generated_token() -> None:
    session = ready_session()
    session.send_request(
        "tools/call",
        {"name": "t", "_meta": {"trace": "abc"}},
        now=0.0,
        timeout=None,
        want_progress=True,
    )
    (msg,) = sent(session)
    assert msg["params"]["_meta"]["trace"] == "abc"
    assert "progressToken" in msg["params"]["_meta"]


@pytest.mark.parametrize("want_progress", [True, False])
@pytest.mark.parametrize("token", ["my-token", 42, 0])
def test_hand_picked_progress_token(token: Any, want_progress: bool) -> None:
    session = ready_session()
    params = {"name": "t", "_meta": {"progressToken": token}}
    rid = session.send_request(
        "tools/call", params, now=0.0, timeout=None, want_progress=want_progress
    )
    (msg,) = sent(session)
    assert msg["params"]["_meta"]["progressToken"] == token
    session.receive_message(progress(token, 5, total=5))
    assert events(session) == [ProgressReceived(rid, 5.0, 5.0, None)]
    session.receive_message(result(rid, {}))
    session.receive_message(progress(token, 6))
    assert isinstance(events(session)[-1], MessageDiscarded)


def test_bool_progress_token_does_not_match_integer_one() -> None:
    session = ready_session()
    session.send_request(
        "tools/call", {"name": "t", "_meta": {"progressToken": 1}}, now=0.0, timeout=None
    )
    session.receive_message(progress(True))
    (event,) = events(session)
    assert isinstance(event, MessageDiscarded)


@pytest.mark.parametrize("token", [True, 1.5, None, ["x"], {"a": 1}])
def test_bad_progress_token_from_caller(token: Any) -> None:
    session = ready_session()
    params = {"_meta": {"progressToken": token}}
    if token is None:
        # No token at all: one is generated.
        session.send_request("ping", params, now=0.0, timeout=None, want_progress=True)
        return
    with pytest.raises(ValueError):
        session.send_request("ping", params, now=0.0, timeout=None, want_progress=True)
    assert session.pending_count == 0 and sent(session) == []
    # Without want_progress a token of the wrong type is simply not routed.
    session.send_request("ping", params, now=0.0, timeout=None)
    assert session._progress == {}


@pytest.mark.parametrize("meta", ["x", 5, ["a"]])
def test_non_object_meta_with_progress_is_a_value_error(meta: Any) -> None:
    session = ready_session()
    with pytest.raises(ValueError):
        session.send_request("ping", {"_meta": meta}, now=0.0, timeout=None, want_progress=True)
    assert session.pending_count == 0 and sent(session) == []


def test_token_in_use_is_a_value_error() -> None:
    session = ready_session()
    params = {"_meta": {"progressToken": "same"}}
    session.send_request("ping", params, now=0.0, timeout=None, want_progress=True)
    sent(session)
    with pytest.raises(ValueError):
        session.send_request("ping", params, now=0.0, timeout=None, want_progress=True)
    assert session.pending_count == 1 and sent(session) == []


@pytest.mark.parametrize(
    ("value", "extra", "expected"),
    [
        (1, {"total": "ten"}, (1.0, None, None)),
        (1, {"total": True}, (1.0, None, None)),
        (1, {"total": 10**400}, (1.0, None, None)),
        (1, {"message": 5}, (1.0, None, None)),
        (0, {"message": "zero"}, (0.0, None, "zero")),
        (-1.5, {"total": -3}, (-1.5, -3.0, None)),
    ],
)
def test_progress_field_shapes(
    value: Any, extra: dict[str, Any], expected: tuple[Any, ...]
) -> None:
    session = ready_session()
    rid = session.send_request("ping", None, now=0.0, timeout=None, want_progress=True)
    token = sent(session)[0]["params"]["_meta"]["progressToken"]
    session.receive_message(progress(token, value, **extra))
    assert events(session) == [ProgressReceived(rid, *expected)]


@pytest.mark.parametrize(
    "value", [None, "1", True, [1], 10**400], ids=["null", "str", "bool", "list", "huge-int"]
)
def test_progress_without_a_usable_number_is_discarded(value: Any) -> None:
    session = ready_session()
    rid = session.send_request("ping", None, now=0.0, timeout=None, want_progress=True)
    token = sent(session)[0]["params"]["_meta"]["progressToken"]
    session.receive_message(progress(token, value))
    (event,) = events(session)
    assert isinstance(event, MessageDiscarded)
    assert session.is_pending(rid)


# ---------------------------------------------------------------- deadlines (PROG-5, TIME-3)


def test_next_deadline() -> None:
    session = ready_session()
    assert session.next_deadline() is None
    session.send_request("ping", None, now=10.0, timeout=None)
    assert session.next_deadline() is None
    a = session.send_request("ping", None, now=10.0, timeout=5.0)
    b = session.send_request("ping", None, now=11.0, timeout=2.0)
    assert session.next_deadline() == 13.0
    session.receive_message(result(b, {}))
    assert session.next_deadline() == 15.0
    session.cancel_request(a, "gave up")
    assert session.next_deadline() is None


@settings(deadline=None, max_examples=200)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["send", "send", "answer", "cancel", "expire"]),
            st.none() | st.floats(min_value=0.0, max_value=50.0),
            st.integers(min_value=0, max_value=1000),
        ),
        max_size=80,
    )
)
def test_next_deadline_is_the_earliest_pending_one(
    steps: list[tuple[str, float | None, int]],
) -> None:
    """Whatever the order of sends, answers, cancels and expiries, next_deadline() is
    the minimum over the pending requests (it keeps a heap; this is the brute force)."""
    session = ready_session()
    deadlines: dict[Any, float | None] = {}
    now = 0.0
    peak = 0
    for action, value, pick in steps:
        live = sorted(deadlines)
        if action == "send":
            rid = session.send_request("ping", None, now=now, timeout=value)
            deadlines[rid] = None if value is None else now + value
        elif action == "answer" and live:
            rid = live[pick % len(live)]
            session.receive_message(result(rid, {}))
            del deadlines[rid]
        elif action == "cancel" and live:
            rid = live[pick % len(live)]
            session.cancel_request(rid, "gave up")
            del deadlines[rid]
        elif action == "expire":
            now += value or 0.0
            session.handle_timeout(now)
            deadlines = {r: d for r, d in deadlines.items() if d is None or d > now}
        session.data_to_send()
        events(session)
        peak = max(peak, len(deadlines))
        due = [d for d in deadlines.values() if d is not None]
        assert session.next_deadline() == (min(due) if due else None)
        # Finished requests linger in the heap only up to a bound set by the peak.
        assert len(session._deadlines) <= 2 * peak + 17


def test_the_deadline_heap_stays_small_over_many_calls() -> None:
    session = ready_session()
    for i in range(10_000):
        rid = session.send_request("ping", None, now=float(i), timeout=30.0)
        session.receive_message(result(rid, {}))
        events(session)
    assert len(session._deadlines) <= 18
    assert session.next_deadline() is None


def test_handle_timeout_expires_due_requests_only() -> None:
    session = ready_session()
    a = session.send_request("tools/call", {"name": "slow"}, now=0.0, timeout=1.0)
    b = session.send_request("tools/list", None, now=0.0, timeout=5.0)
    c = session.send_request("ping", None, now=0.0, timeout=None)
    sent(session)
    session.handle_timeout(0.999)
    assert events(session) == [] and sent(session) == []
    session.handle_timeout(1.0)  # deadline <= now expires
    (event,) = events(session)
    assert isinstance(event, RequestFailed)
    assert event.request_id == a and event.method == "tools/call"
    assert isinstance(event.error, RequestTimeoutError)
    assert isinstance(event.error, TimeoutError) and isinstance(event.error, TransportError)
    assert event.error.method == "tools/call"
    assert sent(session) == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": a, "reason": "Request timed out"},
        }
    ]
    assert not session.is_pending(a)
    assert session.is_pending(b) and session.is_pending(c)
    assert session.next_deadline() == 5.0
    # The late response is discarded, not delivered.
    session.receive_message(result(a, {"content": []}))
    assert isinstance(events(session)[0], MessageDiscarded)
    session.handle_timeout(100.0)
    (event,) = events(session)
    assert event.request_id == b
    assert session.is_pending(c) and session.next_deadline() is None


def test_handle_timeout_expires_several_at_once() -> None:
    session = ready_session()
    ids = [session.send_request("ping", None, now=0.0, timeout=float(i)) for i in range(1, 4)]
    sent(session)
    session.handle_timeout(10.0)
    failed = events(session)
    assert sorted(e.request_id for e in failed) == ids
    assert [m["params"]["requestId"] for m in sent(session)] == ids


def test_initialize_timeout_never_cancelled() -> None:
    session = new_session()
    rid = session.start_handshake(now=0.0, timeout=3.0)
    sent(session)
    session.handle_timeout(3.0)
    (event,) = events(session)
    assert isinstance(event, RequestFailed) and event.request_id == rid
    assert event.method == "initialize"
    assert isinstance(event.error, RequestTimeoutError)
    assert sent(session) == []  # Lifecycle: initialize MUST NOT be cancelled


def test_timeout_without_cancellation_opt_out() -> None:
    session = ready_session()
    session.send_request("tasks/get", None, now=0.0, timeout=1.0, cancel_on_timeout=False)
    sent(session)
    session.handle_timeout(2.0)
    (event,) = events(session)
    assert isinstance(event.error, RequestTimeoutError)
    assert sent(session) == []


def test_timeout_drops_progress_routing() -> None:
    session = ready_session()
    session.send_request("ping", None, now=0.0, timeout=1.0, want_progress=True)
    token = sent(session)[0]["params"]["_meta"]["progressToken"]
    session.handle_timeout(1.0)
    events(session)
    session.receive_message(progress(token))
    assert isinstance(events(session)[0], MessageDiscarded)


# ---------------------------------------------------------------- cancel_request


def test_cancel_request() -> None:
    session = ready_session()
    rid = session.send_request(
        "tools/call", {"name": "t"}, now=0.0, timeout=None, want_progress=True
    )
    token = sent(session)[0]["params"]["_meta"]["progressToken"]
    assert session.cancel_request(rid, "user abort") is True
    assert sent(session) == [
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": rid, "reason": "user abort"},
        }
    ]
    assert events(session) == []  # the caller already knows: no event
    assert session.cancel_request(rid, "again") is False
    assert sent(session) == []
    session.receive_message(result(rid, {}))
    session.receive_message(progress(token))
    assert all(isinstance(e, MessageDiscarded) for e in events(session))


def test_cancel_request_without_notification_and_unknown() -> None:
    session = ready_session()
    rid = session.send_request("ping", None, now=0.0, timeout=None)
    sent(session)
    assert session.cancel_request(rid, "x", notify=False) is True
    assert sent(session) == []
    assert session.cancel_request(12345, "x") is False
    assert session.cancel_request("nope", "x") is False
    assert sent(session) == []


def test_cancel_initialize_sends_nothing() -> None:
    session = new_session()
    rid = session.start_handshake(now=0.0, timeout=None)
    sent(session)
    assert session.cancel_request(rid, "x") is True
    assert sent(session) == []


# ---------------------------------------------------------------- connection_lost


def test_connection_lost_fails_everything() -> None:
    session = ready_session()
    ids = [
        session.send_request("ping", None, now=0.0, timeout=t, want_progress=True)
        for t in (None, 1.0, 2.0)
    ]
    tokens = [m["params"]["_meta"]["progressToken"] for m in sent(session)]
    err = TransportError("server exited")
    session.connection_lost(err)
    failed = events(session)
    assert [e.request_id for e in failed] == ids
    assert all(isinstance(e, RequestFailed) and e.error is err for e in failed)
    assert session.pending_count == 0 and session.next_deadline() is None
    assert session._progress == {}
    for token in tokens:
        session.receive_message(progress(token))
    assert all(isinstance(e, MessageDiscarded) for e in events(session))
    session.handle_timeout(100.0)
    assert events(session) == [] and sent(session) == []
    with pytest.raises(LocalProtocolError):
        session.send_request("ping", None, now=0.0, timeout=None)


def test_connection_lost_during_handshake_fails_initialize() -> None:
    session = new_session()
    rid = session.start_handshake(now=0.0, timeout=None)
    session.connection_lost(RemoteProtocolError("EOF"))
    (event,) = events(session)
    assert event.request_id == rid and event.method == "initialize"
    assert isinstance(event.error, RemoteProtocolError)


# ---------------------------------------------------------------- logging (LOG-3/4, UT-10)


def log_events(params: dict[str, Any], **kwargs: Any) -> LogMessage:
    session = ready_session(**kwargs)
    session.receive_message(notification("notifications/message", params))
    note, log = events(session)
    assert isinstance(log, LogMessage)
    # The notification is still surfaced for the host's callbacks, first: the log line
    # is the client's own handling, which comes after delivery (NOTIF-5).
    assert note == NotificationReceived("notifications/message", params)
    return log


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        ("debug", "DEBUG"),
        ("info", "INFO"),
        ("notice", "INFO"),
        ("warning", "WARNING"),
        ("error", "ERROR"),
        ("critical", "ERROR"),
        ("alert", "ERROR"),
        ("emergency", "ERROR"),
    ],
)
def test_log_level_mapping(level: str, expected: str) -> None:
    log = log_events({"level": level, "logger": "db", "data": "hello"})
    assert log == LogMessage(level=expected, logger="db", text="hello")


@pytest.mark.parametrize(
    ("level", "tag"),
    [
        ("verbose", "[verbose]"),
        ("DEBUG", "[DEBUG]"),  # levels are lower-case: an upper-case one is unknown
        (None, "[None]"),
        (5, "[5]"),
        ("a\nb", "[a\\x0ab]"),
        ("x" * 100, "[" + "x" * 32 + "... (truncated from 100 chars)]"),
    ],
)
def test_unknown_level_logged_at_info_with_sanitised_tag(level: Any, tag: str) -> None:
    log = log_events({"level": level, "data": "msg"})
    assert log.level == "INFO"
    assert log.text == f"{tag} msg"


def test_missing_level() -> None:
    assert log_events({"data": "msg"}).text == "[None] msg"


def test_fake_log_line_is_escaped() -> None:
    log = log_events({"level": "info", "logger": "a\nFAKE", "data": "a\nFAKE LOG LINE\r\x1b[31m"})
    assert "\n" not in log.text and "\r" not in log.text and "\x1b" not in log.text
    assert log.text == "a\\x0aFAKE LOG LINE\\x0d\\x1b[31m"
    assert log.logger == "a\\x0aFAKE"


def test_log_text_capped() -> None:
    log = log_events({"level": "info", "data": "y" * 10_000})
    assert log.text == "y" * 4096 + "... (truncated from 10000 chars)"
    exact = log_events({"level": "info", "data": "y" * 4096})
    assert exact.text == "y" * 4096


def test_log_cap_from_limits_and_logger_cap() -> None:
    log = log_events(
        {"level": "info", "logger": "L" * 500, "data": "abcdefghijklmnop"},
        limits=Limits(max_log_message=10),
    )
    assert log.text == "abcdefghij... (truncated from 16 chars)"
    assert log.logger == "L" * 128 + "... (truncated from 500 chars)"


@pytest.mark.parametrize(
    ("data", "text"),
    [
        ({"k": "v\n"}, '{"k": "v\\n"}'),
        ([1, 2], "[1, 2]"),
        (None, "null"),
        (3.5, "3.5"),
        ("é☃", "é☃"),
    ],
)
def test_structured_log_data_is_json(data: Any, text: str) -> None:
    log = log_events({"level": "warning", "data": data})
    assert log.text == text
    assert log.level == "WARNING"


def test_non_string_logger_ignored() -> None:
    assert log_events({"level": "info", "logger": 5, "data": "x"}).logger is None


# ---------------------------------------------------------------- capability gating (CAP-1)


def test_a_capability_judged_once_per_server_is_judged_again_for_another() -> None:
    # send_request remembers which ServerInfo allowed a method (not once per request);
    # the 2026-07-28 era replaces session.server (a re-fetched discover answer), and the
    # new one's capabilities decide.
    session = ready_session({"tools": {}})
    session.send_request("tools/call", {"name": "a"}, now=0.0, timeout=None)
    session.send_request("tools/call", {"name": "a"}, now=0.0, timeout=None)
    assert session.server is not None
    without = attrs.evolve(session.server, capabilities={})
    session.server = without
    with pytest.raises(CapabilityError):
        session.send_request("tools/call", {"name": "a"}, now=0.0, timeout=None)
    session.server = attrs.evolve(without, capabilities={"tools": {}})
    session.send_request("tools/call", {"name": "a"}, now=0.0, timeout=None)
    assert [m["method"] for m in sent(session)] == ["tools/call"] * 3


@pytest.mark.parametrize("method", sorted(REQUIRED_CAPABILITY))
def test_capability_gating(method: str) -> None:
    path = REQUIRED_CAPABILITY[method]
    session = ready_session({})
    with pytest.raises(CapabilityError) as info:
        session.send_request(method, {}, now=0.0, timeout=None)
    assert method in str(info.value)
    assert sent(session) == [] and session.pending_count == 0
    # Declared as false / null: still missing.
    caps: dict[str, Any] = {}
    node = caps
    for key in path[:-1]:
        node = node.setdefault(key, {})
    for absent in (False, None):
        node[path[-1]] = absent
        session = ready_session(caps)
        with pytest.raises(CapabilityError):
            session.send_request(method, {}, now=0.0, timeout=None)
        assert sent(session) == []
    # Declared: sent.
    node[path[-1]] = {}
    session = ready_session(caps)
    session.send_request(method, {}, now=0.0, timeout=None)
    assert [m["method"] for m in sent(session)] == [method]


def test_subscribe_needs_the_sub_capability() -> None:
    session = ready_session({"resources": {"listChanged": True}})
    session.send_request("resources/read", {"uri": "x"}, now=0.0, timeout=None)
    with pytest.raises(CapabilityError):
        session.send_request("resources/subscribe", {"uri": "x"}, now=0.0, timeout=None)
    assert [m["method"] for m in sent(session)] == ["resources/read"]


def test_ungated_methods_pass_without_capabilities() -> None:
    session = ready_session({})
    for method in ("ping", "x/custom", "tasks/get", "tasks/result"):
        session.send_request(method, None, now=0.0, timeout=None)
    assert len(sent(session)) == 4


def test_require_capability_before_handshake_is_a_no_op() -> None:
    # CAP-2: the capability set is unknown before the handshake; the client connects
    # first and the gate applies afterwards.
    new_session().require_capability("logging/setLevel")


# ---------------------------------------------------------------- typed-errors-only property

_METHODS = ["ping", "tools/list", "tools/call", "logging/setLevel", "x/custom", "initialize"]
_json_scalar = (
    st.none()
    | st.booleans()
    | st.integers(-5, 2**70)
    | st.just(10**400)  # a JSON integer too big for a float
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
_json = st.recursive(
    _json_scalar,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=6), c, max_size=3),
    max_leaves=8,
)


class SessionMachine(RuleBasedStateMachine):
    """Arbitrary inbound texts interleaved with arbitrary caller operations.

    Invariants: nothing but typed errors (MCPError; ValueError for bad caller args)
    escapes; every request ends at most once; the pending table matches a model; the
    outbox only ever holds well-formed JSON-RPC messages without raw newlines.
    """

    sent_ids = Bundle("sent_ids")

    def __init__(self) -> None:
        super().__init__()
        self.session = Session(
            client_info=CLIENT_INFO,
            capabilities={},
            limits=Limits(max_pending_requests=20, max_log_message=50),
        )
        self.now = 0.0
        self.open: set[Any] = set()  # ids the model believes are pending
        self.ended: set[Any] = set()
        self.states_seen: set[State] = set()

    # ---- helpers
    def call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (MCPError, ValueError) as exc:
            assert not isinstance(exc, (KeyError, TypeError))
            return exc

    def settle(self) -> None:
        while True:
            event = self.session.next_event()
            if event is NEED_DATA:
                break
            assert isinstance(
                event,
                (
                    ResponseReceived,
                    RequestFailed,
                    ServerRequest,
                    NotificationReceived,
                    ProgressReceived,
                    LogMessage,
                    MessageDiscarded,
                ),
            )
            if isinstance(event, (ResponseReceived, RequestFailed)):
                assert event.request_id in self.open, "a request ended twice or never existed"
                self.open.discard(event.request_id)
                self.ended.add(event.request_id)
                if isinstance(event, RequestFailed):
                    assert isinstance(event.error, MCPError)
                if event.method == "initialize" and isinstance(event, ResponseReceived):
                    outcome = self.call(self.session.complete_handshake, event.result)
                    if isinstance(outcome, MCPError):
                        assert isinstance(outcome, (ConnectionError, LocalProtocolError))
            elif isinstance(event, ProgressReceived):
                assert event.request_id in self.open
            elif isinstance(event, LogMessage):
                assert "\n" not in event.text and len(event.text) <= 50 + 40
            elif isinstance(event, ServerRequest):
                self.call(self.session.send_response, event.request_id, {})

    @initialize(
        start=st.sampled_from(["idle", "initializing", "ready", "ready", "ready"]),
        caps=st.sampled_from([ALL_CAPS, {}]),
    )
    def start(self, start: str, caps: dict[str, Any]) -> None:
        """Most runs begin in READY, where most of the protocol happens."""
        if start == "idle":
            return
        rid = self.session.start_handshake(now=self.now, timeout=None)
        if start == "ready":
            self.session.receive_message(
                result(rid, {"protocolVersion": "2025-11-25", "capabilities": caps})
            )
            self.open.add(rid)
            self.settle()
            assert self.session.state is State.READY
        else:
            self.open.add(rid)

    # ---- caller operations
    @rule(target=sent_ids)
    def handshake(self) -> Any:
        out = self.call(self.session.start_handshake, now=self.now, timeout=5.0)
        if isinstance(out, Exception):
            return -1
        self.open.add(out)
        return out

    @rule(
        request_id=sent_ids,
        version=st.sampled_from([*LEGACY_VERSIONS, "1999-01-01", None]),
        caps=st.sampled_from([{}, ALL_CAPS, {"tools": {}}]),
    )
    def answer_initialize(self, request_id: Any, version: Any, caps: Any) -> None:
        self.session.receive_message(
            result(request_id, {"protocolVersion": version, "capabilities": caps})
        )

    @rule(
        target=sent_ids,
        method=st.sampled_from(_METHODS),
        timeout=st.none() | st.floats(0, 10),
        want_progress=st.booleans(),
        token=st.none() | st.sampled_from(["t", 1, True, 2.5]),
    )
    def send(self, method: str, timeout: Any, want_progress: bool, token: Any) -> Any:
        params: dict[str, Any] | None = None
        if token is not None:
            params = {"_meta": {"progressToken": token}}
        out = self.call(
            self.session.send_request,
            method,
            params,
            now=self.now,
            timeout=timeout,
            want_progress=want_progress,
        )
        if isinstance(out, Exception):
            return -1
        assert out not in self.open and out not in self.ended
        self.open.add(out)
        return out

    @rule(request_id=sent_ids, res=_json)
    def answer(self, request_id: Any, res: Any) -> None:
        self.session.receive_message(result(request_id, res))

    @rule(request_id=sent_ids, code=st.integers(-32700, -32000) | st.just(True), data=_json)
    def fail(self, request_id: Any, code: Any, data: Any) -> None:
        self.session.receive_message(error(request_id, code, "e", data))

    @rule(
        request_id=sent_ids,
        value=st.integers(-5, 10**30) | st.floats(allow_nan=False, allow_infinity=False) | _json,
    )
    def progress_for(self, request_id: Any, value: Any) -> None:
        for token in (f"p{request_id}", request_id, "t"):
            self.session.receive_message(progress(token, value))

    @precondition(lambda self: bool(self.open))
    @rule(data=st.data(), kind=st.sampled_from(["progress", "result", "error"]))
    def to_an_open_request(self, data: st.DataObject, kind: str) -> None:
        """Aim at a request that is in flight (arbitrary ids rarely hit one)."""
        request_id = data.draw(st.sampled_from(sorted(self.open, key=repr)))
        if kind == "progress":
            token = data.draw(st.sampled_from([f"p{request_id}", "t", 1, True]))
            self.session.receive_message(progress(token, data.draw(st.integers() | _json)))
        elif kind == "result":
            self.session.receive_message(result(request_id, data.draw(_json)))
        else:
            self.session.receive_message(error(request_id, data.draw(_json), data.draw(_json)))

    @rule(request_id=consumes(sent_ids), notify=st.booleans())
    def cancel(self, request_id: Any, notify: bool) -> None:
        was_open = request_id in self.open
        assert self.session.cancel_request(request_id, "r", notify=notify) is was_open
        self.open.discard(request_id)

    @rule(step=st.floats(0, 6))
    def tick(self, step: float) -> None:
        self.now += step
        deadline = self.session.next_deadline()
        self.session.handle_timeout(self.now)
        after = self.session.next_deadline()
        assert after is None or after > self.now
        if deadline is not None and deadline > self.now:
            assert after == deadline

    @rule()
    def lose_connection(self) -> None:
        self.session.connection_lost(TransportError("gone"))
        self.settle()
        assert not self.open

    @rule(level=_json, logger=_json, data=_json)
    def log(self, level: Any, logger: Any, data: Any) -> None:
        self.session.receive_message(
            notification("notifications/message", {"level": level, "logger": logger, "data": data})
        )

    # ---- arbitrary input
    @rule(data=st.binary(max_size=60))
    def receive_bytes(self, data: bytes) -> None:
        self.session.receive_message(data)

    @rule(value=_json)
    def receive_json(self, value: Any) -> None:
        self.session.receive_message(json.dumps(value))

    @rule(
        has_id=st.booleans(),
        rid=st.integers(-2, 30) | st.text(max_size=3) | st.none() | st.booleans(),
        method=st.none()
        | st.sampled_from(["ping", "notifications/progress", "notifications/message"]),
        params=_json,
        res=_json,
        kind=st.sampled_from(["result", "error", "neither"]),
    )
    def receive_message_shaped(
        self, has_id: bool, rid: Any, method: Any, params: Any, res: Any, kind: str
    ) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0"}
        if has_id:
            msg["id"] = rid
        if method is not None:
            msg["method"] = method
            msg["params"] = params
        if kind != "neither":
            msg[kind] = res
        self.session.receive_message(json.dumps(msg).encode())

    @precondition(lambda self: self.session.state is State.READY)
    @rule()
    def notify(self) -> None:
        self.session.send_notification("notifications/roots/list_changed")

    # ---- invariants
    @invariant()
    def consistent(self) -> None:
        self.settle()
        self.states_seen.add(self.session.state)
        assert self.session.pending_count == len(self.open)
        for rid in self.open:
            assert self.session.is_pending(rid)
        # Every progress route points at a pending request.
        for request_id in self.session._progress.values():
            assert self.session.is_pending(request_id)
        for item in self.session.data_to_send():
            assert b"\n" not in item
            msg = json.loads(item)
            assert msg["jsonrpc"] == "2.0"
            assert ("method" in msg) or ("result" in msg) or ("error" in msg)
        if self.session.state is State.CLOSED:
            assert self.session.pending_count == 0


SessionMachine.TestCase.settings = settings(
    max_examples=150,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestSessionMachine = SessionMachine.TestCase


def test_initialize_answer_reaches_ready_within_machine_helpers() -> None:
    # Sanity for the machine's helpers: a scripted run reaches READY and back to CLOSED.
    machine = SessionMachine()
    machine.handshake()
    machine.session.receive_message(
        result(1, {"protocolVersion": "2025-11-25", "capabilities": ALL_CAPS})
    )
    machine.consistent()
    assert machine.session.state is State.READY
    rid = machine.send("tools/call", 1.0, True, None)
    machine.tick(2.0)
    machine.consistent()
    assert rid in machine.ended
    machine.lose_connection()
    assert machine.session.state is State.CLOSED
    machine.teardown()


def test_generated_token_avoids_a_hand_picked_one() -> None:
    session = ready_session()
    # The next request id will be 3: someone hand-picks the token "p3" first.
    first = session.send_request(
        "tools/call", {"name": "t", "_meta": {"progressToken": "p3"}}, now=0.0, timeout=None
    )
    second = session.send_request("ping", None, now=0.0, timeout=None, want_progress=True)
    assert second == 3
    tokens = [m["params"]["_meta"]["progressToken"] for m in sent(session)]
    assert tokens[0] == "p3" and tokens[1] != "p3"
    session.receive_message(progress("p3", 1))
    session.receive_message(progress(tokens[1], 2))
    assert events(session) == [
        ProgressReceived(first, 1.0, None, None),
        ProgressReceived(second, 2.0, None, None),
    ]
