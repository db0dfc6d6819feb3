"""A server whose stdout is not JSON-RPC (issue 8, item 8), both shells.

The user must learn from the error what went wrong: a timeout or a failed handshake
after unusable output quotes the start of the first such line (control characters
escaped, capped); a response that cannot be decoded fails its call at once (its id is
known), not after the timeout. Scripted peer: ``hostile_stdio.py`` modes ``noise`` and
``badanswer`` (real servers do print banners and stack traces to stdout, but not on
demand).
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_proto import errors

from .conftest import Shell, children_matching, hostile, text_of


def test_initialize_timeout_quotes_the_servers_unusable_output(shell: Shell) -> None:
    async def scenario(c: Any) -> None:  # pragma: no cover - never connects
        raise AssertionError("connected to a server that never answered initialize")

    with pytest.raises(errors.RequestTimeoutError) as caught:
        shell.run(scenario, hostile("noise"), read_timeout=1.5)
    message = str(caught.value)
    assert message.startswith("initialize timed out")
    assert "not JSON-RPC" in message
    # The first line, with its ANSI escapes made visible, not the second one.
    assert "\\x1b[31mError: Cannot find module 'left-pad'\\x1b[0m" in message
    assert "at Object" not in message
    assert "\x1b" not in message
    assert children_matching("hostile_stdio.py") == []


def test_a_handshake_cut_short_quotes_the_output_too(shell: Shell) -> None:
    async def scenario(c: Any) -> None:  # pragma: no cover - never connects
        raise AssertionError("connected to a server that exited")

    with pytest.raises(errors.ConnectionError) as caught:
        shell.run(scenario, hostile("noise", "exit"), read_timeout=20)
    message = str(caught.value)
    assert "closed its output" in message
    assert "Cannot find module 'left-pad'" in message
    assert len(message) < 600  # capped: the 1000-character line is not in it


@pytest.mark.parametrize("kind", ["utf8", "shape"])
def test_an_undecodable_response_fails_its_call_at_once(shell: Shell, kind: str) -> None:
    async def scenario(c: Any) -> str:
        with pytest.raises(errors.ToolCallError) as caught:
            # A generous timeout: failing "at once" means well before it (the test
            # would otherwise fail with a timeout error instead of this one).
            await c.call_tool("t", {"kind": kind}, timeout=15)
        cause = caught.value.__cause__ or caught.value
        assert isinstance(cause, errors.RemoteProtocolError) or isinstance(
            caught.value, errors.RemoteProtocolError
        )
        # The connection is still good: the next call is answered.
        assert text_of(await c.call_tool("t", {"ok": True})) == "ok"
        return str(caught.value)

    message = shell.run(scenario, hostile("badanswer"))
    assert "not valid JSON-RPC" in message
    assert "timed out" not in message
    if kind == "utf8":
        assert "caf\\xe9" in message
