"""Fuzz target: answering server requests (``mcp_proto.handlers.serve_request``).

Feeds, structure-aware: a method (``ping``, ``roots/list``, ``sampling/createMessage``,
``elicitation/create``, or another), JSON params built from those requests' vocabulary
(messages, content blocks, tool uses and results, model preferences, requested schemas,
URL mode), what the host's handler does (returns one of many shapes, or raises) and
whether sampling with tools was opted in. JSON text is used as the params directly.

Contract: ``serve_request`` never raises (issue 11, case 1); it yields only ``CallHost``
and ``Log``; its ``Reply`` is a result or an error with a documented code (-32601,
-32602, -32603, -1); malformed params never reach the handler nor give -32603 (which
is a failing handler or elicitation content that does not fit); the
reply encodes as one JSON-RPC line.
"""

from __future__ import annotations

from typing import Any

from _fuzzlib import Reader, Target, drive_host_op, json_input, json_value

from mcp_proto import jsonrpc
from mcp_proto.handlers import Handlers, Reply, serve_request
from mcp_proto.types import Root

METHODS = ("sampling/createMessage", "elicitation/create", "roots/list", "ping", "x/other")
KEYS = (
    "messages",
    "role",
    "content",
    "type",
    "text",
    "id",
    "name",
    "input",
    "toolUseId",
    "maxTokens",
    "modelPreferences",
    "hints",
    "costPriority",
    "speedPriority",
    "intelligencePriority",
    "systemPrompt",
    "includeContext",
    "tools",
    "toolChoice",
    "mode",
    "message",
    "requestedSchema",
    "properties",
    "required",
    "default",
    "enum",
    "pattern",
    "url",
    "elicitationId",
    "_meta",
    "action",
    "data",
    "mimeType",
)
STRINGS = (
    "user",
    "assistant",
    "system",
    "text",
    "image",
    "audio",
    "tool_use",
    "tool_result",
    "form",
    "url",
    "object",
    "string",
    "integer",
    "thisServer",
    "allServers",
    "accept",
    "decline",
    "cancel",
    "a",
    "b",
)
HANDLER_RESULTS: tuple[Any, ...] = (
    "plain text",
    {"content": "x"},
    {"content": {"type": "text", "text": "t"}, "model": "m", "stopReason": "endTurn"},
    {"content": [{"type": "tool_use", "id": "a", "name": "t", "input": {}}]},
    {"action": "accept", "content": {"n": "v"}},
    {"action": "accept", "content": {"n": ["a", "b"]}},
    {"action": "decline"},
    {"action": "bogus"},
    {"action": ["accept"]},
    {"n": "answer"},
    {"n": {"nested": 1}},
    {1: "non-string key"},
    True,
    None,
    5,
    [],
    {"_meta": {"k": 1}, "action": "cancel"},
)


def _message(reader: Reader) -> dict[str, Any]:
    def block() -> Any:
        kind = reader.choice(("text", "tool_use", "tool_result", "image", None))
        if kind == "tool_use":
            return {"type": kind, "id": reader.choice(("a", "b", [], {}, None, 1)), "name": "t"}
        if kind == "tool_result":
            return {"type": kind, "toolUseId": reader.choice(("a", "b", [], {}, None, 7))}
        if kind is None:
            return json_value(reader, KEYS, STRINGS, max_depth=2)
        return {"type": kind, "text": "t"}

    content: Any = block() if reader.flag() else [block() for _ in range(reader.below(4))]
    return {"role": reader.choice(("user", "assistant", "system", None)), "content": content}


def _params(reader: Reader, method: str) -> Any:
    if reader.below(4) == 0:
        return json_value(reader, KEYS, STRINGS)
    params: dict[str, Any] = {}
    if method == "sampling/createMessage":
        params["messages"] = [_message(reader) for _ in range(reader.below(5))]
        params["maxTokens"] = reader.choice((5, 0, -1, True, "5", 10**400))
    elif method == "elicitation/create":
        params["mode"] = reader.choice(("form", "url", None, [], "other"))
        params["message"] = reader.choice(("Who?", None, 5))
        params["requestedSchema"] = json_value(reader, KEYS, STRINGS, max_depth=4)
        params["url"] = reader.choice(("https://example.com", None, ""))
    for _ in range(reader.below(3)):
        params[reader.choice(KEYS)] = json_value(reader, KEYS, STRINGS, max_depth=3)
    return params


def check(data: bytes) -> None:
    reader = Reader(data[:2])
    method = METHODS[reader.below(len(METHODS))]
    choice = reader.byte()
    result = HANDLER_RESULTS[choice % len(HANDLER_RESULTS)]
    raises = choice % 7 == 0
    params = json_input(data[2:], lambda r: _params(r, method))
    if not isinstance(params, dict):
        params = {}  # the session hands serve_request an object (ServerRequest.params)
    calls: list[Any] = []

    def handler(*args: Any) -> Any:
        calls.append(args)
        if raises:
            raise RuntimeError("host failure")
        return result

    handlers = Handlers(
        sampling=handler,
        sampling_supports_tools=bool(choice & 0x40),
        elicitation=handler,
        roots=lambda: [Root("file:///r")] if not raises else handler(),
    )
    reply = drive_host_op(serve_request(handlers, method, params, server="fuzz"))
    assert isinstance(reply, Reply)
    if reply.code is None:
        jsonrpc.encode_result(1, reply.result)
    else:
        assert reply.code in (-32601, -32602, -32603, -1), reply
        assert isinstance(reply.message, str) and reply.message
        if reply.code == -32602:
            assert not calls, "malformed params reached the handler"
        if reply.code == -32603:
            # A failing host handler, or form content that does not fit (ELIC-6, §B2):
            # the handler answered, and its answer is not transmitted.
            rejected = method == "elicitation/create" and bool(calls)
            assert raises or rejected, "an internal error without a failing host handler"
        jsonrpc.encode_error(1, reply.code, reply.message)


TARGET = Target(
    name="serve_request",
    description="server request method + JSON params + host behaviour -> Reply",
    check=check,
    seeds=(
        b"\x00\x01"
        + b'{"messages":[{"role":"user","content":{"type":"tool_result","toolUseId":[]}}],'
        b'"maxTokens":5}',
        b"\x00\x02" + b'{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}',
        b"\x01\x04"
        + b'{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":'
        b'{"n":{"type":"string","pattern":"a{' + b"1" * 4301 + b'}"}}}}',
        b"\x01\x09" + b'{"mode":"url","url":"https://example.com","elicitationId":"e"}',
        b"\x02\x00{}",
        b"\x03\x03{}",
        b"\x00\x41" + b"\x05\x03\x02\x01\x00\x09",
    ),
    max_len=8192,
)

if __name__ == "__main__":
    from run import main

    main(["serve_request"])
