"""Unusable server output in the core (issue 8, item 8), time as a number.

The session keeps the first line that is not JSON-RPC, safely quoted; a timeout or a
handshake cut short mentions it; a response that cannot be decoded fails its request
at once when its id is certain (the line parses as a JSON object with that top-level
id), never on a guess.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _proto_support import CLIENT_INFO, events, ready_session, result, sent
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto._unusable import NOTE_CAP, quote_line, recover_response_id
from mcp_proto.errors import (
    ConnectionError,
    LineTooLongError,
    RemoteProtocolError,
    RequestTimeoutError,
)
from mcp_proto.events import MessageDiscarded, RequestFailed, ResponseReceived
from mcp_proto.session import DISCARD_BACKLOG, Session, State


def initializing() -> tuple[Session, Any]:
    session = Session(client_info=CLIENT_INFO, capabilities={})
    rid = session.start_handshake(now=100.0, timeout=15.0)
    sent(session)
    return session, rid


def failures(session: Session) -> list[RequestFailed]:
    return [e for e in events(session) if isinstance(e, RequestFailed)]


def test_initialize_timeout_quotes_the_first_unusable_line() -> None:
    session, rid = initializing()
    session.receive_message(b"Starting server on stdio\x1b[0m\tok")
    session.receive_message(b"second line, not quoted")
    session.handle_timeout(114.9)
    assert [e for e in events(session) if isinstance(e, RequestFailed)] == []
    session.handle_timeout(115.0)
    [failed] = failures(session)
    assert failed.request_id == rid and isinstance(failed.error, RequestTimeoutError)
    assert str(failed.error) == (
        "initialize timed out (request 1); the server wrote output that is not JSON-RPC, "
        "first: [Starting server on stdio\\x1b[0m\\x09ok]"
    )


def test_a_timeout_without_unusable_output_says_nothing_more() -> None:
    session = ready_session()
    rid = session.send_request("tools/list", None, now=0.0, timeout=5.0)
    session.receive_message(b'{"jsonrpc":"2.0","id":999,"result":{}}')  # unknown id: usable
    session.handle_timeout(5.0)
    [failed] = failures(session)
    assert str(failed.error) == f"tools/list timed out (request {rid})"
    assert session.first_unusable is None


def test_the_quote_is_capped_and_escaped() -> None:
    line = "\u2028" + "y" * 5000
    quoted = quote_line(line.encode())
    assert quoted.startswith("\\u2028yyy") and quoted.endswith("...")
    assert len(quoted) < NOTE_CAP + 60
    assert "\n" not in quote_line(b"a\nb\r\n") and "\\x0a" in quote_line(b"a\nb")
    assert quote_line(b"caf\xe9 \xff") == "caf\\xe9 \\xff"
    assert quote_line("short") == "short"


@given(st.binary(max_size=3000) | st.text(max_size=3000))
def test_quote_line_is_always_one_bounded_safe_line(data: bytes | str) -> None:
    quoted = quote_line(data)
    assert len(quoted) <= NOTE_CAP + 40
    # No control characters, line separators or bidi overrides; encodable as UTF-8.
    assert not [ch for ch in quoted if ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0], quoted
    assert not set(quoted) & {"\u2028", "\u2029", "\u202e", "\u2066"}
    quoted.encode("utf-8")


def test_handshake_cut_short_after_unusable_output() -> None:
    session, _ = initializing()
    session.receive_message("Error: Cannot find module 'x'")
    cause = ConnectionError("server 's' closed its output (exit code 1)")
    session.connection_lost(cause)
    [failed] = failures(session)
    assert isinstance(failed.error, ConnectionError)
    assert str(failed.error) == (
        "server 's' closed its output (exit code 1); the server wrote output that is not "
        "JSON-RPC, first: [Error: Cannot find module 'x']"
    )
    assert failed.error.__cause__ is cause
    assert session.state is State.CLOSED


def test_other_connection_errors_keep_their_type() -> None:
    session, _ = initializing()
    session.receive_message("noise")
    error = LineTooLongError("too long")
    session.connection_lost(error)
    [failed] = failures(session)
    assert failed.error is error


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":ID,"result":{"text":"caf\xe9"}}',  # invalid UTF-8
        b'{"result":{"text":"ok"},"id":ID}',  # no jsonrpc member
        b'{"jsonrpc":"2.0","id":ID}',  # neither result nor error
        b'\xef\xbb\xbf{"jsonrpc":"1.0","id":ID,"result":{}}',  # BOM, wrong version
    ],
)
def test_an_undecodable_response_with_a_certain_id_fails_at_once(line: bytes) -> None:
    session = ready_session()
    other = session.send_request("ping", None, now=0.0, timeout=30.0)
    rid = session.send_request("tools/call", {"name": "t"}, now=0.0, timeout=30.0)
    session.receive_message(line.replace(b"ID", str(rid).encode()))
    got = events(session)
    assert isinstance(got[0], MessageDiscarded)
    [failed] = [e for e in got if isinstance(e, RequestFailed)]
    assert failed.request_id == rid and failed.method == "tools/call"
    assert isinstance(failed.error, RemoteProtocolError)
    assert "is not valid JSON-RPC" in str(failed.error)
    assert not session.is_pending(rid) and session.is_pending(other)
    # Its late real answer is then an unknown id, and the other request still works.
    session.receive_message(result(rid, {}))
    session.receive_message(result(other, {}))
    assert [type(e) for e in events(session)] == [MessageDiscarded, ResponseReceived]


@pytest.mark.parametrize(
    "line",
    [
        # Not JSON: the id is a guess (it could be a nested one).
        b'{"jsonrpc":"2.0","id":ID,"result":{"text":"cut',
        b'garbage "id":ID',
        # JSON, but the id is not top-level, or it is a request's.
        b'{"jsonrpc":"2.0","result":{"id":ID}}',
        b'{"jsonrpc":"2.0","id":ID,"method":7}',
        b'[{"jsonrpc":"2.0","id":ID}]',
        b'{"jsonrpc":"2.0","id":true}',
    ],
)
def test_no_request_fails_on_a_guess(line: bytes) -> None:
    session = ready_session()
    rid = session.send_request("tools/call", {"name": "t"}, now=0.0, timeout=30.0)
    session.receive_message(line.replace(b"ID", str(rid).encode()))
    assert failures(session) == []
    assert session.is_pending(rid)
    assert session.first_unusable is not None


def test_unknown_ids_fail_nothing_and_string_ids_are_matched_exactly() -> None:
    assert recover_response_id(b'{"id":"7","result":1') is None
    assert recover_response_id(b'{"id":"7"}') == "7"
    assert recover_response_id(json.dumps({"id": 7, "x": "\ud800"}).encode()) == 7
    session = ready_session()
    rid = session.send_request("ping", None, now=0.0, timeout=None)
    session.receive_message(f'{{"jsonrpc":"2.0","id":"{rid}"}}'.encode())  # "1" is not 1
    assert failures(session) == []
    assert session.is_pending(rid)


def test_a_flood_of_garbage_keeps_the_event_queue_bounded() -> None:
    """A server writing log lines to stdout hands over up to a MiB of them in one read,
    half a million lines before the driver takes any event: beyond DISCARD_BACKLOG
    queued events the discards are counted, and the count is reported with the next
    discard that finds room. The answer behind them still arrives."""
    session = ready_session()
    rid = session.send_request("tools/list", None, now=0.0, timeout=5.0)
    sent(session)
    for _ in range(DISCARD_BACKLOG + 5000):
        session.receive_message(b"y")
    session.receive_message(result(rid, {"tools": []}))
    queued = events(session)
    assert len(queued) == DISCARD_BACKLOG + 1
    assert all(isinstance(e, MessageDiscarded) for e in queued[:-1])
    assert queued[-1] == ResponseReceived(rid, "tools/list", {"tools": []})
    assert session.discards_unreported == 5000
    session.receive_message(b"one more")
    summary, last = events(session)
    assert summary == MessageDiscarded("5000 more messages discarded (too many)")
    assert isinstance(last, MessageDiscarded) and "invalid JSON" in last.reason
    assert session.discards_unreported == 0
    assert session.first_unusable == "y"


def test_a_line_that_is_not_an_object_has_no_recoverable_id() -> None:
    for data in (b"y", b"  [1]", b'"id"', b"\xef\xbb\xbf 42", b""):
        assert recover_response_id(data) is None
    assert recover_response_id(b' \t{"id": 7, "result": ') is None  # not JSON: no guess
    assert recover_response_id(b'\xef\xbb\xbf {"id": 7, "result": {"x": "\xff"}}') == 7
