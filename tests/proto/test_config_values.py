"""Hostile values in local configuration: huge numbers, deep nesting (issue 11 items 4, 5).

A definition file is local input: a bad entry is skipped with a warning naming it
(CONN-20), a bad builder argument is a ``ValueError`` naming the option; neither is ever
an ``OverflowError`` or ``RecursionError``.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.config import (
    REDACTED,
    ServerConfig,
    config_from_dict,
    parse_server_definitions,
    redact_config,
    sse_config,
    stdio_config,
    streamable_http_config,
)
from mcp_proto.server_config import MAX_SECONDS

#: The issue's number: a 1 followed by 399 zeros (400 digits), as a JSON file holds it.
HUGE = json.loads("1" + "0" * 399)
GOOD = {"command": "python good.py"}


def _entry(field: str, value: Any) -> dict[str, Any]:
    if field == "ping":
        return {"type": "sse", "url": "https://h/sse", field: value}
    return {"type": "stdio", "command": "python bad.py", field: value}


@pytest.mark.parametrize("field", ["read_timeout", "discover_timeout", "retry_backoff", "ping"])
def test_huge_duration_skips_only_that_entry(field: str) -> None:
    document = {"mcpServers": {"bad": _entry(field, HUGE), "good": GOOD}}
    configs, warnings = parse_server_definitions(document)
    assert [c.name for c in configs] == ["good"]
    skipped = [w for w in warnings if w.startswith("server 'bad': skipped")]
    assert len(skipped) == 1, warnings
    assert field in skipped[0]
    # The message stays one short line, not 400 digits.
    assert "0" * 50 not in skipped[0]


@pytest.mark.parametrize(
    "value",
    [HUGE, -HUGE, MAX_SECONDS + 1, 1e300, math.inf, -math.inf, math.nan, True, False, "30"],
    ids=["huge", "-huge", "max+1", "1e300", "inf", "-inf", "nan", "True", "False", "str"],
)
@pytest.mark.parametrize("field", ["read_timeout", "discover_timeout", "retry_backoff", "ping"])
def test_bad_duration_is_a_value_error_naming_the_option(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=field):
        config_from_dict(_entry(field, value))


def test_durations_up_to_the_bound_are_kept() -> None:
    assert stdio_config("python s.py", read_timeout=MAX_SECONDS).read_timeout == MAX_SECONDS
    assert sse_config("https://h/sse", ping=0.5).ping == 0.5
    assert stdio_config("python s.py", retry_backoff=0).retry_backoff == 0


@pytest.mark.parametrize("field", ["retries", "max_line_size", "max_decompressed_body_bytes"])
def test_huge_integer_limits_are_accepted_as_integers(field: str) -> None:
    # Counts and byte limits are only compared, never converted to float: a huge one
    # means "no practical limit" and is kept exactly.
    entry = (
        {"type": "streamable_http", "url": "https://h/mcp", field: HUGE}
        if field == "max_decompressed_body_bytes"
        else {"command": "python s.py", field: HUGE}
    )
    assert getattr(config_from_dict(entry), field) == HUGE


@pytest.mark.parametrize("field", ["retries", "max_line_size", "max_decompressed_body_bytes"])
@pytest.mark.parametrize(
    "value",
    [-HUGE, 1.5, math.inf, math.nan, True, "3"],
    ids=["-huge", "1.5", "inf", "nan", "True", "str"],
)
def test_bad_integer_limits_name_the_option(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=field) as info:
        ServerConfig(type="streamable_http", url="https://h", endpoint="/", **{field: value})
    assert len(str(info.value)) < 200


def test_huge_number_as_a_header_or_env_value_is_skipped_not_raised() -> None:
    # Numbers are stringified for headers/env; str() of a 5000-digit int raises
    # ValueError inside Python itself, so it is rejected by size first.
    giant = 10**5000
    document = {
        "mcpServers": {
            "h": {"type": "http", "url": "https://h/mcp", "headers": {"X-N": giant}},
            "e": {"command": "python s.py", "env": {"N": giant}},
            "good": GOOD,
        }
    }
    configs, warnings = parse_server_definitions(document)
    assert [c.name for c in configs] == ["good"]
    assert any(w.startswith("server 'h': skipped") and "headers" in w for w in warnings)
    assert any(w.startswith("server 'e': skipped") and "env" in w for w in warnings)


def test_huge_integer_where_a_string_belongs_is_named_not_printed() -> None:
    giant = 10**5000
    with pytest.raises(ValueError, match="integer of"):
        stdio_config("python s.py", name=giant)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="integer of"):
        streamable_http_config(giant)  # type: ignore[arg-type]


# ------------------------------------------------------------------------ redaction


def _nested(depth: int, leaf: dict[str, Any]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    node = root
    for _ in range(depth - 1):
        node["inner"] = {}
        node = node["inner"]
    node.update(leaf)
    return root


@pytest.mark.parametrize("depth", [500, 5_000, 100_000])
def test_redact_config_at_any_depth(depth: int) -> None:
    config = _nested(depth, {"token": "s3cret", "name": "deep"})
    out = redact_config(config)
    node = out
    for _ in range(depth - 1):
        node = node["inner"]
    assert node == {"token": REDACTED, "name": "deep"}
    # The input is not mutated.
    node = config
    for _ in range(depth - 1):
        node = node["inner"]
    assert node["token"] == "s3cret"


def test_redact_config_deep_through_lists() -> None:
    depth = 5_000
    config: Any = {"env": {"K": "v"}}
    for _ in range(depth):
        config = [{"servers": config}]
    out: Any = redact_config({"top": config})["top"]
    for _ in range(depth):
        out = out[0]["servers"]
    assert out == {"env": {"K": REDACTED}}


def test_redact_config_shared_but_acyclic_parts_are_copied() -> None:
    shared = {"password": "p", "port": 1}
    out = redact_config({"a": shared, "b": [shared, shared]})
    assert out == {
        "a": {"password": REDACTED, "port": 1},
        "b": [{"password": REDACTED, "port": 1}, {"password": REDACTED, "port": 1}],
    }


def test_redact_config_cycle_is_a_value_error() -> None:
    config: dict[str, Any] = {"name": "loop", "inner": []}
    config["inner"].append(config)
    with pytest.raises(ValueError, match="contains itself"):
        redact_config(config)


# ------------------------------------------------- values the OS cannot pass to a child


@pytest.mark.parametrize(
    ("entry", "option"),
    [
        ({"command": "python", "args": ["s.py", "a\x00b"]}, "command"),
        ({"command": ["py\x00thon", "s.py"]}, "command"),
        ({"command": "python s.py", "env": {"A=B": "1"}}, "env"),
        ({"command": "python s.py", "env": {"A\x00": "1"}}, "env"),
        ({"command": "python s.py", "env": {"A": "1\x002"}}, "env"),
        ({"command": "python s.py", "cwd": "/tmp\x00/x"}, "cwd"),
    ],
)
def test_values_a_child_cannot_get_are_rejected_by_name(entry: dict[str, Any], option: str) -> None:
    # Spawning with them raises a bare ValueError ("embedded null byte", "illegal
    # environment variable name") deep in subprocess; the config names the option first.
    with pytest.raises(ValueError, match=option):
        config_from_dict(entry)
    configs, warnings = parse_server_definitions({"mcpServers": {"bad": entry, "good": GOOD}})
    assert [c.name for c in configs] == ["good"]
    assert any(w.startswith("server 'bad': skipped") and option in w for w in warnings)


NUMERIC_FIELDS = [
    "read_timeout",
    "retries",
    "retry_backoff",
    "discover_timeout",
    "max_line_size",
    "max_decompressed_body_bytes",
    "ping",
]
ANY_NUMBER = (
    st.integers()
    | st.integers(min_value=10**300, max_value=10**1000)
    | st.integers(min_value=-(10**1000), max_value=-(10**300))
    | st.floats()
    | st.booleans()
)


@given(
    field=st.sampled_from(NUMERIC_FIELDS),
    value=ANY_NUMBER,
    kind=st.sampled_from(["stdio", "http", "sse"]),
)
def test_any_number_in_any_numeric_field_keeps_the_other_entries(
    field: str, value: Any, kind: str
) -> None:
    entry: dict[str, Any] = (
        {"type": "stdio", "command": "python s.py"}
        if kind == "stdio"
        else {"type": kind, "url": "https://h/sse" if kind == "sse" else "https://h/mcp"}
    )
    entry[field] = value
    configs, warnings = parse_server_definitions({"mcpServers": {"x": entry, "good": GOOD}})
    assert [c.name for c in configs][-1] == "good"
    assert all(len(w) < 300 for w in warnings)
