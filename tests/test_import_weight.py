"""What ``import mcp_io_sync`` / ``import mcp_io_trio`` loads (the bench's import row,
issue 9's performance rule): a program that talks to a handshake-era server over stdio
does not load the 2026-07-28 revision's modules, subscriptions or the HTTP strategies;
they load when used. Asserted on the modules loaded, never on time."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Loaded on first use only.
LAZY = (
    "mcp_proto.modern.cache",
    "mcp_proto.modern.headers",
    "mcp_proto.modern.mrtr",
    "mcp_proto.modern.notify_queue",
    "mcp_proto.connection._listen",
    "mcp_proto.connection.subscription",
    "mcp_proto.connection._http",
    "mcp_proto.connection._http_streams",
    "mcp_proto.connection._exchange",
    "mcp_proto.connection._legacy_sse",
)


def loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return set(json.loads(out.splitlines()[-1]))


@pytest.mark.parametrize("shell", ["mcp_io_sync", "mcp_io_trio"])
def test_importing_a_shell_loads_no_modern_listen_or_http_module(shell: str) -> None:
    loaded = loaded_after(f"import {shell}")
    assert shell in loaded and "mcp_proto.connection" in loaded
    assert sorted(m for m in LAZY if m in loaded) == []
    assert f"{shell}._listen" not in loaded and f"{shell}._http" not in loaded


@pytest.mark.parametrize("shell", ["mcp_io_sync", "mcp_io_trio"])
def test_the_lazily_exported_names_still_resolve(shell: str) -> None:
    loaded = loaded_after(
        f"import {shell} as s, mcp_proto, mcp_proto.connection as c\n"
        "assert s.CacheInfo.__name__ == 'CacheInfo'\n"
        "assert s.InputRequiredWait.__name__ == 'InputRequiredWait'\n"
        "assert callable(s.header_params) and s.header_params is mcp_proto.header_params\n"
        "assert mcp_proto.HeaderParams.__name__ == 'HeaderParams'\n"
        "assert c.GET_READY_WAIT > 0 and c.KEEPALIVE_MISSES > 0\n"
        "from mcp_io_sync import CacheInfo as _c\n"
    )
    assert "mcp_proto.modern.cache" in loaded and "mcp_proto.modern.headers" in loaded
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        __import__(shell).nope  # noqa: B018 - an unknown name stays an AttributeError
