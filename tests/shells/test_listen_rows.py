"""SUB-30 over both shells: a listen request is written to the pipe it was recorded
against, never to whichever process is current when the write happens.

Scripted peer ``tests/servers/listen_stdio.py deaf``: the first process answers
``server/discover`` and then reads nothing more, and exits a moment later. Meanwhile a
call with an 8 MiB argument fills the pipe (its write blocks: a thread in the blocking
shell, the write queue in Trio) and a listen request is recorded behind it, against
that first process. The process exits with both writes pending; the client restarts
it and re-sends the subscription. The bytes each process received (the peer logs
every line it reads, with its pid) show that nothing written for the first process
reached the second: the second reads discover and one listen, both whole messages.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_proto.errors import MCPError

from .conftest import SERVERS, Shell
from .test_listen import done, log_lines

LISTEN_PEER = [sys.executable, str(SERVERS / "listen_stdio.py")]
BLOB = "a" * (8 << 20)  # well beyond the pipe (enlarged to 1 MiB for big messages)


def test_a_listen_pending_at_a_restart_never_reaches_the_new_process(
    shell: Shell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "listen.log"
    monkeypatch.setenv("LISTEN_LOG", str(log))
    monkeypatch.setenv("LISTEN_GEN", str(tmp_path / "gen"))
    # The first process dies ~1.5 s after receiving (in the client's books) the listen:
    # a restart, not a crash loop (SUB-21).
    monkeypatch.setattr(shell.mod.StdioServer, "SUBSCRIPTION_RESTART_MIN_INTERVAL", 0.2)
    outcome: dict[str, Any] = {}

    async def scenario(c: Any) -> None:
        # connect() is done: the first process answered discover and turned deaf.
        async def big_call() -> None:
            try:
                # A raw request: written at once (call_tool would route first).
                await c.send_rpc("tools/call", {"name": "echo", "arguments": {"text": BLOB}})
            except MCPError as exc:
                outcome["call"] = exc

        async def listen() -> None:
            await shell.sleep(0.3)  # the big write is pending by now (the log checks it)
            sub = await c.listen({"tools_list_changed": True})
            outcome["granted"] = dict(await done(sub.wait_acknowledged(20)))
            outcome["sub"] = sub

        await shell.gather([big_call, listen])
        await done(outcome["sub"].close())

    shell.run(scenario, [*LISTEN_PEER, "deaf", "1.5"], read_timeout=30.0)

    assert isinstance(outcome.get("call"), MCPError)  # the process died under the call
    assert outcome["granted"] == {"toolsListChanged": True}
    pids = list(dict.fromkeys(p for p, _ in log_lines(log)))
    assert len(pids) == 2, pids
    first, second = pids
    by_pid = {pid: [m for p, m in log_lines(log) if p == pid] for pid in pids}
    # The first process read the probe only: the listen recorded against it was
    # still pending in its pipe when it died.
    assert [m.get("method") for m in by_pid[first]] == ["server/discover"]
    # The second got its own probe and the re-sent listen, once; not the first's
    # pending bytes (no part of the call, no second copy of the listen).
    # (A call in flight at a process loss fails; it is not re-sent: STDIO-10.)
    got = [m.get("method") for m in by_pid[second]]
    assert got[:2] == ["server/discover", "subscriptions/listen"], got
    assert got.count("subscriptions/listen") == 1, got
    assert "tools/call" not in got, got
