"""Both shells: what a host's handler is called with, against the SDK server over
stdio (issue 24 I)."""

from __future__ import annotations

import json
import logging
from typing import Any

from .conftest import SDK_SERVER, Shell, text_of

#: The SDK server's ctx.elicit() needs the handshake era's back-channel.
PROTOCOL = "legacy"


def test_a_loop_bound_default_parameter_keeps_its_value(shell: Shell) -> None:
    # `lambda m, s, a=answer: a` is how a loop variable is bound in Python: the handler
    # answers with its own `a`, never with an argument the client passed into it
    # (which turned every answer into `cancel`).
    answers = [
        {"action": "accept", "content": {"name": "Ada"}},
        {"action": "decline"},
    ]
    got: list[Any] = []
    for answer in answers:

        async def scenario(c: Any) -> None:
            got.append(json.loads(text_of(await c.call_tool("elicit_name", {}))))

        shell.run(scenario, SDK_SERVER, elicitation_handler=lambda m, s, a=answer: a)
    assert got == [
        {"action": "accept", "content": {"name": "Ada"}},
        {"action": "decline", "content": None},
    ]


def test_content_that_fails_the_requested_schema_is_answered_32603(shell: Shell) -> None:
    # ELIC-6, §B2: the answer is an error, not a `cancel` the server would take for
    # the user's choice; the content never reaches the server.
    async def scenario(c: Any) -> Any:
        return json.loads(text_of(await c.call_tool("elicit_name", {})))

    got = shell.run(scenario, SDK_SERVER, elicitation_handler=lambda m, s: {"name": 1234567})
    assert got["error"]["code"] == -32603
    assert "1234567" not in json.dumps(got)
    assert any("elicitation content rejected" in m for m in shell.log.messages(logging.WARNING))
