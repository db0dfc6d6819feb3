"""orjson (the "fast" extra) and the standard json module send the same messages.

The standard encoder is the reference: with orjson selected, whatever orjson refuses
goes through the standard path, so any message reads back to the same values with
either encoder. (Decoding always uses the standard json module.)
"""

from __future__ import annotations

import datetime
import enum
import json
from collections.abc import Iterator
from typing import Any

import pytest
from _proto_support import json_objects
from hypothesis import given, settings

from mcp_proto import jsonrpc

pytest.importorskip("orjson")


def encoded(obj: Any, backend: str) -> bytes:
    old = jsonrpc.json_backend()
    jsonrpc.set_json_backend(backend)
    try:
        return jsonrpc.encode_request(1, "m", obj)
    finally:
        jsonrpc.set_json_backend(old)


@pytest.fixture(autouse=True)
def _restore_backend() -> Iterator[None]:
    old = jsonrpc.json_backend()
    yield
    jsonrpc.set_json_backend(old)


@settings(deadline=None)
@given(params=json_objects)
def test_any_params_encode_to_the_same_values(params: dict[str, Any]) -> None:
    assert json.loads(encoded(params, "orjson")) == json.loads(encoded(params, "json"))


class Color(enum.IntEnum):
    RED = 1


class Name(str):
    pass


@pytest.mark.parametrize(
    "params",
    [
        {"big": 2**70, "small": -(2**63)},  # past 64 bits: the standard encoder writes it
        {"n": Color.RED, "s": Name("x"), "t": (1, 2)},  # subclasses and tuples
        {"lone": "\ud800"},  # a lone surrogate: escaped by the standard path
        {1: "int key", None: "null key"},  # non-string keys, as json.dumps writes them
        {"f": [0.1, 1e16, 1e-07, -0.0, 123456789.125]},
        {"text": "é \u2603 \U0001f600 \x00 \n"},
    ],
)
def test_special_values_encode_to_the_same_values(params: dict[str, Any]) -> None:
    fast, reference = encoded(params, "orjson"), encoded(params, "json")
    assert json.loads(fast) == json.loads(reference)


@pytest.mark.parametrize("value", [datetime.date(2026, 1, 1), object(), {1, 2}, b"bytes"])
def test_what_the_standard_encoder_refuses_is_refused_either_way(value: Any) -> None:
    for backend in ("json", "orjson"):
        jsonrpc.set_json_backend(backend)
        with pytest.raises(TypeError):
            jsonrpc.encode_request(1, "m", {"v": value})


def test_non_finite_floats_are_null_with_orjson() -> None:
    """The one documented difference: json.dumps writes NaN/Infinity (not JSON)."""
    params = {"v": [float("nan"), float("inf"), -float("inf")]}
    assert json.loads(encoded(params, "orjson"))["params"] == {"v": [None, None, None]}
    assert b"[NaN,Infinity,-Infinity]" in encoded(params, "json")


def test_decoding_keeps_integers_beyond_64_bits_whatever_the_encoder() -> None:
    data = b'{"jsonrpc":"2.0","id":1,"result":{"n":123456789012345678901234567890}}'
    jsonrpc.set_json_backend("orjson")
    assert list(jsonrpc.decode(data)) == [
        jsonrpc.Response(1, {"n": 123456789012345678901234567890})
    ]


def test_backend_selection() -> None:
    jsonrpc.set_json_backend("json")
    assert jsonrpc.json_backend() == "json"
    jsonrpc.set_json_backend("orjson")
    assert jsonrpc.json_backend() == "orjson"
    with pytest.raises(ValueError, match="unknown JSON backend"):
        jsonrpc.set_json_backend("simdjson")
