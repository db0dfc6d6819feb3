"""Whole modern HTTP requests: standard headers, Mcp-Param-*, configured headers, and
the filtering of tools with invalid annotations (LIFE-11, HDR-1, HDR-3, HDR-6, HDR-7).

The expectations are the checks of the conformance scenarios http-standard-headers,
http-custom-headers and http-invalid-tool-headers.
"""

from __future__ import annotations

from typing import Any

import pytest
from _modern_tools import CUSTOM, CUSTOM_ARGS, INVALID_TOOLS, tool_def

import mcp_proto
from mcp_proto.errors import HeaderAnnotationError, LocalProtocolError, ValidationError
from mcp_proto.modern.headers import filter_tools, header_params, request_headers
from mcp_proto.types import Tool

# ------------------------------------------------------------- whole requests


def _names(headers: list[tuple[str, str]]) -> list[str]:
    return [name.lower() for name, _ in headers]


@pytest.mark.parametrize(
    ("method", "params", "name"),
    [
        (
            "tools/call",
            {"name": "get_weather", "arguments": {"location": "Seattle, WA"}},
            "get_weather",
        ),
        ("tools/call", {"name": "my-hyphenated-tool"}, "my-hyphenated-tool"),
        (
            "resources/read",
            {"uri": "file:///projects/myapp/config.json"},
            "file:///projects/myapp/config.json",
        ),
        (
            "resources/read",
            {"uri": "https://example.com/resource?id=123"},
            "https://example.com/resource?id=123",
        ),
        ("prompts/get", {"name": "test_prompt"}, "test_prompt"),
        ("prompts/get", {"name": "résumé"}, "=?base64?csOpc3Vtw6k=?="),
        # SEP-2663 § Streamable HTTP: Routing Headers: Mcp-Name is the task's id.
        ("tasks/get", {"taskId": "786512e2"}, "786512e2"),
        ("tasks/update", {"taskId": "t 1", "inputResponses": {}}, "t 1"),
        ("tasks/cancel", {"taskId": "t"}, "t"),
    ],
)
def test_standard_headers_of_named_methods(method: str, params: dict[str, Any], name: str) -> None:
    headers = request_headers(method, params, protocol_version="2026-07-28")
    assert headers == [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
        ("Mcp-Name", name),
    ]


@pytest.mark.parametrize(
    "method",
    [
        "server/discover",
        "tools/list",
        "resources/list",
        "prompts/list",
        "resources/templates/list",
        "completion/complete",
    ],
)
def test_other_methods_carry_no_mcp_name(method: str) -> None:
    headers = request_headers(method, {"_meta": {}}, protocol_version="2026-07-28")
    assert headers == [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", method)]
    assert request_headers(method, None, protocol_version="2026-07-28") == headers


def test_tools_call_mirrors_the_tools_annotations() -> None:
    params = {"name": "test_custom_headers", "arguments": CUSTOM_ARGS}
    headers = request_headers("tools/call", params, protocol_version="2026-07-28", tool=CUSTOM)
    assert headers[:3] == [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "test_custom_headers"),
    ]
    assert dict(headers[3:]) == header_params.headers_for(CUSTOM, CUSTOM_ARGS)
    # Without the tool's definition (never listed) there is nothing to mirror.
    assert len(request_headers("tools/call", params, protocol_version="2026-07-28")) == 3


def test_configured_mcp_param_headers_are_dropped_in_modern_requests() -> None:
    # HDR-6: the client owns Mcp-Param-* (and the standard names); the rest is kept.
    configured = {
        "Authorization": "Bearer t",
        "Mcp-Param-Region": "forged",
        "mcp-param-other": "x",
        "MCP-PROTOCOL-VERSION": "2025-11-25",
        "mcp-method": "x",
        "Mcp-Name": "x",
        "X-Trace": "1",
    }
    params = {"name": "test_custom_headers", "arguments": {"region": "us-west1"}}
    headers = request_headers(
        "tools/call", params, protocol_version="2026-07-28", tool=CUSTOM, configured=configured
    )
    assert headers == [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "test_custom_headers"),
        ("Mcp-Param-Region", "us-west1"),
        ("Authorization", "Bearer t"),
        ("X-Trace", "1"),
    ]
    # The same as pairs.
    pairs = request_headers(
        "tools/list", {}, protocol_version="2026-07-28", configured=list(configured.items())
    )
    assert _names(pairs) == ["mcp-protocol-version", "mcp-method", "authorization", "x-trace"]


