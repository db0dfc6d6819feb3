"""``connect`` with transport detection and fallback as one core operation (issue 9).

``targets.connect_op`` yields one ``TryConnect`` per transport of a plan and decides
itself whether the next may be tried. These tests drive it as a shell would, with the
outcome of each try built from the facts the shell meets (HTTP status and body through
``mcp_proto.http``, JSON-RPC answers and timeouts through a ``Session``; time is a
number): no sockets, no processes. The shells' behaviour over real and scripted servers
is in tests/shells/test_targets.py and tests/shells/test_no_fallback.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from mcp_proto import errors
from mcp_proto.effects import Attempt, Effect, Op, TryConnect
from mcp_proto.events import RequestFailed
from mcp_proto.http import error_for_response
from mcp_proto.server_config import ServerConfig
from mcp_proto.server_view import ServerView
from mcp_proto.session import ServerInfo, Session
from mcp_proto.targets import Plan, connect_all, connect_op, plan_targets
from mcp_proto.types import Implementation

URL = "http://127.0.0.1:9/x"
# The chain an ambiguous URL gets (CONN-6), as "transport: METHOD url".
CHAIN = [
    "streamable_http: POST http://127.0.0.1:9/x",
    "sse: GET http://127.0.0.1:9/x",
    "http: POST http://127.0.0.1:9/x",
]
CHALLENGE = 'Bearer resource_metadata="https://h/.well-known/oauth-protected-resource"'


def _session() -> tuple[Session, Any]:
    session = Session(client_info=Implementation(name="t", version="0"), capabilities={})
    rid = session.start_handshake(now=0.0, timeout=10.0)
    return session, rid


def _handshake_result(rid: Any) -> bytes:
    result = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"},
    }
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()


def answered(session: Session, rid: Any) -> ServerInfo:
    """The server answered initialize: the session completes the handshake."""
    session.receive_message(_handshake_result(rid))
    event = session.next_event()
    assert not isinstance(event, RequestFailed)
    return session.complete_handshake(event.result)  # type: ignore[union-attr]


def ok() -> Attempt:
    session, rid = _session()
    return Attempt(info=answered(session, rid))


def http(status: int, body: bytes = b"", challenge: str | None = None) -> Attempt:
    """An HTTP answer to the initialize POST (or the SSE GET), typed by the core."""
    error = error_for_response(status, body, method="initialize", www_authenticate=challenge)
    return Attempt(error=error)


def jsonrpc_error() -> Attempt:
    """A JSON-RPC error response to initialize (200 + JSON body, or stdio)."""
    session, rid = _session()
    body = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": "bad params"}}
    session.receive_message(json.dumps(body).encode())
    event = session.next_event()
    assert isinstance(event, RequestFailed)
    return Attempt(error=event.error)


def timed_out() -> Attempt:
    """Nothing answered initialize before its deadline (time as a number)."""
    session, _ = _session()
    assert session.next_deadline() == 10.0
    session.handle_timeout(10.5)
    event = session.next_event()
    assert isinstance(event, RequestFailed)
    return Attempt(error=event.error)


def refused() -> Attempt:
    return Attempt(error=errors.TransportError("connection refused"))


def answered_then_failed() -> Attempt:
    """initialize answered (a session id assigned), then the initialized notification
    refused with a bare 400: a bare 400 alone would fall back."""
    session, rid = _session()
    answered(session, rid)
    error = error_for_response(400, b"Bad Request", method="notifications/initialized")
    return Attempt(error=error, server_answered=True)


def drive(op: Op[Any], outcomes: Sequence[Callable[[], Attempt]]) -> tuple[Any, list[Effect]]:
    """Perform ``op``'s effects as a shell's driver does; each TryConnect gets the next
    outcome. Returns (the op's value or the error it raised, the effects it yielded)."""
    seen: list[Effect] = []
    value: Any = None
    pending = list(outcomes)
    while True:
        try:
            effect = op.send(value)
        except StopIteration as stop:
            return stop.value, seen
        except errors.MCPError as exc:
            return exc, seen
        seen.append(effect)
        assert isinstance(effect, TryConnect)
        value = pending.pop(0)()


def tried(effects: list[Effect], plan: Plan) -> list[str]:
    """Which transports the op tried, from the configs its TryConnects named."""
    out = []
    current: ServerConfig = plan.configs[0]
    for effect in effects:
        assert isinstance(effect, TryConnect) and effect.server == "srv"
        if effect.config is not None:
            current = effect.config
        method = "GET" if current.type == "sse" else "POST"
        out.append(f"{current.type}: {method} {current.endpoint_url}")
    return out


@pytest.fixture
def plan() -> Plan:
    (p,) = plan_targets(URL)
    assert len(p.configs) == 3
    return p


# (what the first try met, falls back to the next transport?)
NO_FALLBACK: list[tuple[str, Callable[[], Attempt], type[errors.MCPError]]] = [
    ("401", lambda: http(401, b"", CHALLENGE), errors.UnauthorizedError),
    ("401 without a challenge", lambda: http(401), errors.UnauthorizedError),
    ("403", lambda: http(403), errors.UnauthorizedError),
    (
        "403 insufficient_scope",
        lambda: http(403, b"", 'Bearer error="insufficient_scope"'),
        errors.InsufficientScopeError,
    ),
    ("a JSON-RPC error answer", jsonrpc_error, errors.ServerError),
    (
        "a 4xx carrying a JSON-RPC error",
        lambda: http(400, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"no"}}'),
        errors.ServerError,
    ),
    ("initialize answered, then a bare 400", answered_then_failed, errors.ServerError),
]


