"""Per-request ``_meta`` and ``resultType`` of the 2026-07-28 revision.

Rows LIFE-3, LIFE-10, LIFE-12, LIFE-13, LIFE-15, LIFE-19, CACHE-8. Every request built
here is validated against the revision's schema (``_modern_wire``).
"""

from __future__ import annotations

from typing import Any

import pytest
from _modern_wire import assert_valid, assert_valid_request, request

from mcp_proto.errors import RemoteProtocolError, UnknownResultTypeError, ValidationError
from mcp_proto.handlers import Handlers, client_capabilities
from mcp_proto.modern.meta import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    LOG_LEVELS,
    PROTOCOL_VERSION,
    CapabilitiesMemo,
    check_extensions,
    modern_capabilities,
    request_meta,
    result_type,
    with_meta,
)
from mcp_proto.types import Implementation

INFO = Implementation(name="mcp-proto", version="0.1.0")


def _meta(**kwargs: Any) -> dict[str, Any]:
    options: dict[str, Any] = {
        "protocol_version": "2026-07-28",
        "client_info": INFO,
        "capabilities": {},
    }
    options.update(kwargs)
    return request_meta(**options)


def test_the_three_per_request_fields_with_the_schemas_key_names() -> None:
    meta = _meta()
    assert meta == {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-proto", "version": "0.1.0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    assert_valid("RequestMetaObject", meta)


# Every request the client sends in this revision, with its params before _meta.
REQUESTS = [
    ("server/discover", {}),
    ("tools/list", {}),
    ("tools/list", {"cursor": "c1"}),
    ("tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
    ("tools/call", {"name": "echo", "_meta": {"progressToken": 7}}),
    ("resources/list", {}),
    ("resources/templates/list", {}),
    ("resources/read", {"uri": "file:///etc/hosts"}),
    ("prompts/list", {}),
    ("prompts/get", {"name": "review", "arguments": {"code": "x"}}),
    (
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "review"},
            "argument": {"name": "code", "value": "x"},
        },
    ),
    ("subscriptions/listen", {"notifications": {"toolsListChanged": True}}),
]


@pytest.mark.parametrize(
    ("method", "params"), REQUESTS, ids=[f"{m}-{i}" for i, (m, _) in enumerate(REQUESTS)]
)
def test_every_request_validates_against_the_2026_schema(
    method: str, params: dict[str, Any]
) -> None:
    handlers = Handlers(sampling=lambda *a: None, elicitation=lambda *a: None)
    built = with_meta(
        params,
        protocol_version="2026-07-28",
        client_info=INFO,
        capabilities=client_capabilities(handlers),
        extensions=["io.modelcontextprotocol/tasks"],
        host_meta={"traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"},
        log_level="warning",
    )
    assert_valid_request(request(method, built))


def test_capabilities_come_from_the_handlers_with_extensions() -> None:
    handlers = Handlers(sampling=lambda *a: None, sampling_supports_tools=True)
    caps = modern_capabilities(client_capabilities(handlers), ["io.modelcontextprotocol/tasks"])
    # 2026-07-28 ClientCapabilities.roots has no listChanged: there is no session.
    assert caps == {
        "roots": {},
        "sampling": {"tools": {}},
        "extensions": {"io.modelcontextprotocol/tasks": {}},
    }
    assert_valid("ClientCapabilities", caps)
    # Settings per extension, merged with ones already declared.
    caps = modern_capabilities(
        {"extensions": {"com.example/a": {}}},
        {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]}},
    )
    assert caps["extensions"] == {
        "com.example/a": {},
        "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html"]},
    }


@pytest.mark.parametrize(
    "bad",
    [
        "tasks",
        "io.modelcontextprotocol",
        "/tasks",
        "io..x/tasks",
        "1io.x/tasks",
        "io.x/-tasks",
        "io.x/t sk",
        7,
    ],
)
def test_an_extension_identifier_needs_a_prefix_and_a_legal_name(bad: Any) -> None:
    with pytest.raises(ValueError, match="extension identifier"):
        check_extensions([bad])


