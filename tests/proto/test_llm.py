"""Tool conversions for LLM provider APIs (LLM-1..4)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.llm import to_anthropic_tools, to_google_tools, to_openai_tools
from mcp_proto.types import Tool

# A schema that uses everything a converter must leave alone: $defs, $ref, $anchor,
# $id, allOf/anyOf/oneOf, $dynamicRef, plus a property literally named "$schema" and
# instance data that happens to contain a "$schema" key.
RICH_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.com/tool.json",
    "type": "object",
    "properties": {
        "address": {"$ref": "#/$defs/address"},
        "tags": {"type": "array", "items": {"$ref": "#node"}},
        "$schema": {"type": "string", "description": "a property named $schema"},
        "config": {
            "type": "object",
            "default": {"$schema": "kept: this is instance data"},
            "const": {"$schema": "kept"},
        },
        "mode": {"enum": [{"$schema": "kept"}, "plain"]},
    },
    "required": ["address"],
    "allOf": [{"$schema": "https://json-schema.org/draft/2020-12/schema", "minProperties": 1}],
    "anyOf": [{"required": ["address"]}, {"required": ["tags"]}],
    "$defs": {
        "address": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"street": {"type": "string"}},
            "oneOf": [{"$schema": "x", "required": ["street"]}],
        },
        "node": {"$anchor": "node", "type": "string", "$dynamicRef": "#meta"},
    },
    "definitions": {"legacy": {"$schema": "http://json-schema.org/draft-07/schema#"}},
    "patternProperties": {"^x-": {"$schema": "x", "type": "string"}},
    "dependentSchemas": {"address": {"$schema": "x", "required": ["tags"]}},
}

STRIPPED_SCHEMA: dict[str, Any] = {
    "$id": "https://example.com/tool.json",
    "type": "object",
    "properties": {
        "address": {"$ref": "#/$defs/address"},
        "tags": {"type": "array", "items": {"$ref": "#node"}},
        "$schema": {"type": "string", "description": "a property named $schema"},
        "config": {
            "type": "object",
            "default": {"$schema": "kept: this is instance data"},
            "const": {"$schema": "kept"},
        },
        "mode": {"enum": [{"$schema": "kept"}, "plain"]},
    },
    "required": ["address"],
    "allOf": [{"minProperties": 1}],
    "anyOf": [{"required": ["address"]}, {"required": ["tags"]}],
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}},
            "oneOf": [{"required": ["street"]}],
        },
        "node": {"$anchor": "node", "type": "string", "$dynamicRef": "#meta"},
    },
    "definitions": {"legacy": {}},
    "patternProperties": {"^x-": {"type": "string"}},
    "dependentSchemas": {"address": {"required": ["tags"]}},
}


def _tools() -> list[Tool]:
    return [
        Tool.from_dict(
            {
                "name": "get_weather",
                "description": "Current weather",
                "inputSchema": {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
            server="s1",
        ),
        Tool.from_dict({"name": "ping"}, server="s2"),
        Tool.from_dict({"name": "rich", "description": "Rich", "inputSchema": RICH_SCHEMA}),
    ]


def test_openai_golden() -> None:
    assert to_openai_tools(_tools()[:2]) == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather",
                "parameters": {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        },
        # A tool without a description gets no "description" key (providers reject null).
        {"type": "function", "function": {"name": "ping", "parameters": {"type": "object"}}},
    ]


def test_anthropic_golden() -> None:
    assert to_anthropic_tools(_tools()[:2]) == [
        {
            "name": "get_weather",
            "description": "Current weather",
            "input_schema": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
        {"name": "ping", "input_schema": {"type": "object"}},
    ]


def test_google_golden() -> None:
    assert to_google_tools(_tools()[:2]) == [
        {
            "name": "get_weather",
            "description": "Current weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
        {"name": "ping", "parameters": {"type": "object"}},
    ]


def test_openai_keeps_schema_unchanged() -> None:
    tool = _tools()[2]
    assert tool.to_openai_tool()["function"]["parameters"] == RICH_SCHEMA


@pytest.mark.parametrize(
    ("method", "key"), [("to_anthropic_tool", "input_schema"), ("to_google_tool", "parameters")]
)
def test_schema_stripping_keeps_everything_else(method: str, key: str) -> None:
    before = copy.deepcopy(RICH_SCHEMA)
    tool = Tool.from_dict({"name": "rich", "description": "Rich", "inputSchema": RICH_SCHEMA})
    out = getattr(tool, method)()
    assert out == {"name": "rich", "description": "Rich", key: STRIPPED_SCHEMA}
    # The tool's own schema (and the caller's fixture) are untouched.
    assert before == RICH_SCHEMA
    assert tool.input_schema == before
    assert "$schema" in tool.input_schema


@pytest.mark.parametrize("method", ["to_openai_tool", "to_anthropic_tool", "to_google_tool"])
def test_conversion_output_shares_nothing_with_tool(method: str) -> None:
    tool = _tools()[2]
    before = copy.deepcopy(tool.input_schema)
    out = getattr(tool, method)()
    schema = out["function"]["parameters"] if method == "to_openai_tool" else out.popitem()[1]
    # Mutate everything reachable in the output, as an SDK might.
    schema["additionalProperties"] = False
    schema["properties"]["address"]["$ref"] = "#/changed"
    schema["$defs"]["node"]["type"] = "integer"
    schema["required"].append("tags")
    schema["properties"]["config"]["default"]["new"] = 1
    schema["properties"]["mode"]["enum"][0]["x"] = 1
    assert tool.input_schema == before


def test_tool_names_filter_keeps_tools_order() -> None:
    tools = _tools()
    names = [t["function"]["name"] for t in to_openai_tools(tools, ["rich", "get_weather"])]
    assert names == ["get_weather", "rich"]
    assert [t["name"] for t in to_anthropic_tools(tools, ("ping",))] == ["ping"]
    assert [t["name"] for t in to_google_tools(tools, {"rich", "nope"})] == ["rich"]
    assert to_openai_tools(tools, []) == []
    # A lone string names one tool, not its characters.
    assert [t["name"] for t in to_anthropic_tools(tools, "ping")] == ["ping"]


def test_accepts_any_iterable_and_duplicates_across_servers() -> None:
    tools = [Tool.from_dict({"name": "x"}, server="a"), Tool.from_dict({"name": "x"}, server="b")]
    assert len(to_openai_tools(iter(tools), ["x"])) == 2
    assert to_google_tools([]) == []


def test_output_is_json_serialisable() -> None:
    for convert in (to_openai_tools, to_anthropic_tools, to_google_tools):
        json.dumps(convert(_tools()))


JSON_SCHEMAISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["$schema", "$ref", "$defs", "properties", "allOf", "type", "default", "items"]
            )
            | st.text(max_size=4),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


_NAME_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_DATA = ("const", "enum", "default", "examples")


def _has_schema_keyword(node: Any) -> bool:
    """True if a ``$schema`` key survives in a schema position (the invariant)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$schema":
                return True
            if key in _NAME_MAPS and isinstance(value, dict):
                if any(_has_schema_keyword(sub) for sub in value.values()):
                    return True
            elif key not in _DATA and _has_schema_keyword(value):
                return True
        return False
    if isinstance(node, list):
        return any(_has_schema_keyword(item) for item in node)
    return False


@given(schema=st.dictionaries(st.text(max_size=4), JSON_SCHEMAISH, max_size=5) | JSON_SCHEMAISH)
def test_stripping_property(schema: Any) -> None:
    if not isinstance(schema, dict):
        return
    before = copy.deepcopy(schema)
    tool = Tool(name="t", input_schema=schema)
    out = tool.to_anthropic_tool()["input_schema"]
    assert schema == before
    assert not _has_schema_keyword(out)
    assert tool.to_google_tool()["parameters"] == out
    assert tool.to_openai_tool()["function"]["parameters"] == before
