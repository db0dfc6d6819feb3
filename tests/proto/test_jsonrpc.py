"""JSON-RPC 2.0 decoding of peer bytes and encoding of ours (STDIO-2, HYG-1)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _proto_support import json_objects, json_values, request_ids
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto import jsonrpc
from mcp_proto.jsonrpc import (
    ErrorResponse,
    Invalid,
    Notification,
    Request,
    Response,
    decode,
    encode_error,
    encode_notification,
    encode_request,
    encode_result,
)


def one(data: bytes | str) -> jsonrpc.Message:
    (message,) = list(decode(data))
    return message


# ---------------------------------------------------------------- every message kind


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{"jsonrpc":"2.0","id":1,"method":"ping"}',
            Request(1, "ping", None),
        ),
        (
            '{"jsonrpc":"2.0","id":"a-1","method":"roots/list","params":{"x":1}}',
            Request("a-1", "roots/list", {"x": 1}),
        ),
        (
            '{"jsonrpc":"2.0","id":0,"method":"m","params":null}',
            Request(0, "m", None),
        ),
        (
            '{"jsonrpc":"2.0","method":"notifications/initialized"}',
            Notification("notifications/initialized", None),
        ),
        (
            '{"jsonrpc":"2.0","method":"n","params":{"a":[1,2]}}',
            Notification("n", {"a": [1, 2]}),
        ),
        ('{"jsonrpc":"2.0","id":7,"result":{}}', Response(7, {})),
        ('{"jsonrpc":"2.0","id":"s","result":null}', Response("s", None)),
        ('{"jsonrpc":"2.0","id":-3,"result":[1]}', Response(-3, [1])),
        (
            '{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"nope"}}',
            ErrorResponse(7, {"code": -32601, "message": "nope"}),
        ),
        (
            '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}',
            ErrorResponse(None, {"code": -32700, "message": "parse"}),
        ),
        (
            '{"jsonrpc":"2.0","error":{"code":-32700,"message":"parse"}}',
            ErrorResponse(None, {"code": -32700, "message": "parse"}),
        ),
        # A malformed error member is still an error response; its shape is the
        # session's business (server_error_from).
        ('{"jsonrpc":"2.0","id":1,"error":"boom"}', ErrorResponse(1, "boom")),
        ('{"jsonrpc":"2.0","id":1,"error":null}', ErrorResponse(1, None)),
    ],
)
def test_decode_message_kinds(text: str, expected: jsonrpc.Message) -> None:
    assert one(text) == expected
    assert one(text.encode()) == expected


@pytest.mark.parametrize(
    ("text", "reason_part"),
    [
        # wrong or missing jsonrpc member
        ('{"id":1,"method":"ping"}', "jsonrpc"),
        ('{"jsonrpc":"1.0","id":1,"method":"ping"}', "jsonrpc"),
        ('{"jsonrpc":2.0,"id":1,"method":"ping"}', "jsonrpc"),
        ('{"jsonrpc":null,"id":1,"result":{}}', "jsonrpc"),
        # method
        ('{"jsonrpc":"2.0","id":1,"method":5}', "method"),
        ('{"jsonrpc":"2.0","method":["a"]}', "method"),
        # params must be an object in MCP (no positional arrays)
        ('{"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]}', "params"),
        ('{"jsonrpc":"2.0","method":"m","params":[]}', "params"),
        ('{"jsonrpc":"2.0","method":"m","params":"x"}', "params"),
        ('{"jsonrpc":"2.0","method":"m","params":0}', "params"),
        # ids: bool is an int subclass in Python and must not pass as an id
        ('{"jsonrpc":"2.0","id":true,"method":"m"}', "id"),
        ('{"jsonrpc":"2.0","id":false,"result":{}}', "id"),
        ('{"jsonrpc":"2.0","id":true,"error":{"code":1,"message":"x"}}', "id"),
        ('{"jsonrpc":"2.0","id":1.5,"method":"m"}', "id"),
        ('{"jsonrpc":"2.0","id":1.0,"result":{}}', "id"),
        ('{"jsonrpc":"2.0","id":null,"method":"m"}', "id"),
        ('{"jsonrpc":"2.0","id":null,"result":{}}', "id"),
        ('{"jsonrpc":"2.0","result":{}}', "id"),
        ('{"jsonrpc":"2.0","id":{},"result":{}}', "id"),
        ('{"jsonrpc":"2.0","id":[1],"error":{}}', "id"),
        # nothing to go on
        ('{"jsonrpc":"2.0"}', "neither"),
        ('{"jsonrpc":"2.0","id":1}', "neither"),
        ('{"jsonrpc":"2.0","method":null,"id":1}', "neither"),
        ("{}", "jsonrpc"),
    ],
)
def test_decode_malformed_objects(text: str, reason_part: str) -> None:
    message = one(text)
    assert isinstance(message, Invalid)
    assert reason_part in message.reason


@pytest.mark.parametrize(
    ("text", "type_name"),
    [("42", "int"), ('"str"', "str"), ("null", "NoneType"), ("true", "bool"), ("1.5", "float")],
)
def test_decode_non_objects(text: str, type_name: str) -> None:
    message = one(text)
    assert message == Invalid(f"not a JSON object ({type_name})")


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"   ",
        b"not json",
        b"{",
        b'{"jsonrpc":"2.0",',
        b'{"jsonrpc":"2.0","id":1,"result":{}} trailing',
        b"{'single': 'quotes'}",
        b"\x00",
        b"\xff\xfe\x00\x00",
        b"\x80abc",
        b'{"jsonrpc":"2.0","id":1,"result":"\xc3\x28"}',  # invalid UTF-8 inside a string
        b"\xed\xa0\x80",  # an encoded surrogate is not UTF-8
        b"[" * 100_000,  # nesting deep enough to hit the recursion limit
        b"[" * 100_000 + b"]" * 100_000,
        b"9" * 5000,  # past CPython's int-digit limit: ValueError, not a crash
    ],
)
def test_decode_garbage_never_raises(data: bytes) -> None:
    messages = list(decode(data))
    assert len(messages) == 1
    assert isinstance(messages[0], Invalid)
    # Same for the str form where it exists.
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return
    assert all(isinstance(m, Invalid) for m in decode(text))


def test_decode_utf16_is_refused() -> None:
    """MCP messages MUST be UTF-8; json.loads alone would sniff UTF-16 from bytes."""
    msg = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}})
    for encoding in ("utf-16", "utf-16-le", "utf-32"):
        (message,) = decode(msg.encode(encoding))
        assert isinstance(message, Invalid), encoding


def test_decode_invalid_utf8_reason_names_position_only() -> None:
    data = b'{"jsonrpc":"2.0","id":1,"result":"secret\xff"}'
    (message,) = decode(data)
    assert isinstance(message, Invalid)
    where = data.index(b"\xff")
    assert message.reason == f"invalid UTF-8 at byte {where} in a {len(data)}-byte message"


@given(st.text(max_size=40))
def test_a_text_json_cannot_parse_is_reported_where_json_reports_it(text: str) -> None:
    """A line that cannot start a JSON value is turned away by a check, not by json
    raising (a server flooding stdout with log lines); the reason is the one json's own
    error gives, whichever path found it."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        expected = f"invalid JSON at character {exc.pos} in a {len(text)}-character message"
    except RecursionError:  # pragma: no cover - not reachable at this size
        return
    else:
        return
    (message,) = decode(text)
    assert message == Invalid(expected)


