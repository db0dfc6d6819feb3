"""Tool definitions the 2026-07-28 header tests share.

They are what the official conformance scenarios http-custom-headers and
http-invalid-tool-headers serve, plus the rules of server/tools.mdx § x-mcp-header the
scenarios do not cover.
"""

from __future__ import annotations

from typing import Any


def tool_def(name: str, properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "inputSchema": {"type": "object", "properties": properties, **extra},
    }


#: http-invalid-tool-headers: each invalid tool and the rule it breaks.
INVALID_TOOLS = [
    (
        tool_def("invalid_empty_header", {"value": {"type": "string", "x-mcp-header": ""}}),
        "not-empty",
    ),
    (
        tool_def("invalid_object_header", {"data": {"type": "object", "x-mcp-header": "Data"}}),
        "primitive-only",
    ),
    (
        tool_def(
            "invalid_array_header",
            {"items": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}},
        ),
        "primitive-only",
    ),
    (
        tool_def("invalid_null_header", {"nil": {"type": "null", "x-mcp-header": "Nil"}}),
        "primitive-only",
    ),
    (
        tool_def(
            "invalid_duplicate_same_case",
            {
                "field1": {"type": "string", "x-mcp-header": "Region"},
                "field2": {"type": "string", "x-mcp-header": "Region"},
            },
        ),
        "unique",
    ),
    (
        tool_def(
            "invalid_duplicate_diff_case",
            {
                "field1": {"type": "string", "x-mcp-header": "MyField"},
                "field2": {"type": "string", "x-mcp-header": "myfield"},
            },
        ),
        "unique",
    ),
    (
        tool_def(
            "invalid_space_in_name", {"value": {"type": "string", "x-mcp-header": "My Region"}}
        ),
        "charset",
    ),
    (
        tool_def(
            "invalid_colon_in_name", {"value": {"type": "string", "x-mcp-header": "Region:Primary"}}
        ),
        "charset",
    ),
    (
        tool_def("invalid_non_ascii_name", {"value": {"type": "string", "x-mcp-header": "Région"}}),
        "charset",
    ),
    (
        tool_def(
            "invalid_control_char_name", {"value": {"type": "string", "x-mcp-header": "Region\t1"}}
        ),
        "charset",
    ),
    # Beyond the conformance set: the other rules of § Schema Extension.
    (tool_def("number_type", {"n": {"type": "number", "x-mcp-header": "N"}}), "primitive-only"),
    (tool_def("no_type", {"n": {"x-mcp-header": "N"}}), "primitive-only"),
    (
        tool_def("type_list", {"n": {"type": ["string", "null"], "x-mcp-header": "N"}}),
        "primitive-only",
    ),
    (tool_def("not_a_string", {"n": {"type": "string", "x-mcp-header": 7}}), "charset"),
    (tool_def("cr_lf", {"n": {"type": "string", "x-mcp-header": "A\r\nB"}}), "charset"),
    (
        tool_def(
            "under_items",
            {"l": {"type": "array", "items": {"type": "string", "x-mcp-header": "L"}}},
        ),
        "reachable",
    ),
    (
        tool_def("under_anyof", {"u": {"anyOf": [{"type": "string", "x-mcp-header": "U"}]}}),
        "reachable",
    ),
    (
        tool_def(
            "under_defs",
            {"r": {"$ref": "#/$defs/R"}},
            **{"$defs": {"R": {"type": "string", "x-mcp-header": "R"}}},
        ),
        "reachable",
    ),
    (
        tool_def(
            "under_additional", {}, additionalProperties={"type": "string", "x-mcp-header": "A"}
        ),
        "reachable",
    ),
    (
        tool_def(
            "under_if", {}, **{"if": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}
        ),
        "reachable",
    ),
    ({"name": "at_root", "inputSchema": {"type": "string", "x-mcp-header": "Root"}}, "reachable"),
]


#: The annotated tool http-custom-headers serves, and the arguments it asks for.
CUSTOM = tool_def(
    "test_custom_headers",
    {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
        "debug": {"type": "boolean", "x-mcp-header": "Debug"},
        "empty_val": {"type": "string", "x-mcp-header": "EmptyVal"},
        "method_val": {"type": "string", "x-mcp-header": "Method"},
        "float_val": {"type": "number"},
        "non_ascii_val": {"type": "string", "x-mcp-header": "NonAscii"},
        "whitespace_val": {"type": "string", "x-mcp-header": "Whitespace"},
        "leading_space_val": {"type": "string", "x-mcp-header": "LeadingSpace"},
        "trailing_space_val": {"type": "string", "x-mcp-header": "TrailingSpace"},
        "internal_space_val": {"type": "string", "x-mcp-header": "InternalSpace"},
        "control_char_val": {"type": "string", "x-mcp-header": "ControlChar"},
        "crlf_val": {"type": "string", "x-mcp-header": "CrLf"},
        "tab_val": {"type": "string", "x-mcp-header": "Tab"},
        "query": {"type": "string"},
    },
)
CUSTOM_ARGS = {
    "region": "us-west1",
    "priority": 42,
    "verbose": False,
    "debug": True,
    "empty_val": "",
    "method_val": "test-method",
    "float_val": 3.14159,
    "non_ascii_val": "Hello, 世界",
    "whitespace_val": " padded ",
    "leading_space_val": " us-west1",
    "trailing_space_val": "us-west1 ",
    "internal_space_val": "us west 1",
    "control_char_val": "line1\nline2",
    "crlf_val": "line1\r\nline2",
    "tab_val": "\tindented",
    "query": "SELECT * FROM users",
}
