"""Rows of docs/requirements.md that were partial, proven over both shells (issue 24).

TOOL-1: listing across servers fails fast on an authorization failure; the scripted
server's ``unauthorized`` mode answers every request 401 with a Bearer challenge (a
protected server reached without a token: no real server is set up for OAuth here),
beside the SDK server over stdio.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from mcp_proto import errors

from ._http_support import HTTP_READ_TIMEOUT, hostile_http_server
from .conftest import SDK_SERVER, Shell

PROTOCOL = "legacy"


def test_list_tools_fails_fast_when_one_server_refuses_authorization(shell: Shell) -> None:
    """TOOL-1 (and AUTH-31): a 401 from one of two servers fails ``list_tools`` with
    the ``UnauthorizedError`` (a host must not mistake "not authorized" for "no tools");
    the other server is still usable on its own, and ``cache=False`` refetches and fails
    the same way."""

    async def scenario(c: Any) -> list[str]:
        with pytest.raises(errors.UnauthorizedError) as info:
            await c.list_tools()
        assert info.value.status == 401
        with pytest.raises(errors.UnauthorizedError):
            await c.list_tools(cache=False)
        return sorted(t.name for t in await c.list_tools(server="sdk"))

    with hostile_http_server("unauthorized") as peer:
        configs = [
            {"name": "sdk", "command": SDK_SERVER},
            {
                "name": "locked",
                "type": "streamable_http",
                "url": peer.base + "/mcp",
                "read_timeout": HTTP_READ_TIMEOUT,
            },
        ]
        names = shell.run_client(scenario, configs)
    assert "echo" in names
    # Not logged and skipped like a server that cannot start.
    assert not any("locked" in m for m in shell.log.messages(logging.WARNING))