@pytest.mark.parametrize(
    ("first", "cls"), [(f, c) for _, f, c in NO_FALLBACK], ids=[w for w, _, _ in NO_FALLBACK]
)
def test_an_answer_from_an_mcp_server_ends_the_chain(
    plan: Plan, first: Callable[[], Attempt], cls: type[errors.MCPError]
) -> None:
    outcome, effects = drive(connect_op("srv", plan), [first, ok, ok])
    # The error the shell met, as it is: not AllTransportsFailedError.
    assert type(outcome) is cls
    assert not isinstance(outcome, errors.AllTransportsFailedError)
    assert tried(effects, plan) == CHAIN[:1]
    # The first try names no config: the server was built on the first one.
    assert effects == [TryConnect("srv", None)]


def test_the_401_keeps_its_challenge(plan: Plan) -> None:
    outcome, _ = drive(connect_op("srv", plan), [lambda: http(401, b"", CHALLENGE)])
    assert isinstance(outcome, errors.UnauthorizedError)
    assert (outcome.status, outcome.resource_metadata) == (
        401,
        "https://h/.well-known/oauth-protected-resource",
    )


FALLS_BACK: list[tuple[str, Callable[[], Attempt]]] = [
    ("connection refused", refused),
    ("404 on POST", lambda: http(404, b"Not Found")),
    ("405 on POST", lambda: http(405, b"Method Not Allowed")),
    ("an HTML error page", lambda: http(502, b"<html>bad gateway</html>")),
    ("no answer before the deadline", timed_out),
]


@pytest.mark.parametrize("first", [f for _, f in FALLS_BACK], ids=[w for w, _ in FALLS_BACK])
def test_no_answer_from_an_mcp_server_tries_the_next_transport(
    plan: Plan, first: Callable[[], Attempt]
) -> None:
    outcome, effects = drive(connect_op("srv", plan), [first, ok])
    assert isinstance(outcome, ServerInfo)
    assert outcome.server_info == Implementation(name="s", version="1")
    assert tried(effects, plan) == CHAIN[:2]
    assert effects[1] == TryConnect("srv", plan.configs[1])


