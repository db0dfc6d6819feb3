"""``is_plain`` may only vouch for schemas the engine also finds usable."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_proto._schema_plain import KNOWN_DIALECT_URIS, is_plain
from mcp_proto.errors import SchemaError
from mcp_proto.schema import compile as compile_schema

_values = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=False), st.text(max_size=5)
)
_keywords = st.sampled_from(
    [
        "type",
        "properties",
        "items",
        "additionalProperties",
        "required",
        "enum",
        "const",
        "uniqueItems",
        "minimum",
        "maximum",
        "multipleOf",
        "minLength",
        "maxItems",
        "title",
        "description",
        "default",
        "$schema",
        "pattern",
        "$ref",
        "format",
        "allOf",
    ]
)


def _schemas(depth: int = 2) -> st.SearchStrategy[Any]:
    leaf = st.one_of(st.booleans(), st.just({}), st.just({"type": "string"}))
    if depth == 0:
        return leaf
    child = _schemas(depth - 1)
    value = st.one_of(
        _values,
        st.sampled_from(["object", "string", "integer", "nope", *sorted(KNOWN_DIALECT_URIS)]),
        st.lists(st.sampled_from(["a", "b", "string", "integer"]), max_size=3),
        st.dictionaries(st.sampled_from(["a", "b"]), child, max_size=2),
        child,
    )
    return st.one_of(leaf, st.dictionaries(_keywords, value, max_size=4))


@settings(max_examples=400, deadline=None)
@given(schema=_schemas())
def test_a_plain_schema_always_compiles(schema: Any) -> None:
    if is_plain(schema):
        compile_schema(schema)  # must not raise SchemaError


@pytest.mark.parametrize(
    "schema",
    [
        {"maximum": float("inf")},
        {"multipleOf": float("inf")},
        {"minimum": float("-inf")},
        {"default": float("inf")},
        {"const": [1, {"a": float("inf")}]},
        {"enum": [float("inf")]},
        {"examples": [float("-inf")]},
        {"properties": {"a": {"maximum": float("inf")}}},
    ],
)
def test_non_finite_numbers_are_not_plain(schema: Any) -> None:
    # json parses 1e999 as inf; the engine refuses it (not JSON data), so is_plain must
    # not vouch for it (found by test_a_plain_schema_always_compiles).
    assert not is_plain(schema)
    with pytest.raises(SchemaError):
        compile_schema(schema)


def test_typical_tool_schemas_are_plain() -> None:
    assert is_plain(
        {
            "type": "object",
            "properties": {
                "text": {"type": "string", "description": "x"},
                "n": {"type": "integer", "minimum": 0},
            },
            "required": ["text"],
            "additionalProperties": False,
        }
    )
    assert is_plain({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"})


def test_anything_else_goes_to_the_engine() -> None:
    assert not is_plain({"$schema": "urn:unknown-dialect", "type": "object"})
    assert not is_plain({"properties": {"a": {"$ref": "#/$defs/x"}}})
    assert not is_plain({"type": "object", "properties": {"a": {"pattern": "^a"}}})
    assert not is_plain({"type": 5})
    assert not is_plain({"required": "a"})
