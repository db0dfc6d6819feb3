"""SCH-17's other half, in both shells: a ``notifications/tools/list_changed`` arriving
while a call is in flight does not change the definition its result is checked against
(the one the request was sent under), even when the host has already re-listed the
tools. The first half, the refreshed definition after a -32020 retry, is proven in
tests/shells/test_built_rows.py; the rule pure, in tests/proto/test_client_core.py.

Scripted peer ``hostile_stdio.py swap_schema`` (no real server swaps a schema on cue):
it holds the call, announces the change, gives ``t`` a new outputSchema at the next
``tools/list`` and only then answers the call with a result valid under the old one.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_proto.errors import ValidationError

from .conftest import Shell, hostile


def test_sch17_a_list_changed_mid_call_leaves_the_calls_definition(shell: Shell) -> None:
    refreshed: list[list[str]] = []

    async def scenario(c: Any) -> None:
        async def on_change(server: Any, method: str, params: Any) -> None:
            if method == "notifications/tools/list_changed":
                (tool,) = await c.list_tools()  # the re-list the server waits for
                refreshed.append(list(tool.output_schema["required"]))

        c.on_notification(shell.callback(on_change))
        (tool,) = await c.list_tools()
        assert tool.output_schema["required"] == ["n"]
        result = await c.call_tool("t")
        # Checked against the definition it was sent under (wants n): accepted.
        assert result.structured_content == {"n": 1}
        await c.flush_callbacks()
        assert refreshed == [["m"]]  # the refreshed definition was listed mid-call
        (tool,) = await c.list_tools()
        assert tool.output_schema["required"] == ["m"]
        # The same answer to a call sent under the new definition is refused: the
        # check is real, and it follows the definition of the request.
        with pytest.raises(ValidationError, match="m"):
            await c.call_tool("t")

    shell.run(
        scenario, hostile("swap_schema"), protocol="legacy", validate_structured_content="strict"
    )