@pytest.mark.parametrize(
    ("method", "params", "version"),
    [
        ("tools/call", {}, "2026-07-28"),
        ("tools/call", {"name": 7}, "2026-07-28"),
        ("resources/read", {"name": "x"}, "2026-07-28"),
        ("tools/list\r\nX-Evil: 1", {}, "2026-07-28"),
        ("", {}, "2026-07-28"),
        ("tools/list", {}, "2026-07-28\n"),
        ("tools/list", [], "2026-07-28"),
    ],
)
def test_what_cannot_be_carried_is_a_typed_error(method: str, params: Any, version: str) -> None:
    with pytest.raises(ValidationError):
        request_headers(method, params, protocol_version=version)


def test_headers_for_another_tool_are_a_caller_bug() -> None:
    with pytest.raises(LocalProtocolError):
        request_headers("tools/call", {"name": "other"}, protocol_version="2026-07-28", tool=CUSTOM)


def test_an_invalid_tool_is_refused_when_building_headers() -> None:
    tool, _ = INVALID_TOOLS[0]
    with pytest.raises(HeaderAnnotationError):
        request_headers(
            "tools/call", {"name": tool["name"]}, protocol_version="2026-07-28", tool=tool
        )


# ----------------------------------------------------------------- filter_tools


def test_invalid_tools_are_dropped_with_a_warning_naming_them() -> None:
    valid = tool_def("valid_tool", {"region": {"type": "string", "x-mcp-header": "Region"}})
    tools = [valid] + [tool for tool, _ in INVALID_TOOLS[:10]]
    kept, warnings = filter_tools(tools)
    assert kept == [valid]
    assert len(warnings) == 10
    for (tool, rule), warning in zip(INVALID_TOOLS[:10], warnings, strict=True):
        assert repr(tool["name"]) in warning
        assert f"({rule})" in warning
        assert "\n" not in warning and "\t" not in warning


def test_filter_tools_keeps_order_and_takes_tool_objects() -> None:
    parsed = [Tool.from_dict(t) for t, _ in INVALID_TOOLS[:2]] + [
        Tool.from_dict(CUSTOM),
        Tool.from_dict(tool_def("t", {})),
    ]
    kept, warnings = filter_tools(parsed)
    assert [t.name for t in kept] == ["test_custom_headers", "t"]
    assert len(warnings) == 2


def test_stdio_ignores_annotations() -> None:
    # HDR-7: other transports MAY ignore x-mcp-header entirely; this client does.
    tools = [tool for tool, _ in INVALID_TOOLS]
    assert filter_tools(tools, http=False) == (tools, [])


def test_a_peer_tool_name_cannot_forge_log_lines() -> None:
    tool = tool_def("evil\nWARNING fake", {"v": {"type": "string", "x-mcp-header": ""}})
    _, warnings = filter_tools([tool])
    assert "\n" not in warnings[0]


def test_public_name() -> None:
    # HDR-4 / §E: mcp_proto.header_params, callable, with validate_tool and headers_for.
    assert mcp_proto.header_params is header_params
    assert callable(mcp_proto.header_params.validate_tool)
    assert callable(mcp_proto.header_params.headers_for)


def test_a_tool_listed_with_a_schema_key_is_checked_too() -> None:
    # TOOL-12: some servers send "schema" instead of "inputSchema".
    tool = {
        "name": "old",
        "schema": {"type": "object", "properties": {"v": {"type": "number", "x-mcp-header": "V"}}},
    }
    assert filter_tools([tool])[0] == []
    assert filter_tools([{"name": "bare"}]) == ([{"name": "bare"}], [])
