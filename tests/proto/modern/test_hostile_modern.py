"""The scripted modern peer (tests/servers/hostile_modern.py) speaks the 2026-07-28 wire.

Pure: the peer's script is driven directly (no process, no socket) with requests a
client would send, and every message it answers with is validated against the
2026-07-28 schema: valid in every mode, except the modes that break the schema on
purpose, which must break it exactly where their documentation says.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.proto.modern._modern_wire import errors_of, request

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "servers"))
import hostile_modern

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}

#: The schema definition each method's successful result must satisfy.
RESULT_DEFS = {
    "server/discover": "DiscoverResult",
    "tools/list": "ListToolsResult",
    "resources/list": "ListResourcesResult",
    "resources/read": "ReadResourceResult",
}


def params(**extra: Any) -> dict[str, Any]:
    return {"_meta": dict(META), **extra}


def session(peer: hostile_modern.Peer) -> list[tuple[str, dict[str, Any], Any]]:
    """A client's whole visit: (method, request params, every message sent back)."""
    script: list[tuple[str, dict[str, Any]]] = [
        ("server/discover", params()),
        ("server/discover", params()),
        ("tools/list", params()),
        ("tools/call", params(name="t", arguments={})),
        ("tools/call", params(name="t", arguments={})),
        ("tools/call", params(name="h", arguments={"region": "eu"})),
        ("resources/list", params()),
        ("resources/read", params(uri="demo://r")),
        ("subscriptions/listen", params(notifications={"resourceSubscriptions": ["demo://r"]})),
        (
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        ),
        ("bogus/method", params()),
    ]
    visits = []
    for i, (method, p) in enumerate(script, start=1):
        # Follow input_required rounds the way a client would (requestState echoed).
        for _round in range(12):
            sent = list(
                hostile_modern.sent_messages(peer.handle(request(method, p, i * 100 + _round)))
            )
            visits.append((method, p, sent))
            last = sent[-1] if sent else {}
            result = last.get("result", {}) if isinstance(last, dict) else {}
            if method != "tools/call" or result.get("resultType") != "input_required":
                break
            if not isinstance(result.get("inputRequests"), (dict, type(None))):
                break
            p = {
                **p,
                "requestState": result.get("requestState"),
                "inputResponses": {
                    k: {"action": "accept", "content": {"ok": True}}
                    for k in (result.get("inputRequests") or {})
                },
            }
            p = {k: v for k, v in p.items() if v is not None}
    return visits


def problems(method: str, message: dict[str, Any]) -> list[str]:
    """Schema problems of one message the peer sent."""
    if "method" in message:  # a notification
        return errors_of("ServerNotification", message) + errors_of("JSONRPCNotification", message)
    if "error" in message:
        found = errors_of("JSONRPCErrorResponse", message)
        code = message["error"]["code"]
        if code == -32022:
            found += errors_of("UnsupportedProtocolVersionError", message)
        if code == -32020:
            found += errors_of("HeaderMismatchError", message)
        return found
    found = errors_of("JSONRPCResultResponse", message) + errors_of(
        "ServerResult", message["result"]
    )
    result = message["result"]
    if result.get("resultType") == "input_required":
        return found + errors_of("InputRequiredResult", result)
    if method in RESULT_DEFS:
        found += errors_of(RESULT_DEFS[method], result)
    if method == "tools/call":
        found += errors_of("CallToolResult", result)
    return found


VALID_MODES = sorted(
    (hostile_modern.MODES - hostile_modern.INVALID_MODES)
    | {"input_required,private_scope", "mismatch_twice,listen_flood", "unsupported_request"}
)


@pytest.mark.parametrize("mode", VALID_MODES)
def test_every_message_validates_against_the_2026_07_28_schema(mode: str) -> None:
    peer = hostile_modern.Peer(mode, count=200, pad=64)
    visits = session(peer)
    sent = [(method, m) for method, _p, msgs in visits for m in msgs]
    assert sent, mode
    for method, message in sent:
        assert problems(method, message) == [], (mode, method, json.dumps(message)[:400])


@pytest.mark.parametrize(
    ("mode", "where"),
    [
        ("ttl_negative", "ttlMs"),
        ("ttl_missing", "ttlMs"),
        ("ttl_string", "ttlMs"),
        ("bad_input_requests", "inputRequests"),
    ],
)
def test_the_invalid_modes_break_the_schema_only_where_documented(mode: str, where: str) -> None:
    visits = session(hostile_modern.Peer(mode))
    broken = [
        (method, message)
        for method, _p, msgs in visits
        for message in msgs
        if problems(method, message)
    ]
    assert broken, f"{mode} sent nothing invalid"
    for method, message in broken:
        result = message["result"]
        if where == "ttlMs":
            assert method in hostile_modern.CACHEABLE, method
            assert result.get("ttlMs", "absent") in (-5, "60000", "absent")
            # The same message with a valid ttlMs validates: nothing else is wrong.
            fixed = {**message, "result": {**result, "ttlMs": 1}}
        else:
            assert method == "tools/call"
            fixed = {**message, "result": {**result, "inputRequests": {}}}
        assert problems(method, fixed) == [], (mode, method)


def test_the_script_is_what_the_docstring_says() -> None:
    """A few of the contract's facts that the shell tests build on."""
    peer = hostile_modern.Peer("mismatch_once,input_required", rounds=2)
    first = peer.handle(request("tools/call", params(name="t", arguments={}), 1))
    assert first[0][1]["error"]["code"] == -32020
    assert hostile_modern.status_of(first) == 400
    # After the mismatch the annotated tool's definition changed (a refresh differs).
    listed = peer.handle(request("tools/list", params(), 2))[0][1]["result"]["tools"]
    h = next(t for t in listed if t["name"] == "h")
    assert h["inputSchema"]["properties"]["region"]["x-mcp-header"] == "Zone"
    r1 = peer.handle(request("tools/call", params(name="t", arguments={}), 3))[0][1]["result"]
    assert (r1["resultType"], r1["requestState"]) == ("input_required", "round-1")
    r2 = peer.handle(request("tools/call", params(name="t", requestState="round-1"), 4))
    assert r2[0][1]["result"]["requestState"] == "round-2"
    done = peer.handle(request("tools/call", params(name="t", requestState="round-2"), 5))
    assert done[0][1]["result"]["content"][0]["text"] == "done after 2 rounds"
    # break modes cut the answer before / after the result (HTTP), once.
    before = hostile_modern.Peer("break_before")
    assert [k for k, _ in before.handle(request("tools/call", params(name="t"), 1))] == ["break"]
    assert [k for k, _ in before.handle(request("tools/call", params(name="t"), 2))] == ["message"]
    after = hostile_modern.Peer("break_after")
    assert [k for k, _ in after.handle(request("tools/call", params(name="t"), 1))] == [
        "message",
        "break",
    ]
    # the flood: ack first, then count notifications about `distinct` URIs, then hold.
    flood = hostile_modern.Peer("listen_flood", count=30, distinct=3)
    out = flood.handle(request("subscriptions/listen", params(notifications={}), 9))
    assert out[0][1]["method"] == "notifications/subscriptions/acknowledged"
    assert out[0][1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 9
    uris = {m["params"]["uri"] for k, m in out[1:] if k == "message"}
    assert (len(out), uris, out[-1][0]) == (32, {"demo://r/0", "demo://r/1", "demo://r/2"}, "hold")
    with pytest.raises(ValueError, match="unknown mode"):
        hostile_modern.Peer("nonsense")
