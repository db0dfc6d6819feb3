"""The CLI's log handler follows ``sys.stderr`` from one ``main()`` to the next, even
when the stream it wrote to before has been closed (a host running commands with its
own stderr each time; pytest's capture between tests)."""

from __future__ import annotations

import io
import sys
import tempfile

import pytest

from mcp_io_sync.cli import main


def test_main_runs_again_after_the_stderr_it_used_was_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A file, not a StringIO: a closed StringIO's flush() does not raise, a file's does.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as first:
        monkeypatch.setattr(sys, "stderr", first)
        assert main(["-c", "/nonexistent/mcp-server-xyz", "tools"]) != 0
        first.seek(0)
        assert "mcp-server-xyz" in first.read()

    second = io.StringIO()
    monkeypatch.setattr(sys, "stderr", second)
    assert main(["-c", "/nonexistent/mcp-server-xyz", "tools"]) != 0
    assert "mcp-server-xyz" in second.getvalue()
