"""Typed errors of the 2026-07-28 revision (LIFE-16, §B1, §B3).

-32020 / -32021 / -32022 map to their classes and carry their data as attributes;
``InputRequiredError`` carries what ``resume_input_required`` needs. Each error is
built from a response that validates against the revision's schema.
"""

from __future__ import annotations

from typing import Any

import pytest
from _modern_wire import assert_valid

import mcp_proto
from mcp_proto.errors import (
    HeaderAnnotationError,
    HeaderMismatchError,
    InputRequiredError,
    MCPError,
    MissingRequiredClientCapabilityError,
    RemoteProtocolError,
    ServerError,
    UnknownResultTypeError,
    UnsupportedProtocolVersionError,
    ValidationError,
    server_error_from,
)


def _response(error: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "error": error}


def test_header_mismatch() -> None:
    error = {
        "code": -32020,
        "message": "Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'",
    }
    assert_valid("HeaderMismatchError", _response(error))
    typed = server_error_from(error, method="tools/call")
    assert type(typed) is HeaderMismatchError
    assert (typed.code, typed.method) == (-32020, "tools/call")


def test_missing_required_client_capability_carries_what_is_missing() -> None:
    error = {
        "code": -32021,
        "message": "Missing required client capability",
        "data": {"requiredCapabilities": {"sampling": {}}},
    }
    assert_valid("MissingRequiredClientCapabilityError", _response(error))
    typed = server_error_from(error)
    assert type(typed) is MissingRequiredClientCapabilityError
    assert typed.required_capabilities == {"sampling": {}}
    assert typed.code == -32021


def test_unsupported_protocol_version_carries_supported_and_requested() -> None:
    # The spec's example (versioning.mdx § Protocol Version Negotiation).
    error = {
        "code": -32022,
        "message": "Unsupported protocol version",
        "data": {"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"},
    }
    assert_valid("UnsupportedProtocolVersionError", _response(error))
    typed = server_error_from(error, method="server/discover")
    assert type(typed) is UnsupportedProtocolVersionError
    assert typed.supported == ("2026-07-28", "2025-11-25")
    assert typed.requested == "1900-01-01"
    assert str(typed) == "Unsupported protocol version (code -32022)"


@pytest.mark.parametrize(
    "data",
    [
        None,
        "x",
        [],
        {"supported": "2026-07-28", "requested": 5},
        {"supported": [1, None, "2026-07-28"]},
    ],
)
def test_malformed_modern_error_data_never_raises(data: Any) -> None:
    version = server_error_from({"code": -32022, "message": "m", "data": data})
    assert isinstance(version, UnsupportedProtocolVersionError)
    assert all(isinstance(v, str) for v in version.supported)
    assert version.requested is None
    capability = server_error_from({"code": -32021, "message": "m", "data": data})
    assert isinstance(capability, MissingRequiredClientCapabilityError)
    assert capability.required_capabilities is None


def test_the_classes_can_be_built_directly() -> None:
    error = UnsupportedProtocolVersionError("no", supported=("2026-07-28",), requested="x")
    assert (error.code, error.supported, error.requested) == (-32022, ("2026-07-28",), "x")
    assert MissingRequiredClientCapabilityError("no").code == -32021


def test_input_required_error_fields_and_resumable() -> None:
    error = InputRequiredError(
        "more than 10 rounds",
        input_requests={"ask": {"method": "elicitation/create", "params": {}}},
        request_state="opaque",
        request_method="tools/call",
        request_params={"name": "t"},
        input_responses={"earlier": {"action": "accept"}},
    )
    assert error.resumable is True
    assert error.request_state == "opaque"
    assert error.input_responses == {"earlier": {"action": "accept"}}
    assert InputRequiredError("x").resumable is False
    # Whoever raises it can say it cannot be resumed (e.g. malformed inputRequests).
    assert InputRequiredError("x", request_method="tools/call", resumable=False).resumable is False
    assert isinstance(error, MCPError) and not isinstance(error, ServerError)


def test_places_in_the_hierarchy() -> None:
    for cls in (
        HeaderMismatchError,
        MissingRequiredClientCapabilityError,
        UnsupportedProtocolVersionError,
    ):
        assert issubclass(cls, ServerError)
    assert issubclass(HeaderAnnotationError, ValidationError) and issubclass(
        HeaderAnnotationError, ValueError
    )
    assert issubclass(UnknownResultTypeError, RemoteProtocolError)
    for name in (
        "HeaderAnnotationError",
        "UnknownResultTypeError",
        "header_params",
        "HeaderParams",
    ):
        assert hasattr(mcp_proto, name), name
