"""Issue 9 item 7 over both shells: ``connect`` and ``Client`` refuse an option they
cannot honour (an ``oauth_provider`` that is not an ``OAuthProvider``) with a clear
``ValueError`` before anything starts or is sent, and accept ``protocol="auto"`` /
``"legacy"``, which connect a real server.
(``protocol="modern"`` and ``discover_timeout`` are built since issue 10: see the
``test_modern_*.py`` suites.)"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_proto import errors

from ._http_support import HTTP_READ_TIMEOUT, hostile_http_server
from .conftest import SDK_SERVER, Shell, text_of

DEADLINE = 30.0
# (keyword, value, what the one-line message starts with)
REFUSED: list[tuple[str, Any, str]] = [
    ("oauth_provider", object(), "oauth_provider must be an mcp_proto.oauth.OAuthProvider"),
]


async def _never(c: Any) -> None:
    raise AssertionError("connect accepted an option it cannot honour")


@pytest.mark.parametrize(("option", "value", "start"), REFUSED, ids=[r[0] for r in REFUSED])
def test_connect_refuses_before_any_request(
    shell: Shell, option: str, value: Any, start: str
) -> None:
    with hostile_http_server("ok") as peer:
        with pytest.raises(ValueError) as info:
            shell.run(
                _never,
                peer.base + "/",
                read_timeout=HTTP_READ_TIMEOUT,
                deadline=DEADLINE,
                **{option: value},
            )
        assert peer.recorder.requests == []  # nothing was sent
    assert str(info.value).startswith(start)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("option", "value", "start"), REFUSED, ids=[r[0] for r in REFUSED])
def test_connect_refuses_before_starting_a_command(
    shell: Shell, option: str, value: Any, start: str
) -> None:
    # The refusal comes before the command lookup: not a CommandNotFoundError.
    with pytest.raises(ValueError) as info:
        shell.run(_never, "no-such-mcp-server-i9e --flag", deadline=DEADLINE, **{option: value})
    assert not isinstance(info.value, errors.MCPError)
    assert str(info.value).startswith(start)


@pytest.mark.parametrize(("option", "value", "start"), REFUSED, ids=[r[0] for r in REFUSED])
def test_client_refuses_a_config_dict_carrying_one(
    shell: Shell, option: str, value: Any, start: str
) -> None:
    config = {"type": "streamable_http", "url": "http://127.0.0.1:9/mcp", option: value}
    with pytest.raises(ValueError) as info:
        shell.run_client(_never, [config], deadline=DEADLINE)
    assert str(info.value).startswith(start)


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_auto_and_legacy_connect_a_real_server(shell: Shell, protocol: str) -> None:
    async def scenario(c: Any) -> str:
        [server] = list(c.servers)
        assert server.config.protocol == protocol
        return text_of(await c.call_tool("echo", {"text": "hi"}))

    assert shell.run(scenario, SDK_SERVER, protocol=protocol) == "hi"
