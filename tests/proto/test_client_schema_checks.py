"""Suggested client tests for the schema edits (SCH-7, SCH-11, SCH-12, SCH-13)."""

from __future__ import annotations

import pytest
from test_client_core import OK, FakeServer, setup, tool

from mcp_proto.errors import ValidationError

UNKNOWN = {"$schema": "urn:unknown-dialect", "type": "object"}


def test_input_schema_with_unsupported_dialect_is_not_sent() -> None:
    core, driver = setup(
        {
            "s": FakeServer(
                script={"tools/list": {"tools": [tool("t", inputSchema=UNKNOWN)]}, "tools/call": OK}
            )
        }
    )
    with pytest.raises(
        ValidationError,
        match='declares the JSON Schema dialect "urn:unknown-dialect": that dialect is not',
    ):
        driver.run(core.call_tool("t"))
    assert "tools/call" not in driver.methods()


def test_other_unusable_input_schema_warns_and_sends() -> None:
    bad = {"type": "object", "properties": {"a": {"$ref": "http://127.0.0.1:9/x"}}}
    core, driver = setup(
        {
            "s": FakeServer(
                script={"tools/list": {"tools": [tool("t", inputSchema=bad)]}, "tools/call": OK}
            )
        }
    )
    assert driver.run(core.call_tool("t")) == OK
    assert "tools/call" in driver.methods()
    (log,) = driver.logs
    assert log.level == "WARNING" and "input schema" in log.message


@pytest.mark.parametrize("mode", ["warn", "strict"])
def test_output_schema_with_unsupported_dialect_raises_in_both_modes(mode: str) -> None:
    t = tool("t", outputSchema=UNKNOWN)
    core, driver = setup(
        {
            "s": FakeServer(
                script={
                    "tools/list": {"tools": [t]},
                    "tools/call": {"content": [], "structuredContent": {}},
                }
            )
        },
        validate_structured_content=mode,
    )
    with pytest.raises(ValidationError, match="output schema declares the JSON Schema dialect"):
        driver.run(core.call_tool("t"))


@pytest.mark.parametrize("mode", ["warn", "strict"])
def test_format_gives_one_partial_warning(mode: str) -> None:
    t = tool(
        "t",
        outputSchema={"type": "object", "properties": {"d": {"type": "string", "format": "date"}}},
    )
    core, driver = setup(
        {
            "s": FakeServer(
                script={
                    "tools/list": {"tools": [t]},
                    "tools/call": {"content": [], "structuredContent": {"d": "x"}},
                }
            )
        },
        validate_structured_content=mode,
    )
    driver.run(core.call_tool("t"))
    (log,) = driver.logs
    assert "partial" in log.message and "format" in log.message


@pytest.mark.parametrize("mode", ["warn", "strict"])
def test_the_partial_warning_names_each_unevaluated_keyword(mode: str) -> None:
    """SCH-7: the warning names the keywords left unevaluated (``contentSchema`` and
    ``format``, sorted), and the check still refuses what the evaluated keywords
    refuse (strict) or warns about it (warn)."""
    schema = {
        "type": "object",
        "properties": {
            "d": {"type": "string", "format": "date"},
            "blob": {"type": "string", "contentMediaType": "application/json", "contentSchema": {}},
        },
        "required": ["d"],
    }
    t = tool("t", outputSchema=schema)
    core, driver = setup(
        {
            "s": FakeServer(
                script={
                    "tools/list": {"tools": [t]},
                    "tools/call": {"content": [], "structuredContent": {"d": 5}},
                }
            )
        },
        validate_structured_content=mode,
    )
    if mode == "strict":
        with pytest.raises(ValidationError, match="expected string, got integer"):
            driver.run(core.call_tool("t"))
        messages = [log.message for log in driver.logs]
    else:
        driver.run(core.call_tool("t"))
        messages = [log.message for log in driver.logs]
        assert any("structured output check failed" in m for m in messages)
    partial = [m for m in messages if "validation is partial" in m]
    assert partial == [
        "tool 't' on server 's': output schema validation is partial "
        "(contentSchema, format not evaluated)"
    ]
