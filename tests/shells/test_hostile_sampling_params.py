"""Issue 11, case 1, end to end over both shells: a server's ``sampling/createMessage``
whose ``tool_result`` has ``"toolUseId": []`` (or ``{}``) made ``serve_request`` raise
``TypeError``; both shells logged an ERROR traceback and answered -32603. Malformed
params get -32602, the host handler never runs, and nothing is logged as an error.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from .conftest import Shell, hostile, text_of


def test_malformed_tool_use_id_is_invalid_params(
    shell: Shell, caplog: pytest.LogCaptureFixture
) -> None:
    called: list[Any] = []

    def sampling(messages: Any) -> Any:
        called.append(messages)
        return "sampled"

    requests = [
        {
            "method": "sampling/createMessage",
            "params": {  # exactly the input, then the same with an object
                "messages": [
                    {"role": "user", "content": {"type": "tool_result", "toolUseId": bad}}
                ],
                "maxTokens": 5,
            },
        }
        for bad in ([], {})
    ]

    async def scenario(c: Any) -> list[Any]:
        out = json.loads(text_of(await c.call_tool("t", {"requests": requests})))
        return [r["reply"] for r in out["replies"]]

    with caplog.at_level(logging.DEBUG):
        replies = shell.run(scenario, hostile("requests"), sampling_handler=sampling)
    expected = {
        "code": -32602,
        "message": "Invalid sampling request: message 0 has a tool result without a string"
        " toolUseId",
    }
    assert [r["error"] for r in replies] == [expected, expected]
    assert called == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
