"""Long plain strings are spliced into encoded messages as bytes (jsonrpc._dumps).

The fast path must be invisible: every message encodes to exactly the bytes the
ordinary ``json.dumps`` path gives, whatever the payload holds (escapes, non-ASCII,
lone surrogates, nesting, a payload that contains the placeholder itself).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto import jsonrpc

LONG = "0123456789abcdefghijklmnopqrstuvwxyz+/=" * 2000  # > _SPLICE_MIN, base64-like


@pytest.fixture(autouse=True)
def _standard_encoder() -> Iterator[None]:
    """The splice is the standard encoder's fast path (orjson needs none)."""
    old = jsonrpc.json_backend()
    jsonrpc.set_json_backend("json")
    yield
    jsonrpc.set_json_backend(old)


@pytest.fixture
def small_threshold(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Splice strings of 3+ characters, so that small examples exercise the path."""
    monkeypatch.setattr(jsonrpc, "_SPLICE_MIN", 3)
    yield


def ordinary(msg: dict[str, Any]) -> bytes:
    return jsonrpc._encode(msg)


def test_long_plain_string_is_spliced_and_identical() -> None:
    assert len(LONG) >= jsonrpc._SPLICE_MIN
    params = {"name": "echo", "arguments": {"text": LONG, "list": [1, LONG, {"x": LONG}]}}
    data = jsonrpc.encode_request(7, "tools/call", params)
    assert data == ordinary({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params})
    assert json.loads(data)["params"] == params


def test_the_callers_objects_are_not_modified() -> None:
    inner = {"text": LONG}
    params = {"arguments": inner, "items": [LONG]}
    jsonrpc.encode_request(1, "tools/call", params)
    assert params == {"arguments": {"text": LONG}, "items": [LONG]}
    assert params["arguments"] is inner


@pytest.mark.parametrize(
    "text",
    [
        LONG + '"',  # a quote must be escaped
        LONG + "\\",  # a backslash too
        LONG + "\n",  # a control character
        LONG + "\x1f",
        LONG + "é",  # non-ASCII: ordinary path (UTF-8 as is)
        LONG + "\ud800",  # a lone surrogate: escaped by the ASCII fallback
        "\x00mcp-proto-splice\x00" + LONG,
    ],
)
def test_strings_that_need_escaping_take_the_ordinary_path(text: str) -> None:
    result = {"content": [{"type": "text", "text": text}]}
    data = jsonrpc.encode_result(3, result)
    assert json.loads(data)["result"] == result
    if "\ud800" not in text:
        assert data == ordinary({"jsonrpc": "2.0", "id": 3, "result": result})


def test_a_payload_holding_the_placeholder_is_not_confused(small_threshold: None) -> None:
    # The placeholder itself as a value and as a key: occurrences no longer match the
    # spliced strings, so nothing is spliced and the output is still exact.
    for params in (
        {"a": "spliced", "b": jsonrpc._PLACEHOLDER},
        {jsonrpc._PLACEHOLDER: 1, "a": "spliced"},
        {"a": "spliced", "b": '"' + jsonrpc._PLACEHOLDER},
    ):
        data = jsonrpc.encode_notification("n", params)
        assert data == ordinary({"jsonrpc": "2.0", "method": "n", "params": params})
        assert json.loads(data)["params"] == params


def test_a_lone_surrogate_elsewhere_falls_back(small_threshold: None) -> None:
    params = {"a": "plain text", "b": "\ud800"}
    data = jsonrpc.encode_notification("n", params)
    assert json.loads(data)["params"] == params


def test_deep_nesting_stops_the_walk_not_the_encoding(small_threshold: None) -> None:
    value: Any = "deep string"
    for _ in range(jsonrpc._SPLICE_DEPTH + 5):
        value = {"k": [value]}
    data = jsonrpc.encode_request(1, "m", {"v": value})
    assert json.loads(data)["params"] == {"v": value}


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(["abc", "plain ascii", '"q"', "back\\slash", "tab\t", "é", "\ud800"]),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(deadline=None)
@given(params=st.dictionaries(st.text(max_size=5), json_values, max_size=5))
def test_any_payload_encodes_exactly_as_the_ordinary_path(params: dict[str, Any]) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jsonrpc, "_SPLICE_MIN", 3)
        data = jsonrpc.encode_request(1, "m", params)
    msg = {"jsonrpc": "2.0", "id": 1, "method": "m", "params": params}
    assert data == ordinary(msg)