@pytest.mark.parametrize("text", ["y", "  Starting server...", "", "   ", "\ufeff{}", "}"])
def test_lines_that_cannot_start_a_json_value(text: str) -> None:
    (message,) = decode(text)
    start = len(text) - len(text.lstrip(" \t\n\r"))
    assert message == Invalid(
        f"invalid JSON at character {start} in a {len(text)}-character message"
    )


def test_decode_utf8_bom_tolerated() -> None:
    assert one(b'\xef\xbb\xbf{"jsonrpc":"2.0","method":"n"}') == Notification("n", None)


def test_decode_non_ascii_and_escapes() -> None:
    text = '{"jsonrpc":"2.0","method":"n","params":{"t":"h\\u00e9 \\u2603 \\ud83d\\ude00 é"}}'
    assert one(text.encode()) == Notification("n", {"t": "hé ☃ 😀 é"})


def test_decode_lone_surrogate_escape_is_accepted_and_reencodable() -> None:
    """json.loads accepts "\\ud800"; answering such an id must still encode."""
    (message,) = decode(rb'{"jsonrpc":"2.0","id":"\ud800","method":"ping"}')
    assert message == Request("\ud800", "ping", None)
    wire = encode_result(message.id, {})
    assert wire.isascii()
    assert one(wire) == Response("\ud800", {})
    assert one(encode_error("\ud800", -32601, "x\udfff")) == ErrorResponse(
        "\ud800", {"code": -32601, "message": "x\udfff"}
    )


