"""Session behaviour a mutation run showed untested (issue 11, "Tests that could not tell").

Each test here failed on a surviving mutant of ``mcp_proto/session.py`` and passes on
the code. Expectations are written out on their own (from the spec), never read back
from the module under test.
"""

from __future__ import annotations

import heapq
import types
from typing import Any

import pytest
from _proto_support import (
    ALL_CAPS,
    CLIENT_INFO,
    error,
    events,
    notification,
    ready_session,
    result,
    sent,
)

import mcp_proto.session as session_module
from mcp_proto.errors import (
    CapabilityError,
    ConnectionError,
    LocalProtocolError,
    RequestTimeoutError,
)
from mcp_proto.events import LogMessage, MessageDiscarded, RequestFailed, ResponseReceived
from mcp_proto.limits import Limits
from mcp_proto.session import Session, State

# ---------------------------------------------------------------- capability gating (CAP-1)

# Written from the 2025-11-25 spec, not from REQUIRED_CAPABILITY: method -> the server
# capability path it needs. Server § Tools/Prompts/Resources ("Capabilities"), Utilities
# § Logging, § Completion, Basic § Utilities § Tasks ("tasks.list", "tasks.cancel").
SPEC_CAPABILITIES: dict[str, tuple[str, ...]] = {
    "tools/list": ("tools",),
    "tools/call": ("tools",),
    "prompts/list": ("prompts",),
    "prompts/get": ("prompts",),
    "resources/list": ("resources",),
    "resources/templates/list": ("resources",),
    "resources/read": ("resources",),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "logging/setLevel": ("logging",),
    "completion/complete": ("completions",),
    "tasks/list": ("tasks", "list"),
    "tasks/cancel": ("tasks", "cancel"),
}
# Requests no capability gates: ping is always allowed; tasks/get and tasks/result
# follow a task the server created; custom methods are the caller's business.
UNGATED = ["ping", "tasks/get", "tasks/result", "x/custom"]


def _without(path: tuple[str, ...]) -> dict[str, Any]:
    """Every capability but the last key of ``path`` (its parent stays declared)."""
    caps: dict[str, Any] = {k: dict(v) for k, v in ALL_CAPS.items()}
    node = caps
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return caps


@pytest.mark.parametrize("method", sorted(SPEC_CAPABILITIES))
def test_request_refused_without_its_capability(method: str) -> None:
    path = SPEC_CAPABILITIES[method]
    session = ready_session(_without(path))
    with pytest.raises(CapabilityError) as info:
        session.send_request(method, None, now=0.0, timeout=None)
    assert str(info.value) == (
        f"the server did not declare the {'.'.join(path)!r} capability needed for {method}"
    )
    assert sent(session) == [] and session.pending_count == 0


@pytest.mark.parametrize("method", sorted(SPEC_CAPABILITIES))
def test_request_sent_with_its_capability(method: str) -> None:
    session = ready_session(ALL_CAPS)
    rid = session.send_request(method, None, now=0.0, timeout=None)
    assert [m["method"] for m in sent(session)] == [method] and session.is_pending(rid)


@pytest.mark.parametrize("method", UNGATED)
def test_ungated_requests_need_no_capability(method: str) -> None:
    session = ready_session({})
    session.send_request(method, None, now=0.0, timeout=None)
    assert [m["method"] for m in sent(session)] == [method]


def test_subscribe_declared_false_is_not_declared() -> None:
    session = ready_session({"resources": {"subscribe": False}})
    with pytest.raises(CapabilityError):
        session.send_request("resources/subscribe", {"uri": "x"}, now=0.0, timeout=None)


# ---------------------------------------------------------------- the deadline heap (TIME-3)


def _answer(session: Any, rid: Any) -> None:
    session.receive_message(result(rid, {}))
    assert [type(e) for e in events(session)] == [ResponseReceived]


def test_heap_rebuild_keeps_every_other_pending_deadline() -> None:
    """A 5 s request and one without a timeout stay pending while many short-lived
    requests come and go: the heap is rebuilt several times, and next_deadline() is the
    5 s deadline after every send. (Mutants: the rebuild filter with ``or``: the
    rebuild raised TypeError comparing None with a float; with ``==``: next_deadline()
    lost the 5 s request.)"""
    session = ready_session()
    slow = session.send_request("ping", None, now=0.0, timeout=5.0)
    endless = session.send_request("ping", None, now=0.0, timeout=None)
    for i in range(100):
        rid = session.send_request("ping", None, now=float(i) / 100, timeout=60.0)
        assert session.next_deadline() == 5.0
        _answer(session, rid)
    assert session.is_pending(slow) and session.is_pending(endless)
    assert session.next_deadline() == 5.0
    _answer(session, slow)
    assert session.next_deadline() is None  # the endless one has no deadline


