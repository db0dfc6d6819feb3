"""Both shells and the command line: ``${workspaceFolder}`` in a workspace's own
definition file (``<folder>/.vscode/mcp.json``) is that folder, as VS Code defines it
(issue 24 H)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from .conftest import ROOT, SDK_SERVER, Shell, text_of


def vscode_workspace(tmp_path: Path) -> Path:
    """A workspace with its server script and a .vscode/mcp.json naming it through
    ``${workspaceFolder}``; the file's path."""
    folder = tmp_path / "proj"
    (folder / ".vscode").mkdir(parents=True)
    (folder / "server.py").write_text(
        f"import runpy\nrunpy.run_path({SDK_SERVER[1]!r}, run_name='__main__')\n",
        encoding="utf-8",
    )
    entry = {
        "type": "stdio",
        "command": sys.executable,
        "args": ["${workspaceFolder}/server.py"],
        "cwd": "${workspaceFolder}",
    }
    path = folder / ".vscode" / "mcp.json"
    path.write_text(json.dumps({"servers": {"local": entry}}), encoding="utf-8")
    return path


def test_workspace_folder_is_the_folder_above_vscode(shell: Shell, tmp_path: Path) -> None:
    path = vscode_workspace(tmp_path)

    async def scenario(c: Any) -> None:
        assert [s.name for s in c.servers] == ["local"]
        assert text_of(await c.call_tool("echo", {"text": "hi"}, server="local")) == "hi"

    shell.run_client(scenario, server_definition_file=str(path))
    assert not [m for m in shell.log.messages() if "skipped" in m]


def test_the_command_line_reads_it_the_same_way(tmp_path: Path) -> None:
    path = vscode_workspace(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_io_sync.cli", "--config", str(path), "call", "echo", "text=hi"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "hi"