def test_extensions_as_a_bare_string_or_with_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="not the string"):
        check_extensions("io.modelcontextprotocol/tasks")
    with pytest.raises(ValueError, match="must be an object"):
        check_extensions({"io.modelcontextprotocol/tasks": ["x"]})
    assert check_extensions(()) == {}


def test_a_callable_request_meta_is_called_once_per_request() -> None:
    calls: list[int] = []

    def host() -> dict[str, Any]:
        calls.append(1)
        return {"com.example/n": len(calls)}

    first = _meta(host_meta=host)
    second = _meta(host_meta=host)
    assert calls == [1, 1]
    assert first["com.example/n"] == 1 and second["com.example/n"] == 2


def test_mutating_what_was_given_after_the_build_changes_nothing() -> None:
    # CACHE-8: a request carries a copy taken when it is built.
    given: dict[str, Any] = {"baggage": "a=1", "com.example/ctx": {"tenant": ["t1"]}}
    meta = _meta(host_meta=given)
    given["baggage"] = "a=2"
    given["com.example/ctx"]["tenant"].append("t2")
    assert meta["baggage"] == "a=1"
    assert meta["com.example/ctx"] == {"tenant": ["t1"]}
    # Same for what a callable returns, and for the caller's own _meta.
    held: dict[str, Any] = {"com.example/x": [1]}
    meta = _meta(host_meta=lambda: held, own={"com.example/own": held["com.example/x"]})
    held["com.example/x"].append(2)
    assert meta["com.example/x"] == [1] and meta["com.example/own"] == [1]


def test_layers_and_who_wins() -> None:
    host = {
        "com.example/a": "host",
        "com.example/b": "host",
        LOG_LEVEL: "error",
        PROTOCOL_VERSION: "1999-01-01",
        CLIENT_CAPABILITIES: {"sampling": {}},
        CLIENT_INFO: {"name": "spoof", "version": "0"},
    }
    own = {"com.example/b": "own", "progressToken": "p1", PROTOCOL_VERSION: "2000-01-01"}
    meta = _meta(host_meta=host, own=own, log_level="debug")
    # The caller's own _meta beats the host's; the host's beats set_log_level's level.
    assert meta["com.example/a"] == "host"
    assert meta["com.example/b"] == "own"
    assert meta["progressToken"] == "p1"
    assert meta[LOG_LEVEL] == "error"
    # The client-owned keys are the client's whatever was supplied.
    assert meta[PROTOCOL_VERSION] == "2026-07-28"
    assert meta[CLIENT_CAPABILITIES] == {}
    assert meta[CLIENT_INFO] == {"name": "mcp-proto", "version": "0.1.0"}


@pytest.mark.parametrize("level", sorted(LOG_LEVELS))
def test_the_log_level_travels_in_meta(level: str) -> None:
    # LIFE-15: no logging/setLevel in this revision; the level is per request.
    meta = _meta(log_level=level)
    assert meta[LOG_LEVEL] == level
    assert_valid("RequestMetaObject", meta)


@pytest.mark.parametrize("level", ["verbose", "DEBUG", "", 3])
def test_an_unknown_log_level_is_refused(level: Any) -> None:
    with pytest.raises(ValidationError, match="log level"):
        _meta(log_level=level)


def test_client_info_can_be_left_out_or_given_as_a_mapping() -> None:
    assert CLIENT_INFO not in _meta(client_info=None)
    meta = _meta(client_info={"name": "host", "version": "2", "title": "Host"})
    assert meta[CLIENT_INFO] == {"name": "host", "version": "2", "title": "Host"}
    with pytest.raises(ValidationError, match="client_info"):
        _meta(client_info={"name": "host"})


class _Opaque:
    pass


@pytest.mark.parametrize(
    ("host", "match"),
    [
        (["not", "an", "object"], "must give an object"),
        (lambda: 5, "must give an object"),
        ({"k": _Opaque()}, "not JSON data"),
        ({"k": float("nan")}, "JSON cannot carry"),
        ({"k": {1: "int key"}}, "non-string key"),
    ],
)
def test_bad_host_metadata_is_a_typed_error(host: Any, match: str) -> None:
    with pytest.raises(ValidationError, match=match):
        _meta(host_meta=host)