def test_fallback_goes_on_until_one_transport_answers(plan: Plan) -> None:
    outcome, effects = drive(connect_op("srv", plan), [refused, lambda: http(405), ok])
    assert isinstance(outcome, ServerInfo)
    assert tried(effects, plan) == CHAIN


def test_a_401_after_a_fallback_still_ends_the_chain(plan: Plan) -> None:
    outcome, effects = drive(connect_op("srv", plan), [lambda: http(404), lambda: http(401), ok])
    assert isinstance(outcome, errors.UnauthorizedError)
    assert tried(effects, plan) == CHAIN[:2]


def test_all_transports_failed_names_every_url_tried(plan: Plan) -> None:
    outcome, effects = drive(
        connect_op("srv", plan), [refused, lambda: http(404, b"Not Found"), timed_out]
    )
    assert isinstance(outcome, errors.AllTransportsFailedError)
    assert isinstance(outcome, errors.ConnectionError)
    assert tried(effects, plan) == CHAIN
    assert [(kind, url) for kind, url, _ in outcome.attempts] == [
        ("streamable_http", "http://127.0.0.1:9/x"),
        ("sse", "http://127.0.0.1:9/x"),
        ("http", "http://127.0.0.1:9/x"),
    ]
    assert [type(e) for _, _, e in outcome.attempts] == [
        errors.TransportError,
        errors.ServerError,
        errors.RequestTimeoutError,
    ]
    message = str(outcome)
    for attempt in CHAIN:
        assert attempt in message
    assert "HTTP 404 from the server" in message


@pytest.mark.parametrize("target", [URL.replace("/x", "/mcp"), "python server.py"])
def test_a_single_transport_raises_its_own_error(target: str) -> None:
    # /mcp is Streamable HTTP and a command is stdio (CONN-2, CONN-5): nothing to fall
    # back to, so even a failure that would fall back is raised as it is.
    (plan,) = plan_targets(target)
    outcome, effects = drive(connect_op("srv", plan), [refused])
    assert type(outcome) is errors.TransportError
    assert effects == [TryConnect("srv", None)]


def test_connect_all_connects_each_server_in_turn_and_stops_at_the_first_failure() -> None:
    plans = plan_targets([URL, URL.replace("/x", "/mcp"), "python s.py"])
    op = connect_all(["a", "b", "c"], plans)
    outcome, effects = drive(op, [ok, lambda: http(401), ok])
    assert isinstance(outcome, errors.UnauthorizedError)
    # Several targets: an ambiguous URL is Streamable HTTP only (CONN-9).
    assert effects == [TryConnect("a", None), TryConnect("b", None)]

    outcome, effects = drive(connect_all(["a", "b", "c"], plans), [ok, ok, ok])
    assert [type(i) for i in outcome] == [ServerInfo] * 3
    assert [e.server for e in effects if isinstance(e, TryConnect)] == ["a", "b", "c"]


def test_connect_all_needs_one_name_per_plan() -> None:
    with pytest.raises(ValueError, match="one server name per plan"):
        next(connect_all(["a"], plan_targets([URL, URL])))


# ------------------------------------------------ the fact a shell reports: server_answered


class _SessionConn:
    """The two facts ServerView reads from a connection, from the session inside it."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.is_connected = False

    @property
    def server(self) -> ServerInfo | None:
        return self.session.server


class _View(ServerView):
    def __init__(self, session: Session | None) -> None:
        self._conn = _SessionConn(session) if session is not None else None


def test_server_answered_is_true_once_initialize_was_answered() -> None:
    assert _View(None).server_answered is False
    session, rid = _session()
    view = _View(session)
    assert view.server_answered is False  # initialize sent, no answer yet
    answered(session, rid)
    assert view.server_answered is True
    # The connection failing after the answer does not change the fact.
    session.connection_lost(errors.TransportError("connection reset"))
    assert view.server_answered is True
