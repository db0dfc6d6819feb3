"""``mcp-proto --protocol`` and the era in ``mcp-proto tools`` (issue 10), run as a
subprocess against the dual-era SDK server (``mcp==2.3.0``) and a scripted modern-only
peer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SDK = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_server.py")]
MODERN_ONLY = [sys.executable, str(ROOT / "tests" / "servers" / "hostile_modern.py"), "baseline"]
CLI = [sys.executable, "-m", "mcp_io_sync.cli"]


def run(*args: str, server: list[str] | None = SDK) -> subprocess.CompletedProcess[str]:
    argv = [*CLI, *args]
    if server is not None:
        argv += ["--", *server]
    return subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, timeout=90, input="", env=dict(os.environ)
    )


@pytest.mark.parametrize(
    ("options", "line"),
    [
        (["--protocol", "modern"], "server sdk_server: 2026-07-28 (modern)"),
        (["--protocol", "legacy"], "server sdk_server: 2025-11-25 (legacy)"),
        ([], "server sdk_server: 2026-07-28 (modern)"),  # auto: the probe finds it modern
    ],
)
def test_tools_shows_the_era(options: list[str], line: str) -> None:
    proc = run(*options, "tools")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:2] == ["NAME", "ARGUMENTS"]  # stdout is the table alone
    assert all(not row.startswith("server ") for row in lines)
    assert any(row.startswith("echo ") for row in lines)
    assert proc.stderr.splitlines()[-1] == f"mcp-proto: {line}"
    quiet = run("-q", *options, "tools")
    assert quiet.returncode == 0 and "server sdk_server" not in quiet.stderr


def test_protocol_after_the_command_and_in_json() -> None:
    proc = run("--json", "tools", "--protocol", "legacy")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["servers"] == {"sdk_server": {"protocolVersion": "2025-11-25", "era": "legacy"}}
    assert "echo" in {t["name"] for t in data["tools"]}


def test_legacy_against_a_modern_only_server_fails_typed() -> None:
    proc = run("--protocol", "legacy", "tools", server=MODERN_ONLY)
    assert proc.returncode in (3, 4), proc.stderr  # connection / server error, one line
    assert "Traceback" not in proc.stderr
    ok = run("--protocol", "modern", "tools", server=MODERN_ONLY)
    assert ok.returncode == 0, ok.stderr
    assert ok.stderr.splitlines()[-1].endswith(": 2026-07-28 (modern)")


def test_a_bad_protocol_is_a_usage_error() -> None:
    proc = run("--protocol", "newest", "tools")
    assert proc.returncode == 2
    assert "invalid choice: 'newest'" in proc.stderr
