"""CAP-5 on 2026-07-28 servers, over both shells: ``notifications/roots/list_changed``
does not exist in the 2026-07-28 revision (roots are asked for inside results, MRTR;
ROOT-5), so ``set_roots`` never sends it to a modern server, while a handshake-era
server that declared roots is still told (ROOT-3).

Real peer: the SDK server (``mcp==2.3.0``) over stdio, behind ``stdio_tap.py``, which
records every line the client writes; in modern mode every request recorded validates
against the 2026-07-28 schema.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import SDK_SERVER, Shell

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proto" / "modern"))

from _modern_wire import REQUEST_DEFS, assert_valid_request

TAP = Path(__file__).with_name("stdio_tap.py")


def written(log: Path) -> list[dict[str, Any]]:
    out = []
    for line in log.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("dir") == "c2s" and "line" in entry:
            out.append(json.loads(entry["line"]))
    return out


@pytest.mark.parametrize("protocol", ["modern", "legacy"])
def test_set_roots_never_notifies_a_modern_server(
    shell: Shell, tmp_path: Path, protocol: str
) -> None:
    log = tmp_path / "tap.jsonl"

    async def scenario(c: Any) -> None:
        await c.list_tools()  # connected, with the roots capability declared
        await c.set_roots([{"uri": "file:///b", "name": "b"}])
        await c.ping()  # anything written before this is in the log by now

    shell.run(
        scenario,
        [sys.executable, str(TAP), str(log), "--", *SDK_SERVER],
        protocol=protocol,
        roots=[{"uri": "file:///a"}],
    )
    messages = written(log)
    notified = [m for m in messages if m.get("method") == "notifications/roots/list_changed"]
    if protocol == "modern":
        assert notified == []
        for m in messages:
            if "id" in m and m.get("method") in REQUEST_DEFS:
                assert_valid_request(m)
    else:
        assert len(notified) == 1  # ROOT-3: the handshake era is told as before
