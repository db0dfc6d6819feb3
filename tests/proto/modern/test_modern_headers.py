"""HTTP headers of the 2026-07-28 revision: encoding, x-mcp-header rules, whole requests.

Rows HDR-1..4, HDR-6, HDR-7, LIFE-11. The tables come from the spec
(streamable-http.mdx § Value Encoding) and from what the official conformance
scenarios http-standard-headers, http-custom-headers and http-invalid-tool-headers
serve and check.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mcp_proto
from mcp_proto.errors import (
    HeaderAnnotationError,
    LocalProtocolError,
    ValidationError,
)
from mcp_proto.modern.headers import (
    decode_header_value,
    encode_header_value,
    filter_tools,
    header_params,
    param_headers,
    request_headers,
)
from mcp_proto.types import Tool

# ------------------------------------------------------------------- encoding


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        # The spec's own table (§ Value Encoding, "Encoding examples").
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        # The conformance scenario's edge cases (http-custom-headers).
        ("", ""),
        ("us west 1", "us west 1"),
        (" us-west1", "=?base64?IHVzLXdlc3Qx?="),
        ("us-west1 ", "=?base64?dXMtd2VzdDEg?="),
        ("line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?="),
        ("\tindented", "=?base64?CWluZGVudGVk?="),
        # A tab inside is a control character too; DEL is not visible ASCII.
        ("a\tb", "=?base64?YQli?="),
        ("a\x7fb", "=?base64?YX9i?="),
        ("test-method", "test-method"),
        ("file:///path/to/file%20name.txt", "file:///path/to/file%20name.txt"),
    ],
)
def test_value_encoding_table(value: str, encoded: str) -> None:
    assert encode_header_value(value) == encoded
    assert decode_header_value(encoded) == value


def test_a_sentinel_lookalike_is_always_encoded() -> None:
    # "starts with =?base64? and ends with ?=", including the overlapping shortest case.
    for value in ("=?base64??=", "=?base64?=", "=?base64?SGk=?="):
        encoded = encode_header_value(value)
        assert encoded != value and encoded.startswith("=?base64?")
        assert decode_header_value(encoded) == value
    # Only one of the two markers: plain.
    assert encode_header_value("=?base64?x") == "=?base64?x"
    assert encode_header_value("x?=") == "x?="


@pytest.mark.parametrize(
    "bad", ["=?base64?!!!?=", "=?base64?SGk?=", "=?base64?SGl=?=", "=?base64?/w==?="]
)
def test_malformed_or_non_canonical_base64_is_a_typed_error(bad: str) -> None:
    # Bad alphabet, missing padding, non-zero pad bits, not UTF-8 (0xff).
    with pytest.raises(ValidationError):
        decode_header_value(bad)


def test_a_lone_surrogate_is_a_typed_error() -> None:
    with pytest.raises(ValidationError, match="surrogate"):
        encode_header_value("a\ud800b")


#: Legal on the wire as a header value: visible ASCII and inner spaces, nothing at the
#: edges that a parser would strip (RFC 9110 § 5.5 field-value, minus tab).
_WIRE_SAFE = re.compile(r"(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?")


@given(st.text(alphabet=st.characters(exclude_categories=("Cs",))))
def test_encoding_round_trips_and_only_legal_bytes_go_out(value: str) -> None:
    encoded = encode_header_value(value)
    assert decode_header_value(encoded) == value
    assert _WIRE_SAFE.fullmatch(encoded), encoded
    assert encoded.isascii()


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E)))
def test_plain_ascii_is_sent_as_is_unless_it_looks_encoded(value: str) -> None:
    looks = value.startswith("=?base64?") and value.endswith("?=")
    plain = value == value.strip(" ") and not looks
    assert (encode_header_value(value) == value) == plain


# ----------------------------------------------------------- annotation rules


def _tool(name: str, properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "inputSchema": {"type": "object", "properties": properties, **extra},
    }


#: http-invalid-tool-headers: each invalid tool and the rule it breaks.
INVALID_TOOLS = [
    (_tool("invalid_empty_header", {"value": {"type": "string", "x-mcp-header": ""}}), "not-empty"),
    (
        _tool("invalid_object_header", {"data": {"type": "object", "x-mcp-header": "Data"}}),
        "primitive-only",
    ),
    (
        _tool(
            "invalid_array_header",
            {"items": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}},
        ),
        "primitive-only",
    ),
    (
        _tool("invalid_null_header", {"nil": {"type": "null", "x-mcp-header": "Nil"}}),
        "primitive-only",
    ),
    (
        _tool(
            "invalid_duplicate_same_case",
            {
                "field1": {"type": "string", "x-mcp-header": "Region"},
                "field2": {"type": "string", "x-mcp-header": "Region"},
            },
        ),
        "unique",
    ),
    (
        _tool(
            "invalid_duplicate_diff_case",
            {
                "field1": {"type": "string", "x-mcp-header": "MyField"},
                "field2": {"type": "string", "x-mcp-header": "myfield"},
            },
        ),
        "unique",
    ),
    (
        _tool("invalid_space_in_name", {"value": {"type": "string", "x-mcp-header": "My Region"}}),
        "charset",
    ),
    (
        _tool(
            "invalid_colon_in_name", {"value": {"type": "string", "x-mcp-header": "Region:Primary"}}
        ),
        "charset",
    ),
    (
        _tool("invalid_non_ascii_name", {"value": {"type": "string", "x-mcp-header": "Région"}}),
        "charset",
    ),
    (
        _tool(
            "invalid_control_char_name", {"value": {"type": "string", "x-mcp-header": "Region\t1"}}
        ),
        "charset",
    ),
    # Beyond the conformance set: the other rules of § Schema Extension.
    (_tool("number_type", {"n": {"type": "number", "x-mcp-header": "N"}}), "primitive-only"),
    (_tool("no_type", {"n": {"x-mcp-header": "N"}}), "primitive-only"),
    (
        _tool("type_list", {"n": {"type": ["string", "null"], "x-mcp-header": "N"}}),
        "primitive-only",
    ),
    (_tool("not_a_string", {"n": {"type": "string", "x-mcp-header": 7}}), "charset"),
    (_tool("cr_lf", {"n": {"type": "string", "x-mcp-header": "A\r\nB"}}), "charset"),
    (
        _tool(
            "under_items",
            {"l": {"type": "array", "items": {"type": "string", "x-mcp-header": "L"}}},
        ),
        "reachable",
    ),
    (
        _tool("under_anyof", {"u": {"anyOf": [{"type": "string", "x-mcp-header": "U"}]}}),
        "reachable",
    ),
    (
        _tool(
            "under_defs",
            {"r": {"$ref": "#/$defs/R"}},
            **{"$defs": {"R": {"type": "string", "x-mcp-header": "R"}}},
        ),
        "reachable",
    ),
    (
        _tool("under_additional", {}, additionalProperties={"type": "string", "x-mcp-header": "A"}),
        "reachable",
    ),
    (
        _tool(
            "under_if", {}, **{"if": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}
        ),
        "reachable",
    ),
    ({"name": "at_root", "inputSchema": {"type": "string", "x-mcp-header": "Root"}}, "reachable"),
]


@pytest.mark.parametrize(("tool", "rule"), INVALID_TOOLS, ids=[t["name"] for t, _ in INVALID_TOOLS])
def test_each_broken_rule_is_a_typed_error_naming_it(tool: dict[str, Any], rule: str) -> None:
    with pytest.raises(HeaderAnnotationError) as info:
        header_params(tool)
    assert info.value.rule == rule
    assert info.value.tool == tool["name"]
    assert tool["name"] in str(info.value)
    assert isinstance(info.value, ValueError)  # a ValidationError, idiomatic except
    assert header_params.validate_tool(tool)  # the same verdict, as text


def test_the_spec_example_maps_the_parameter_to_its_header() -> None:
    tool = _tool(
        "execute_sql",
        {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "query": {"type": "string"},
        },
        required=["region", "query"],
    )
    assert header_params(tool) == {("region",): "Mcp-Param-Region"}
    assert header_params(tool["inputSchema"]) == {("region",): "Mcp-Param-Region"}
    assert header_params(Tool.from_dict(tool)) == {("region",): "Mcp-Param-Region"}
    assert header_params.validate_tool(tool) == []


def test_nested_properties_are_reachable_through_properties_alone() -> None:
    schema = {
        "type": "object",
        "properties": {
            "target": {
                "type": "object",
                "properties": {"zone": {"type": "integer", "x-mcp-header": "Zone"}},
            },
            "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        },
    }
    assert header_params(schema) == {
        ("target", "zone"): "Mcp-Param-Zone",
        ("flag",): "Mcp-Param-Flag",
    }


def test_data_keywords_are_not_annotations() -> None:
    # "x-mcp-header" inside an example, a default or a const is instance data.
    schema = {
        "type": "object",
        "properties": {
            "a": {
                "type": "object",
                "default": {"x-mcp-header": "Nope"},
                "examples": [{"x-mcp-header": "Nope"}],
                "const": {"x-mcp-header": "Nope"},
            }
        },
    }
    assert header_params(schema) == {}
    assert header_params({"type": "object"}) == {}
    assert header_params({}) == {}


def test_validate_tool_lists_every_problem_and_the_error_keeps_them() -> None:
    tool = _tool(
        "many",
        {
            "a": {"type": "string", "x-mcp-header": ""},
            "b": {"type": "number", "x-mcp-header": "B"},
            "c": {"type": "string", "x-mcp-header": "C"},
            "d": {"type": "string", "x-mcp-header": "c"},
        },
    )
    problems = header_params.validate_tool(tool)
    assert len(problems) == 3
    with pytest.raises(HeaderAnnotationError) as info:
        header_params(tool)
    assert info.value.rule == "not-empty"
    assert info.value.path == ("a",)
    assert list(info.value.problems) == problems


def test_a_self_referencing_host_schema_terminates() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    schema["properties"]["loop"] = schema
    schema["anyOf"] = [schema]
    assert header_params(schema) == {}


# ------------------------------------------------------------- value mirroring

#: The annotated tool http-custom-headers serves, and the arguments it asks for.
CUSTOM = _tool(
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


def test_the_conformance_arguments_become_these_headers() -> None:
    headers = header_params.headers_for(CUSTOM, CUSTOM_ARGS)
    b64 = {k: decode_header_value(v) for k, v in headers.items()}
    assert headers["Mcp-Param-Region"] == "us-west1"
    assert headers["Mcp-Param-Priority"] == "42"
    assert headers["Mcp-Param-Verbose"] == "false"
    assert headers["Mcp-Param-Debug"] == "true"
    assert headers["Mcp-Param-EmptyVal"] == ""
    # x-mcp-header "Method" is Mcp-Param-Method, never the standard Mcp-Method.
    assert headers["Mcp-Param-Method"] == "test-method"
    assert headers["Mcp-Param-InternalSpace"] == "us west 1"
    for name in (
        "NonAscii",
        "Whitespace",
        "LeadingSpace",
        "TrailingSpace",
        "ControlChar",
        "CrLf",
        "Tab",
    ):
        assert headers[f"Mcp-Param-{name}"].startswith("=?base64?"), name
    assert b64["Mcp-Param-CrLf"] == "line1\r\nline2"
    # Unannotated parameters (the number-typed float_val, the query) are not mirrored
    # (ClientCustomHeaderNoMirrorNumber / NoMirrorUnannotated).
    assert len(headers) == 14
    assert not any(k.lower() in ("mcp-param-floatval", "mcp-param-query") for k in headers)


def test_null_and_missing_values_give_no_header() -> None:
    # ClientCustomHeaderOmitNull: verbose is null, debug is absent.
    args = {"region": "us-east1", "priority": 1, "verbose": None, "query": "SELECT 1"}
    headers = header_params.headers_for(CUSTOM, args)
    assert headers == {"Mcp-Param-Region": "us-east1", "Mcp-Param-Priority": "1"}
    assert header_params.headers_for(CUSTOM, {}) == {}
    assert header_params.headers_for(CUSTOM, None) == {}


def test_nested_values_are_read_at_their_exact_path() -> None:
    schema = {
        "type": "object",
        "properties": {
            "t": {
                "type": "object",
                "properties": {"z": {"type": "integer", "x-mcp-header": "Zone"}},
            }
        },
    }
    mapping = header_params(schema)
    assert param_headers(mapping, {"t": {"z": -7}}) == [("Mcp-Param-Zone", "-7")]
    # A missing step, or a step that is not an object: no value, no header.
    assert param_headers(mapping, {"t": "flat"}) == []
    assert param_headers(mapping, {"z": 1}) == []


@pytest.mark.parametrize(
    ("value", "rendered"),
    [(2**53 - 1, "9007199254740991"), (-(2**53 - 1), "-9007199254740991"), (42.0, "42"), (0, "0")],
)
def test_integers_in_the_safe_range_are_decimal(value: Any, rendered: str) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
    assert header_params.headers_for(schema, {"n": value}) == {"Mcp-Param-N": rendered}


@pytest.mark.parametrize(
    "value", [2**53, -(2**53), 10**400, float("nan"), float("inf"), {"a": 1}, [1]]
)
def test_a_value_that_cannot_be_mirrored_is_a_typed_error(value: Any) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
    with pytest.raises(ValidationError, match="'n'"):
        header_params.headers_for(schema, {"n": value})


def test_arguments_must_be_an_object() -> None:
    with pytest.raises(ValidationError, match="arguments must be an object"):
        header_params.headers_for(CUSTOM, ["us-west1"])


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
    valid = _tool("valid_tool", {"region": {"type": "string", "x-mcp-header": "Region"}})
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
        Tool.from_dict(_tool("t", {})),
    ]
    kept, warnings = filter_tools(parsed)
    assert [t.name for t in kept] == ["test_custom_headers", "t"]
    assert len(warnings) == 2


def test_stdio_ignores_annotations() -> None:
    # HDR-7: other transports MAY ignore x-mcp-header entirely; this client does.
    tools = [tool for tool, _ in INVALID_TOOLS]
    assert filter_tools(tools, http=False) == (tools, [])


def test_a_peer_tool_name_cannot_forge_log_lines() -> None:
    tool = _tool("evil\nWARNING fake", {"v": {"type": "string", "x-mcp-header": ""}})
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


# ------------------------------------------------ model-based property test

_TYPES = ["string", "integer", "boolean", "number", "object", "array", "null", None]
_ANNOTATIONS = st.one_of(
    st.none(),  # no annotation
    st.sampled_from(
        ["Region", "region", "X-Id", "a.b", "", "A B", "A:B", "Ré", "a\tb", "~!#$%&'*+-.^_`|"]
    ),
    st.text(max_size=4),
)


@given(st.lists(st.tuples(_ANNOTATIONS, st.sampled_from(_TYPES)), max_size=6))
def test_annotation_rules_against_a_reference_model(
    props: list[tuple[str | None, str | None]],
) -> None:
    properties: dict[str, Any] = {}
    for i, (annotation, kind) in enumerate(props):
        prop: dict[str, Any] = {} if kind is None else {"type": kind}
        if annotation is not None:
            prop["x-mcp-header"] = annotation
        properties[f"p{i}"] = prop
    # The model: the rules of server/tools.mdx § x-mcp-header, written independently.
    token = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+")
    annotated = [(a, k) for a, k in props if a is not None]
    lowered = [a.lower() for a, _ in annotated]
    valid = (
        all(token.fullmatch(a) and a.isascii() for a, _ in annotated)
        and all(k in ("string", "integer", "boolean") for _, k in annotated)
        and len(set(lowered)) == len(lowered)
    )
    schema = {"type": "object", "properties": properties}
    assert (header_params.validate_tool(schema) == []) == valid
    if valid:
        expected = {(f"p{i}",): f"Mcp-Param-{a}" for i, (a, _) in enumerate(props) if a is not None}
        assert header_params(schema) == expected
    else:
        with pytest.raises(HeaderAnnotationError):
            header_params(schema)
