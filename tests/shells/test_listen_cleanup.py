"""SUB-22 and SUB-20 over both shells. SUB-22: a host's cleanup-then-reconnect loop keeps its
subscriptions (each ``server.cleanup()`` cancels the listen and stops the process; the
next request starts a new process, which gets the listen again), and the teardowns,
however quick, never count against the restart bound that ends a crash-looping
server's subscriptions (SUB-21). ``client.close()`` (leaving the ``with``) ends them.
SUB-20: a replacement process that dies during its initialisation is noticed and
replaced in turn.

Scripted 2026-07-28 stdio peer ``tests/servers/listen_stdio.py`` (a real server does
not log its input on demand): it logs every line it receives with its pid, and after
each acknowledgment sends a ``tools/list_changed`` (``flood 0``).
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import SERVERS, Shell

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proto" / "modern"))

from _modern_wire import REQUEST_DEFS, assert_valid_request

LISTEN_PEER = [sys.executable, str(SERVERS / "listen_stdio.py")]


async def done(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


def log_lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    out = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            pid, _, text = line.partition(" ")
            out.append((int(pid), json.loads(text)))
    return out


def test_a_cleanup_then_reconnect_loop_keeps_the_subscription(
    shell: Shell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "listen.log"
    monkeypatch.setenv("LISTEN_LOG", str(log))
    kept: list[Any] = []

    def listened_by() -> list[int]:
        return [p for p, m in log_lines(log) if m.get("method") == "subscriptions/listen"]

    async def scenario(c: Any) -> None:
        server = c.servers[0]
        got: list[str] = []
        marker = "notifications/tools/list_changed"  # each process sends one after its ack
        sub = await c.listen({"tools_list_changed": True}, lambda m, p: got.append(m))
        await done(sub.wait_acknowledged(10))
        assert await shell.wait_for(lambda: got.count(marker) == 1, timeout=15)
        for round_trip in range(1, 4):  # each cleanup well inside the 5 s bound
            await done(server.cleanup())
            assert not sub.closed and sub.error is None, round_trip
            assert not sub.active  # waiting for the next connection
            await c.list_tools()  # the host's reconnect
            assert await shell.wait_for(lambda: sub.active, timeout=15), round_trip
            assert len(set(listened_by())) == round_trip + 1
            # The same handle and listener get the new process's notifications.
            want = round_trip + 1
            assert await shell.wait_for(lambda n=want: got.count(marker) == n, timeout=15)
        assert not sub.closed
        kept.append(sub)

    shell.run(scenario, [*LISTEN_PEER, "flood", "0"])
    (sub,) = kept
    assert sub.closed and sub.error is None  # leaving the with ended it
    pids = listened_by()
    assert len(pids) == len(set(pids)) == 4  # one listen per process, none lost
    cancels = [m for _, m in log_lines(log) if m.get("method") == "notifications/cancelled"]
    assert len(cancels) == 4  # each cleanup, then the close, cancelled the live listen
    for _, m in log_lines(log):
        if "id" in m and m.get("method") in REQUEST_DEFS:
            assert_valid_request(m)


def test_a_replacement_that_dies_during_its_initialisation_is_restarted(
    shell: Shell, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SUB-20: the first process exits on its own after acknowledging; its replacement
    answers ``server/discover`` and dies before acknowledging the re-sent listen (an
    exit during the initialisation that established it). That exit counts too: the
    replacement's loss is noticed and a third process gets the listen. (The restart
    interval is shortened so that neither exit is a crash loop, SUB-21.)"""
    log, gen = tmp_path / "listen.log", tmp_path / "generations"
    monkeypatch.setenv("LISTEN_LOG", str(log))
    monkeypatch.setenv("LISTEN_GEN", str(gen))
    monkeypatch.setattr(shell.mod.StdioServer, "SUBSCRIPTION_RESTART_MIN_INTERVAL", 0.2)

    def listened_by() -> list[int]:
        return [p for p, m in log_lines(log) if m.get("method") == "subscriptions/listen"]

    async def scenario(c: Any) -> None:
        sub = await c.listen({"tools_list_changed": True})
        await done(sub.wait_acknowledged(10))
        first = listened_by()
        # No request from the host: the exits alone bring the next processes.
        assert await shell.wait_for(lambda: len(set(listened_by())) >= 3, timeout=20)
        assert await shell.wait_for(lambda: sub.active, timeout=15)
        assert not sub.closed and sub.error is None
        pids = listened_by()
        assert len(pids) == 3 and pids[0] == first[0]
        started = [int(p) for p in gen.read_text().split()]
        assert started == pids  # one process per generation, each got the listen once

    shell.run(scenario, [*LISTEN_PEER, "init_dies", "0.5"])