def test_deep_host_metadata_is_bounded() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5000):
        node["k"] = {}
        node = node["k"]
    with pytest.raises(ValidationError, match="nested"):
        _meta(host_meta=deep)


def test_a_raising_callable_is_the_hosts_own_error() -> None:
    def host() -> dict[str, Any]:
        raise KeyError("host bug")

    with pytest.raises(KeyError, match="host bug"):
        _meta(host_meta=host)


def test_with_meta_keeps_params_and_leaves_the_input_alone() -> None:
    params = {"name": "echo", "arguments": {"a": 1}, "_meta": {"progressToken": 3}}
    built = with_meta(params, protocol_version="2026-07-28", client_info=INFO, capabilities={})
    assert params == {"name": "echo", "arguments": {"a": 1}, "_meta": {"progressToken": 3}}
    assert built["name"] == "echo" and built["arguments"] == {"a": 1}
    assert built["_meta"]["progressToken"] == 3
    assert built["_meta"][PROTOCOL_VERSION] == "2026-07-28"
    assert with_meta(None, protocol_version="2026-07-28", client_info=None, capabilities={}) == {
        "_meta": {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}
    }


def test_capabilities_must_be_an_object() -> None:
    with pytest.raises(ValidationError, match="capabilities"):
        _meta(capabilities=["roots"])


# ------------------------------------------------------------------ resultType


@pytest.mark.parametrize(
    ("result", "kind"),
    [
        ({}, "complete"),  # absent: a server of an earlier revision
        ({"content": []}, "complete"),
        ({"resultType": "complete"}, "complete"),
        ({"resultType": "input_required", "requestState": "s"}, "input_required"),
    ],
)
def test_result_type(result: dict[str, Any], kind: str) -> None:
    assert result_type(result) == kind


@pytest.mark.parametrize(
    "result",
    [
        {"resultType": "partial"},
        {"resultType": "Complete"},
        {"resultType": None},
        {"resultType": 1},
        [],
        "x",
        None,
    ],
)
def test_an_unknown_result_type_is_a_typed_error(result: Any) -> None:
    with pytest.raises(UnknownResultTypeError) as info:
        result_type(result, method="tools/call")
    assert isinstance(info.value, RemoteProtocolError)
    assert info.value.method == "tools/call"
    if isinstance(result, dict):
        assert info.value.result_type == result["resultType"]


def test_extension_result_types_are_accepted_when_advertised() -> None:
    assert result_type({"resultType": "task"}, extra={"task"}) == "task"
    with pytest.raises(UnknownResultTypeError):
        result_type({"resultType": "task"})


# ------------------------------------------------------------------ CapabilitiesMemo


def test_the_memo_reuses_its_result_while_the_inputs_are_equal() -> None:
    memo = CapabilitiesMemo()
    caps = {"roots": {"listChanged": True}, "sampling": {}}
    first = memo.get(caps, ())
    assert first == modern_capabilities(caps, ())
    assert memo.get(dict(caps), ()) is first  # an equal mapping: no new copy
    assert memo.get(caps, ()) is first


def test_the_memo_notices_capabilities_changed_in_place() -> None:
    memo = CapabilitiesMemo()
    caps: dict[str, object] = {"sampling": {}}
    first = memo.get(caps, ())
    caps["elicitation"] = {}  # the same object, changed
    second = memo.get(caps, ())
    assert second is not first
    assert second == modern_capabilities(caps, ()) and "elicitation" in second
    assert "elicitation" not in first  # the earlier result was not changed either


def test_the_memo_recomputes_for_other_extensions_and_checks_them() -> None:
    memo = CapabilitiesMemo()
    caps = {"sampling": {}}
    plain = memo.get(caps, ())
    with_ext = memo.get(caps, ("com.example/thing",))
    assert with_ext["extensions"] == {"com.example/thing": {}}
    assert "extensions" not in plain
    with pytest.raises(ValidationError):
        memo.get(caps, ("no-prefix",))


def test_request_meta_uses_given_client_capabilities_as_they_are() -> None:
    given = {"sampling": {}}
    meta = request_meta(
        protocol_version="2026-07-28",
        client_info=None,
        capabilities={"ignored": {}},
        client_capabilities=given,
    )
    assert meta[CLIENT_CAPABILITIES] is given
