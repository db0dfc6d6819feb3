"""Shared helpers for the pure core tests: JSON builders, a session in READY, an effect driver.

Nothing here does I/O: wire bytes are built by hand (like h2's ``FrameFactory``) and
operations are driven by a plain loop that performs scripted effects.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from mcp_proto.effects import Effect, Op
from mcp_proto.session import Session
from mcp_proto.types import Implementation

CLIENT_INFO = Implementation(name="test-client", version="9.9.9")


# ---------------------------------------------------------------- wire builders


def wire(obj: Any) -> bytes:
    """One JSON text, as a server would write it."""
    return json.dumps(obj, separators=(",", ":")).encode()


def result(request_id: Any, res: Any) -> bytes:
    return wire({"jsonrpc": "2.0", "id": request_id, "result": res})


def error(request_id: Any, code: Any, message: Any = "boom", data: Any = None) -> bytes:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return wire({"jsonrpc": "2.0", "id": request_id, "error": err})


def notification(method: str, params: Any = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return wire(msg)


def request(request_id: Any, method: str, params: Any = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        msg["params"] = params
    return wire(msg)


def sent(session: Session) -> list[dict[str, Any]]:
    """Drain and parse what the session queued."""
    out = []
    for item in session.data_to_send():
        assert isinstance(item, bytes)
        assert b"\n" not in item, "a queued message must never contain a raw newline"
        msg = json.loads(item)
        assert msg["jsonrpc"] == "2.0"
        out.append(msg)
    return out


def events(session: Session) -> list[Any]:
    """Drain every event the session has."""
    from mcp_proto import NEED_DATA

    out = []
    while True:
        event = session.next_event()
        if event is NEED_DATA:
            return out
        out.append(event)


ALL_CAPS: dict[str, Any] = {
    "logging": {},
    "completions": {},
    "prompts": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "tools": {"listChanged": True},
    "tasks": {"list": {}, "cancel": {}},
}


def ready_session(
    server_caps: dict[str, Any] | None = None,
    *,
    version: str = "2025-11-25",
    client_caps: dict[str, Any] | None = None,
    **kwargs: Any,
) -> Session:
    """A session whose handshake completed (outbox and events drained)."""
    session = Session(client_info=CLIENT_INFO, capabilities=client_caps or {}, **kwargs)
    rid = session.start_handshake(now=0.0, timeout=None)
    session.receive_message(
        result(
            rid,
            {
                "protocolVersion": version,
                "capabilities": ALL_CAPS if server_caps is None else server_caps,
                "serverInfo": {"name": "srv", "version": "1"},
            },
        )
    )
    (event,) = events(session)
    session.complete_handshake(event.result)
    session.data_to_send()
    return session


# ---------------------------------------------------------------- driving operations


def drive(op: Op[Any], perform: Callable[[Effect], Any]) -> Any:
    """Run ``op`` to completion, performing each effect with ``perform``.

    As the shells do: the effect's value is sent back, an exception it raised is
    thrown into the operation.
    """
    value: Any = None
    err: BaseException | None = None
    while True:
        try:
            effect = op.throw(err) if err is not None else op.send(value)
        except StopIteration as stop:
            return stop.value
        value, err = None, None
        try:
            value = perform(effect)
        except Exception as exc:
            err = exc


# ---------------------------------------------------------------- strategies

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=5)
request_ids = st.integers(min_value=-(2**53), max_value=2**53) | st.text(max_size=12)