# ---------------------------------------------------------------- batches


def test_batch_each_element_decoded_on_its_own() -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "result": {"a": 1}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
        42,
        [],
        {"jsonrpc": "1.0", "id": 2, "result": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "ping"},
        {"jsonrpc": "2.0", "id": 4, "error": {"code": -1, "message": "m"}},
    ]
    messages = list(decode(json.dumps(batch)))
    assert messages == [
        Response(1, {"a": 1}),
        Notification("notifications/progress", {"progress": 1}),
        Invalid("not a JSON object (int)"),
        Invalid("not a JSON object (list)"),
        Invalid("missing or wrong 'jsonrpc' member"),
        Request(3, "ping", None),
        ErrorResponse(4, {"code": -1, "message": "m"}),
    ]


def test_empty_batch() -> None:
    assert list(decode("[]")) == [Invalid("empty batch")]


# ---------------------------------------------------------------- HYG-1: no payload in reasons

SECRET = "sk-SECRET-0123456789abcdef"


@pytest.mark.parametrize(
    "text",
    [
        f"{SECRET}",
        f'{{"jsonrpc":"2.0","id":1,"result":"{SECRET}"',
        f'{{"jsonrpc":"2.0","id":"{SECRET}","result":{{}}}} {SECRET}',
        f'{{"jsonrpc":"2.0","id":1,"method":"{SECRET}","params":["{SECRET}"]}}',
        f'{{"jsonrpc":"{SECRET}","id":1,"result":{{}}}}',
        f'{{"jsonrpc":"2.0","id":{{"k":"{SECRET}"}},"result":{{}}}}',
        f'["{SECRET}"]',
        f'"{SECRET}"',
        f'{{"jsonrpc":"2.0","{SECRET}":1}}',
    ],
)
def test_reasons_never_quote_the_payload(text: str) -> None:
    for data in (text, text.encode(), text.encode() + b"\xff"):
        for message in decode(data):
            if isinstance(message, Invalid):
                assert "SECRET" not in message.reason
                assert len(message.reason) < 100


@settings(deadline=None)
@given(
    prefix=st.binary(max_size=40),
    suffix=st.binary(max_size=40),
    secret=st.from_regex(r"[A-Za-z]{12,20}", fullmatch=True),
)
def test_reasons_never_quote_the_payload_property(
    prefix: bytes, suffix: bytes, secret: str
) -> None:
    data = prefix + secret.encode() + suffix
    for message in decode(data):
        if isinstance(message, Invalid):
            assert secret not in message.reason


@settings(deadline=None)
@given(st.binary(max_size=200))
def test_decode_any_bytes_never_raises(data: bytes) -> None:
    for message in decode(data):
        assert isinstance(message, (Request, Notification, Response, ErrorResponse, Invalid))


