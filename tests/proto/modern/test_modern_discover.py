"""``server/discover``, the era decision table and the era cache (2026-07-28).

Rows LIFE-4..9, LIFE-14, LIFE-18, LIFE-20, §B3. The probe outcomes are the spec's
(stdio.mdx and streamable-http.mdx § Backward Compatibility, versioning.mdx) and the
legacy variants docs/requirements.md LIFE-6 lists (-32601, -32602, HTTP 400 without a
JSON-RPC body, silence).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _modern_wire import assert_valid, assert_valid_request, request
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.errors import (
    HeaderMismatchError,
    IncompatibleServerError,
    MissingRequiredClientCapabilityError,
    RemoteProtocolError,
)
from mcp_proto.modern.discover import (
    DiscoverInfo,
    EraCache,
    EraRecord,
    Incompatible,
    Legacy,
    Modern,
    ProbeAnswered,
    ProbeFailed,
    ProbeHttpStatus,
    ProbeSilent,
    RejectedModern,
    RetryModern,
    Undecided,
    check_discover_timeout,
    check_protocol,
    classify_probe,
    discover_params,
    origin_key,
    parse_discover_result,
    pick_version,
    process_key,
)
from mcp_proto.types import Implementation

#: The spec's own example (server/discover.mdx § Response).
SPEC_RESULT: dict[str, Any] = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}, "resources": {}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "ExampleServer", "version": "1.0.0"}},
    "instructions": "This server provides weather and resource utilities.",
    "ttlMs": 3600000,
    "cacheScope": "public",
}


def test_the_probe_request_validates_against_the_schema() -> None:
    params = discover_params(
        protocol_version="2026-07-28",
        client_info=Implementation("mcp-proto", "0.1.0"),
        capabilities={"roots": {"listChanged": True}},
    )
    assert set(params) == {"_meta"}
    assert_valid_request(request("server/discover", params, request_id="discover-1"))


def test_the_spec_example_result() -> None:
    assert_valid("DiscoverResult", SPEC_RESULT)
    info = parse_discover_result(SPEC_RESULT)
    assert info == DiscoverInfo(
        supported_versions=("2026-07-28",),
        protocol_version="2026-07-28",
        capabilities={"tools": {}, "resources": {}},
        server_info=Implementation("ExampleServer", "1.0.0"),
        instructions="This server provides weather and resource utilities.",
        ttl_ms=3600000,
        cache_scope="public",
    )


@pytest.mark.parametrize(
    ("ttl", "expected"),
    [(None, 0), (0, 0), (-5, 0), ("3600", 0), (True, 0), (1.5, 0), (2500, 2500)],
)
def test_a_missing_negative_or_malformed_ttl_is_stale_at_once(ttl: Any, expected: int) -> None:
    # LIFE-20: "absent/zero/negative/malformed => immediately stale".
    result = {k: v for k, v in SPEC_RESULT.items() if k != "ttlMs"}
    if ttl is not None:
        result["ttlMs"] = ttl
    assert parse_discover_result(result).ttl_ms == expected


@pytest.mark.parametrize(
    ("scope", "expected"),
    [(None, "private"), ("shared", "private"), ("private", "private"), ("public", "public")],
)
def test_a_missing_or_unknown_cache_scope_is_private(scope: Any, expected: str) -> None:
    result = {k: v for k, v in SPEC_RESULT.items() if k != "cacheScope"}
    if scope is not None:
        result["cacheScope"] = scope
    assert parse_discover_result(result).cache_scope == expected


def test_self_reported_fields_are_read_leniently() -> None:
    # serverInfo at the top level (the conformance mock puts it there), or malformed.
    result = {
        "supportedVersions": ["2026-07-28"],
        "capabilities": {},
        "serverInfo": {"name": "t", "version": "1"},
    }
    info = parse_discover_result(result)
    assert info.server_info == Implementation("t", "1")
    assert info.instructions is None
    broken = {
        **SPEC_RESULT,
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": 1}},
        "instructions": 5,
    }
    info = parse_discover_result(broken)
    assert info.server_info is None and info.instructions is None


@pytest.mark.parametrize(
    "result",
    [
        {},
        [],
        None,
        {"supportedVersions": "2026-07-28", "capabilities": {}},
        {"supportedVersions": ["2026-07-28", 5], "capabilities": {}},
        {"supportedVersions": ["2026-07-28"]},
        {"supportedVersions": ["2026-07-28"], "capabilities": []},
        {"supportedVersions": ["2026-07-28"], "capabilities": {}, "resultType": "input_required"},
        {"supportedVersions": ["2026-07-28"], "capabilities": {}, "resultType": "other"},
    ],
)
def test_what_is_not_a_discover_result_is_a_typed_error(result: Any) -> None:
    with pytest.raises(RemoteProtocolError):
        parse_discover_result(result)


def test_pick_version_prefers_ours_in_order() -> None:
    assert pick_version(["2025-11-25", "2026-07-28"]) == "2026-07-28"
    assert pick_version(["2099-01-01"]) is None
    assert pick_version("2026-07-28") is None
    assert pick_version([None, 3, "2026-07-28"]) == "2026-07-28"
    assert pick_version(["a", "b"], ours=("b", "a")) == "b"


# ----------------------------------------------------------- the decision table


def _error(code: Any, data: Any = None, message: str = "m") -> dict[str, Any]:
    out: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        out["data"] = data
    return out


def _body(error: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "error": error}).encode()


UNSUPPORTED = _error(-32022, {"supported": ["2026-07-28"], "requested": "2026-01-01"})


def test_a_discover_result_means_modern() -> None:
    decision = classify_probe(ProbeAnswered(SPEC_RESULT))
    assert isinstance(decision, Modern)
    assert decision.version == "2026-07-28"
    assert decision.info.capabilities == {"tools": {}, "resources": {}}


def test_unsupported_version_means_stay_modern_and_retry() -> None:
    # The conformance scenario request-metadata rejects the first request this way,
    # even listing the version just asked for: retry with it.
    decision = classify_probe(
        ProbeFailed(_error(-32022, {"supported": ["2026-07-28"], "requested": "2026-07-28"}))
    )
    assert decision == RetryModern("2026-07-28", ("2026-07-28",))
    over_http = classify_probe(ProbeHttpStatus(400, _body(UNSUPPORTED)))
    assert over_http == RetryModern("2026-07-28", ("2026-07-28",))


@pytest.mark.parametrize(
    ("outcome", "error_class"),
    [
        (ProbeFailed(_error(-32020)), HeaderMismatchError),
        (ProbeHttpStatus(400, _body(_error(-32020))), HeaderMismatchError),
        (
            ProbeFailed(_error(-32021, {"requiredCapabilities": {"sampling": {}}})),
            MissingRequiredClientCapabilityError,
        ),
    ],
)
def test_other_modern_errors_mean_modern_with_the_typed_error(
    outcome: Any, error_class: type
) -> None:
    decision = classify_probe(outcome)
    assert isinstance(decision, RejectedModern)
    assert type(decision.error) is error_class
    assert decision.error.method == "server/discover"


LEGACY_OUTCOMES = [
    ProbeFailed(_error(-32601, message="Method not found")),
    ProbeFailed(_error(-32602, message="Invalid params")),
    ProbeFailed(_error(-32600, message="Server not initialized")),
    ProbeFailed(_error(-32603)),
    ProbeFailed(_error(-32000, message="Bad Request: No valid session ID provided")),
    ProbeFailed(_error("oops")),
    ProbeFailed("not an object"),
    # A -32022 without its data, or a -32021 without its data, is not recognised.
    ProbeFailed(_error(-32022)),
    ProbeFailed(_error(-32022, {"supported": "2026-07-28"})),
    ProbeFailed(_error(-32021)),
    ProbeSilent(),
    ProbeHttpStatus(400),
    ProbeHttpStatus(400, b"<html>Bad Request</html>"),
    ProbeHttpStatus(400, b'{"detail": "missing session"}'),
    ProbeHttpStatus(404, b"Not Found"),
    ProbeHttpStatus(405),
    ProbeHttpStatus(404, _body(_error(-32601))),
    ProbeHttpStatus(406, b"\xff\xfe"),
    # An answer that is not a DiscoverResult: e.g. a server answering unknown methods with {}.
    ProbeAnswered({}),
    ProbeAnswered(None),
    ProbeAnswered(
        {"supportedVersions": ["2026-07-28"], "capabilities": {}, "resultType": "input_required"}
    ),
]


@pytest.mark.parametrize("outcome", LEGACY_OUTCOMES, ids=[repr(o)[:60] for o in LEGACY_OUTCOMES])
def test_anything_else_means_legacy(outcome: Any) -> None:
    decision = classify_probe(outcome)
    assert isinstance(decision, Legacy), decision
    assert decision.reason


@given(
    code=st.integers(min_value=-(2**40), max_value=2**40) | st.none() | st.text(max_size=5),
    data=st.none() | st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
    status=st.none() | st.sampled_from([400, 404, 405, 422]),
)
def test_fallback_is_never_keyed_on_one_code(code: Any, data: Any, status: Any) -> None:
    # Any error that is not a well-formed modern one means legacy, whatever its code.
    decision = classify_probe(ProbeFailed(_error(code, data), status))
    if code == -32020:
        assert isinstance(decision, RejectedModern)
    else:
        assert isinstance(decision, Legacy), (code, data, decision)


def test_a_modern_answer_listing_only_legacy_versions_falls_back() -> None:
    result = {**SPEC_RESULT, "supportedVersions": ["2025-11-25"]}
    assert isinstance(classify_probe(ProbeAnswered(result)), Legacy)
    error = _error(-32022, {"supported": ["2025-06-18", "2024-11-05"], "requested": "2026-07-28"})
    assert isinstance(classify_probe(ProbeFailed(error)), Legacy)


def test_a_modern_answer_listing_nothing_we_speak_is_incompatible() -> None:
    result = {**SPEC_RESULT, "supportedVersions": ["2099-01-01"]}
    decision = classify_probe(ProbeAnswered(result))
    assert isinstance(decision, Incompatible)
    assert decision.supported == ("2099-01-01",)
    assert isinstance(decision.error(), IncompatibleServerError)
    assert "2099-01-01" in str(decision.error())
    error = _error(-32022, {"supported": [], "requested": "2026-07-28"})
    assert isinstance(classify_probe(ProbeFailed(error)), Incompatible)


@pytest.mark.parametrize("status", [401, 403, 500, 502, 503])
def test_auth_challenges_and_server_failures_say_nothing_of_the_era(status: int) -> None:
    decision = classify_probe(ProbeHttpStatus(status, _body(UNSUPPORTED)))
    assert isinstance(decision, Undecided)
    assert decision.status == status


def test_a_successful_http_body_is_read_as_the_answer() -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": SPEC_RESULT}).encode()
    assert isinstance(classify_probe(ProbeHttpStatus(200, body)), Modern)


@given(st.binary(max_size=200), st.integers(min_value=400, max_value=499))
def test_any_http_body_is_classified_without_raising(body: bytes, status: int) -> None:
    decision = classify_probe(ProbeHttpStatus(status, body))
    assert isinstance(decision, (Legacy, RetryModern, RejectedModern, Incompatible, Undecided))


# ------------------------------------------------------------------ options


@pytest.mark.parametrize("value", ["auto", "modern", "legacy"])
def test_protocol_modes(value: str) -> None:
    assert check_protocol(value) == value


@pytest.mark.parametrize("value", ["Modern", "", "stateless", None, 1, ["auto"]])
def test_an_unknown_protocol_mode_is_a_value_error_naming_the_choices(value: Any) -> None:
    with pytest.raises(ValueError, match="'auto', 'modern' or 'legacy'"):
        check_protocol(value)


def test_discover_timeout() -> None:
    assert check_discover_timeout(5) == 5.0
    for bad in (0, -1, float("nan"), "5", True):
        with pytest.raises(ValueError, match="discover_timeout"):
            check_discover_timeout(bad)


# ---------------------------------------------------------------- era cache


def test_the_era_is_remembered_and_forgotten_per_key() -> None:
    cache = EraCache()
    key = origin_key("https://Example.com/mcp")
    assert cache.get(key) is None
    cache.remember(key, "modern", "2026-07-28")
    # Same origin, another path: the same cached era (per origin, LIFE-18).
    assert cache.get(origin_key("https://example.com:443/other")) == EraRecord(
        "modern", "2026-07-28"
    )
    assert origin_key("http://example.com/mcp") not in cache
    assert cache.forget(key) is True
    assert cache.forget(key) is False
    assert cache.get(key) is None and len(cache) == 0


def test_stdio_processes_are_keyed_by_pid() -> None:
    cache = EraCache()
    cache.remember(process_key(100, ["node", "server.js"]), "legacy")
    assert cache.get(process_key(100, ["node", "server.js"])) == EraRecord("legacy", None)
    # A restarted process (new pid) is probed again.
    assert cache.get(process_key(101, ["node", "server.js"])) is None


def test_the_cache_is_bounded_dropping_the_oldest() -> None:
    cache = EraCache(max_entries=3)
    for n in range(5):
        cache.remember(("k", n), "modern", "2026-07-28")
    assert len(cache) == 3
    assert [("k", n) in cache for n in range(5)] == [False, False, True, True, True]
    cache.remember(("k", 2), "legacy")  # re-remembering makes it the youngest
    cache.remember(("k", 5), "legacy")
    assert ("k", 2) in cache and ("k", 3) not in cache


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_a_bad_cache_size_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_entries"):
        EraCache(max_entries=bad)


def test_only_two_eras_exist() -> None:
    with pytest.raises(ValueError, match="era"):
        EraCache().remember("k", "stateless")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("http://127.0.0.1:8000/mcp", ("http", "127.0.0.1", 8000)),
        ("HTTPS://Example.COM/mcp?x=1", ("https", "example.com", 443)),
        ("http://example.com", ("http", "example.com", 80)),
        ("http://[::1]:9/mcp", ("http", "::1", 9)),
    ],
)
def test_origin_keys(url: str, key: tuple[str, str, int]) -> None:
    assert origin_key(url) == key


@pytest.mark.parametrize(
    "url", ["example.com/mcp", "ftp://example.com", "http://", "http://h:99999/", "http://h:x/"]
)
def test_a_url_without_an_origin_is_refused(url: str) -> None:
    with pytest.raises(ValueError):
        origin_key(url)
