"""Closing a client releases everything: pipes, processes, threads (both shells)."""

from __future__ import annotations

import gc
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any

from .conftest import SDK_SERVER, Shell, children_matching, text_of

RECORDING: list[str] = [sys.executable, str(Path(__file__).with_name("recording_server.py"))]


def test_closing_the_client_closes_every_pipe(shell: Shell) -> None:
    """No ``ResourceWarning: unclosed file`` for the child's stdin/stdout/stderr, after a
    cleanup/respawn cycle and after close (recorded here rather than left to -W error,
    so the failure lists every leaked object)."""

    async def scenario(c: Any) -> None:
        assert text_of(await c.call_tool("init")).startswith("{")
        await c.cleanup()  # the first process goes
        await c.ping()  # a second one starts

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        shell.run(scenario, RECORDING)
        gc.collect()
    leaks = [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)]
    assert leaks == [], leaks
    assert children_matching("recording_server.py") == []


def test_closing_the_client_stops_its_threads(shell: Shell) -> None:
    def ours() -> list[str]:
        return [t.name for t in threading.enumerate() if t.name.startswith("mcp-")]

    before = set(ours())

    async def scenario(c: Any) -> None:
        c.on_notification(lambda *args: None)
        await c.call_tool("change_tools")  # a notification: the dispatcher starts
        await c.call_tool("sample", {"prompt": "x"})  # a server request: a handler runs

    shell.run(scenario, SDK_SERVER, sampling_handler=lambda messages: "ok")
    deadline = time.monotonic() + 5
    while set(ours()) - before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert set(ours()) - before == set()