@settings(deadline=None)
@given(json_values)
def test_decode_any_json_value_never_raises(value: Any) -> None:
    for message in decode(json.dumps(value)):
        assert isinstance(message, (Request, Notification, Response, ErrorResponse, Invalid))


# ---------------------------------------------------------------- encoding


def test_encode_shapes() -> None:
    assert json.loads(encode_request(1, "ping", None)) == {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "ping",
    }
    assert json.loads(encode_notification("n", None)) == {"jsonrpc": "2.0", "method": "n"}
    assert json.loads(encode_error(1, -32601, "Method not found")) == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32601, "message": "Method not found"},
    }
    assert json.loads(encode_error(1, -32603, "x", {"d": 1}))["error"]["data"] == {"d": 1}
    # Compact, and non-ASCII text stays at its UTF-8 size.
    assert (
        encode_notification("n", {"t": "é"})
        == '{"jsonrpc":"2.0","method":"n","params":{"t":"é"}}'.encode()
    )


@settings(deadline=None)
@given(request_ids, st.text(min_size=1, max_size=30), st.none() | json_objects)
def test_request_round_trip(request_id: Any, method: str, params: Any) -> None:
    data = encode_request(request_id, method, params)
    assert b"\n" not in data  # safe to frame with a newline (stdio)
    assert one(data) == Request(request_id, method, params)


@settings(deadline=None)
@given(st.text(min_size=1, max_size=30), st.none() | json_objects)
def test_notification_round_trip(method: str, params: Any) -> None:
    data = encode_notification(method, params)
    assert b"\n" not in data
    assert one(data) == Notification(method, params)


@settings(deadline=None)
@given(request_ids, json_values)
def test_result_round_trip(request_id: Any, res: Any) -> None:
    data = encode_result(request_id, res)
    assert b"\n" not in data
    assert one(data) == Response(request_id, res)


@settings(deadline=None)
@given(request_ids, st.integers(-(2**31), 2**31), st.text(max_size=30), json_values)
def test_error_round_trip(request_id: Any, code: int, message: str, data: Any) -> None:
    encoded = encode_error(request_id, code, message, data)
    assert b"\n" not in encoded
    expected: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        expected["data"] = data
    assert one(encoded) == ErrorResponse(request_id, expected)


def test_error_codes() -> None:
    assert (
        jsonrpc.PARSE_ERROR,
        jsonrpc.INVALID_REQUEST,
        jsonrpc.METHOD_NOT_FOUND,
        jsonrpc.INVALID_PARAMS,
        jsonrpc.INTERNAL_ERROR,
    ) == (-32700, -32600, -32601, -32602, -32603)


# ---------------------------------------------------------------- the decoder's json.loads


def _outcome(loads: Any, text: str) -> Any:
    try:
        return ("ok", repr(loads(text)))
    except json.JSONDecodeError as exc:
        return ("error", exc.msg, exc.pos)
    except RecursionError:
        return ("recursion",)


@settings(max_examples=300)
@given(
    st.one_of(
        json_values.map(json.dumps),
        json_values.map(lambda v: f" \t{json.dumps(v, indent=1)}\r\n"),
        st.text(alphabet='{}[]":,0123456789.eE-+ tnrufalsNIiy\\\n x', max_size=30),
    )
)
def test_the_decoder_parses_exactly_as_json_loads(text: str) -> None:
    """``decode`` calls the standard C scanner directly: same values, same errors and
    error positions as ``json.loads`` (so the "invalid JSON at character N" text too)."""
    assert _outcome(jsonrpc._loads, text) == _outcome(json.loads, text)


def test_the_decoder_reports_extra_data_and_empty_text() -> None:
    assert _outcome(jsonrpc._loads, '{"a":1} x') == ("error", "Extra data", 8)
    assert _outcome(jsonrpc._loads, "   ") == ("error", "Expecting value", 3)
    assert _outcome(jsonrpc._loads, "[" * 100_000) == ("recursion",)
