"""Issue 11, case 6: a server's hostile tool schema reaches the user through call_tool.

Before the fix, ``schema.compile`` let a bare ``ValueError`` out for the schemas below,
so ``call_tool`` raised an untyped error; with an output schema that happened after the
tool had run, and its result was lost. Now such a schema is an unusable one (SCH-13):
an input schema is warned about and the call is sent; an output schema is warned about
and the result is returned, in warn and in strict mode alike (strict mode checks the
content against a usable schema; an unusable schema is the server's fault, and the tool
has already run). See docs/json-schema.md.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_client_core import OK, FakeServer, setup, tool

HOSTILE = [
    # exactly the inputs (cases 2 and 3), each as a tool schema
    {"type": "object", "properties": {"a": {"type": "string", "pattern": "a{" + "1" * 4301 + "}"}}},
    {"type": "object", "properties": {"a": {"type": "string", "pattern": "\\" + "1" * 4301}}},
    {"type": "object", "$ref": "#/a/\u00b2", "a": []},
]
IDS = ["huge-quantifier", "huge-back-reference", "superscript-pointer-index"]


@pytest.mark.parametrize("schema", HOSTILE, ids=IDS)
def test_hostile_input_schema_warns_and_sends(schema: dict[str, Any]) -> None:
    core, driver = setup(
        {
            "s": FakeServer(
                script={"tools/list": {"tools": [tool("t", inputSchema=schema)]}, "tools/call": OK}
            )
        }
    )
    assert driver.run(core.call_tool("t", {"a": "x"})) == OK
    assert "tools/call" in driver.methods()
    (log,) = driver.logs
    assert log.level == "WARNING"
    assert log.message.startswith(
        "tool 't' on server 's': unusable input schema, the call is sent anyway: unusable"
        " JSON Schema"
    )


@pytest.mark.parametrize("mode", ["warn", "strict"])
@pytest.mark.parametrize("schema", HOSTILE, ids=IDS)
def test_hostile_output_schema_keeps_the_result(schema: dict[str, Any], mode: str) -> None:
    result = {"content": [{"type": "text", "text": "done"}], "structuredContent": {"a": "x"}}
    core, driver = setup(
        {
            "s": FakeServer(
                script={
                    "tools/list": {"tools": [tool("t", outputSchema=schema)]},
                    "tools/call": result,
                }
            )
        },
        validate_structured_content=mode,
    )
    assert driver.run(core.call_tool("t")) == result  # the tool ran: its result is kept
    (log,) = driver.logs
    assert log.level == "WARNING"
    assert log.message.startswith(
        "structured output of tool 't' on server 's' not checked: unusable JSON Schema"
    )
