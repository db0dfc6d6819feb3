"""Server requests owed an answer, the roots capability, and the close (issue 8, item 5).

A server request still unanswered when the client closes would leave the server
waiting after its stdin closed (a Node server stays alive on it until it times out).
The session knows which server requests are unanswered; ``refuse_server_requests``
answers each with a JSON-RPC error, once. ``roots`` is declared only when the host
registered roots (CAP-4), and ``notifications/roots/list_changed`` goes only to a
session that declared them (CAP-5).
"""

from __future__ import annotations

from typing import Any

import pytest
from _proto_support import events, notification, ready_session, request, sent

from mcp_proto.client import ClientCore, ServerEntry
from mcp_proto.errors import TransportError
from mcp_proto.events import ServerRequest
from mcp_proto.handlers import Handlers
from mcp_proto.session import CLOSING_CODE, CLOSING_MESSAGE

ROOTS = {"roots": {"listChanged": True}}


def test_unanswered_server_requests_are_counted_until_answered() -> None:
    session = ready_session(client_caps=ROOTS)
    session.receive_message(request("r1", "roots/list"))
    session.receive_message(request(2, "sampling/createMessage", {"messages": []}))
    session.receive_message(notification("notifications/message", {"level": "info"}))
    assert [type(e) for e in events(session)].count(ServerRequest) == 2
    assert session.unanswered_server_requests == 2
    session.send_response("r1", {"roots": []})
    assert session.unanswered_server_requests == 1
    session.send_error_response(2, -32601, "Method not found")
    assert session.unanswered_server_requests == 0
    assert session.refuse_server_requests() == 0
    assert [m.get("id") for m in sent(session)] == ["r1", 2]


def test_refuse_answers_each_pending_request_once_with_an_error() -> None:
    session = ready_session(client_caps=ROOTS)
    for rid in (1, "two", 3):
        session.receive_message(request(rid, "sampling/createMessage", {"messages": []}))
    events(session)
    session.send_response(3, {"role": "assistant"})
    sent(session)
    assert session.refuse_server_requests() == 2
    assert sent(session) == [
        {"jsonrpc": "2.0", "id": rid, "error": {"code": CLOSING_CODE, "message": CLOSING_MESSAGE}}
        for rid in (1, "two")
    ]
    # A handler that finishes afterwards does not answer a second time.
    session.send_response(1, {"role": "assistant"})
    session.send_error_response("two", -32603, "Internal error")
    assert sent(session) == []
    assert session.unanswered_server_requests == 0
    assert session.refuse_server_requests() == 0
    # Answers to other ids (never refused) still go out.
    session.send_response(7, {})
    assert [m["id"] for m in sent(session)] == [7]


def test_a_closed_session_refuses_nothing() -> None:
    session = ready_session()
    session.receive_message(request(1, "roots/list"))
    events(session)
    session.connection_lost(TransportError("gone"))
    events(session)
    assert session.refuse_server_requests() == 0
    assert sent(session) == []


def test_roots_list_changed_only_where_roots_were_declared() -> None:
    with_roots = ready_session(client_caps=ROOTS)
    without = ready_session(client_caps={"sampling": {}})
    for session in (with_roots, without):
        session.send_notification("notifications/roots/list_changed")
        session.send_notification("notifications/other")
    assert [m["method"] for m in sent(with_roots)] == [
        "notifications/roots/list_changed",
        "notifications/other",
    ]
    assert [m["method"] for m in sent(without)] == ["notifications/other"]


def core(**kwargs: Any) -> ClientCore:
    return ClientCore([ServerEntry("s", "stdio")], handlers=Handlers(**kwargs))


def test_roots_are_declared_only_once_registered() -> None:
    plain = core()
    assert "roots" not in plain.capabilities
    assert plain.capabilities == {}
    given = core()
    given.set_initial_roots([{"uri": "file:///w"}])
    assert given.capabilities == ROOTS
    empty = core()
    empty.set_initial_roots([])  # roots=[]: registered, to be set later
    assert empty.capabilities == ROOTS
    later = core()
    list(later.set_roots([]))  # no server connected: nothing to notify
    assert later.capabilities == ROOTS


def test_an_invalid_root_registers_nothing() -> None:
    c = core()
    with pytest.raises(ValueError):
        c.set_initial_roots([{"uri": "http://not-a-file"}])
    assert "roots" not in c.capabilities
