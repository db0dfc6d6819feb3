"""HTTP header values of the 2026-07-28 revision: encoding, x-mcp-header rules, mirroring.

Rows HDR-1, HDR-2, HDR-3, HDR-4. The tables come from the spec (streamable-http.mdx
§ Value Encoding, server/tools.mdx § x-mcp-header) and from what the official
conformance scenarios http-custom-headers and http-invalid-tool-headers serve and
check. Whole requests are in test_modern_request_headers.py.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from _modern_tools import CUSTOM, CUSTOM_ARGS, INVALID_TOOLS, tool_def
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.errors import HeaderAnnotationError, ValidationError
from mcp_proto.modern.headers import (
    decode_header_value,
    encode_header_value,
    header_params,
    param_headers,
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
    tool = tool_def(
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
    tool = tool_def(
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
    [
        (2**53 - 1, "9007199254740991"),
        (-(2**53 - 1), "-9007199254740991"),
        (42.0, "42"),
        (0, "0"),
        (2.5, "2.5"),  # not an integer: the server's own schema check will say so
    ],
)
def test_integers_in_the_safe_range_are_decimal(value: Any, rendered: str) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
    assert header_params.headers_for(schema, {"n": value}) == {"Mcp-Param-N": rendered}


@pytest.mark.parametrize(
    "value", [2**53, -(2**53), 10**400, 1e300, float("nan"), float("inf"), {"a": 1}, [1]]
)
def test_a_value_that_cannot_be_mirrored_is_a_typed_error(value: Any) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
    with pytest.raises(ValidationError, match="'n'"):
        header_params.headers_for(schema, {"n": value})


def test_arguments_must_be_an_object() -> None:
    with pytest.raises(ValidationError, match="arguments must be an object"):
        header_params.headers_for(CUSTOM, ["us-west1"])


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