class _CountingHeapq(types.SimpleNamespace):
    heapify_calls: int = 0


def _count_heapify(monkeypatch: pytest.MonkeyPatch) -> _CountingHeapq:
    counter = _CountingHeapq(heappush=heapq.heappush, heappop=heapq.heappop)

    def heapify(heap: list[Any]) -> None:
        counter.heapify_calls += 1
        heapq.heapify(heap)

    counter.heapify = heapify
    monkeypatch.setattr(session_module, "heapq", counter)
    return counter


def test_no_rebuild_while_every_heap_entry_is_live(monkeypatch: pytest.MonkeyPatch) -> None:
    """With nothing answered, every heap entry is live: a rebuild would only cost O(n)
    per send (the mutant ``2 *`` -> ``2 /`` rebuilt on every send)."""
    counter = _count_heapify(monkeypatch)
    session = ready_session(limits=Limits(max_pending_requests=1000))
    for i in range(500):
        session.send_request("ping", None, now=0.0, timeout=float(i + 1))
    assert counter.heapify_calls == 0
    assert session.next_deadline() == 1.0


def test_rebuilds_are_amortised(monkeypatch: pytest.MonkeyPatch) -> None:
    """Answered requests leave stale entries: the heap is rebuilt once it holds more
    than twice the pending count plus 16, so at most one rebuild per 16 sends."""
    counter = _count_heapify(monkeypatch)
    session = ready_session()
    # The first request stays pending with the earliest deadline, so the answered
    # ones behind it leave their entries (only the earliest is dropped on answer).
    first = session.send_request("ping", None, now=0.0, timeout=0.5)
    for i in range(1000):
        rid = session.send_request("ping", None, now=0.0, timeout=float(i + 1))
        _answer(session, rid)
        assert len(session._deadlines) <= 2 * 2 + 17  # two requests pending at a time
    assert 1 <= counter.heapify_calls <= 1000 // 16
    assert session.next_deadline() == 0.5
    _answer(session, first)
    assert session.next_deadline() is None


def test_answers_in_reverse_rebuild_rarely(monkeypatch: pytest.MonkeyPatch) -> None:
    """300 in flight answered last first: every answer leaves its entry behind, and the
    heap is rebuilt only when the stale ones outnumber the live ones (a handful of
    times, not once per answer: the mutant ``2 *`` -> ``2 /``)."""
    counter = _count_heapify(monkeypatch)
    session = ready_session(limits=Limits(max_pending_requests=1000))
    rids = [session.send_request("ping", None, now=0.0, timeout=float(i + 1)) for i in range(300)]
    for n, rid in enumerate(reversed(rids)):
        _answer(session, rid)
        assert len(session._deadlines) <= 2 * (299 - n) + 17
        if n < 299:
            assert session.next_deadline() == 1.0
    assert 1 <= counter.heapify_calls <= 10
    assert session.next_deadline() is None


def test_answered_in_order_leaves_no_stale_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The request answered is the earliest deadline (one at a time, or answers in
    order): its entry goes with it, so next_deadline, asked after every input, has
    none to pop and the heap never needs a rebuild."""
    counter = _count_heapify(monkeypatch)
    session = ready_session()
    for i in range(100):
        rid = session.send_request("ping", None, now=0.0, timeout=float(i + 1))
        assert session.next_deadline() == float(i + 1)
        _answer(session, rid)
        assert session._deadlines == []
        assert session.next_deadline() is None
    rids = [session.send_request("ping", None, now=0.0, timeout=float(i + 1)) for i in range(5)]
    for n, rid in enumerate(rids):
        _answer(session, rid)
        assert len(session._deadlines) == 4 - n
    assert counter.heapify_calls == 0


# ---------------------------------------------------------------- log data (LOG-3)


def test_structured_log_data_keeps_non_ascii_text() -> None:
    session = ready_session()
    session.receive_message(
        notification("notifications/message", {"level": "info", "data": {"msg": "café ☃"}})
    )
    log = next(e for e in events(session) if isinstance(e, LogMessage))
    assert log.text == '{"msg": "café ☃"}'  # not "caf\\u00e9 \\u2603"


# ---------------------------------------------------------------- what a user reads first


def test_handshake_error_messages() -> None:
    idle = Session(client_info=CLIENT_INFO, capabilities={})
    with pytest.raises(LocalProtocolError) as info:
        idle.complete_handshake({})
    assert str(info.value) == "cannot complete a handshake in state idle"
    idle.start_handshake(now=0.0, timeout=None)
    with pytest.raises(ConnectionError) as refused:
        idle.complete_handshake([])
    assert str(refused.value) == "the server's initialize result is not an object"


def test_sending_on_a_closed_session_message() -> None:
    session = ready_session()
    session.connection_lost(ConnectionError("gone"))
    assert session.state is State.CLOSED
    with pytest.raises(LocalProtocolError) as info:
        session.send_notification("notifications/x")
    assert str(info.value) == "cannot send on a closed session"


def test_deadline_of_a_request() -> None:
    session = ready_session()
    timed = session.send_request("ping", None, now=10.0, timeout=5.0)
    untimed = session.send_request("ping", None, now=10.0, timeout=None)
    assert session.deadline_of(timed) == 15.0
    assert session.deadline_of(untimed) is None
    assert session.deadline_of(12345) is None


def test_timeout_message_names_the_method_and_request() -> None:
    session = ready_session()
    rid = session.send_request("tools/list", None, now=0.0, timeout=1.0)
    session.handle_timeout(2.0)
    (failed,) = [e for e in events(session) if isinstance(e, RequestFailed)]
    assert isinstance(failed.error, RequestTimeoutError)
    assert str(failed.error) == f"tools/list timed out (request {rid})"


def test_discard_reasons() -> None:
    session = ready_session()
    rid = session.send_request("ping", None, now=0.0, timeout=None, want_progress=True)
    token = sent(session)[0]["params"]["_meta"]["progressToken"]
    session.receive_message(result(99, {}))
    session.receive_message(error(None, -32600))
    session.receive_message(
        notification("notifications/progress", {"progressToken": "nope", "progress": 1})
    )
    session.receive_message(
        notification("notifications/progress", {"progressToken": token, "progress": "x"})
    )
    reasons = [e.reason for e in events(session) if isinstance(e, MessageDiscarded)]
    assert reasons == [
        "response to unknown id 99",
        "error response to no pending request",
        "progress for an unknown token",
        "progress without a usable number",
    ]
    assert session.is_pending(rid)


def test_request_refusal_messages() -> None:
    idle = Session(client_info=CLIENT_INFO, capabilities={})
    with pytest.raises(LocalProtocolError) as info:
        idle.send_request("tools/list", None, now=0.0, timeout=None)
    assert str(info.value) == "cannot send tools/list in state idle"
    idle.start_handshake(now=0.0, timeout=None)
    with pytest.raises(LocalProtocolError) as again:
        idle.start_handshake(now=0.0, timeout=None)
    assert str(again.value) == "cannot start a handshake in state initializing"

    session = ready_session(limits=Limits(max_pending_requests=1))
    session.send_request(
        "ping", {"_meta": {"progressToken": "t"}}, now=0.0, timeout=None, want_progress=True
    )
    with pytest.raises(LocalProtocolError) as full:
        session.send_request("ping", None, now=0.0, timeout=None)
    assert str(full.value) == "too many requests in flight"

    session = ready_session()
    session.send_request(
        "ping", {"_meta": {"progressToken": "t"}}, now=0.0, timeout=None, want_progress=True
    )
    cases = [
        ({"_meta": 5}, "params._meta must be an object"),
        ({"_meta": {"progressToken": 1.5}}, "progressToken must be a string or an integer"),
        ({"_meta": {"progressToken": "t"}}, "progressToken 't' is already in use"),
    ]
    for params, message in cases:
        with pytest.raises(ValueError) as bad:
            session.send_request("ping", params, now=0.0, timeout=None, want_progress=True)
        assert str(bad.value) == message


def test_refused_version_message_lists_what_the_client_speaks() -> None:
    session = Session(client_info=CLIENT_INFO, capabilities={})
    session.start_handshake(now=0.0, timeout=None)
    with pytest.raises(ConnectionError) as info:
        session.complete_handshake({"protocolVersion": "1999-01-01", "capabilities": {}})
    assert str(info.value) == (
        "the server answered initialize with protocol version '1999-01-01'; this client"
        " speaks " + ", ".join(session.supported_versions)
    )
