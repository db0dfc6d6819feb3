"""The examples in examples/ run as documented, against the bundled demo server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("script", ["quickstart_sync.py", "quickstart_trio.py"])
def test_quickstart_runs(script: str) -> None:
    proc = subprocess.run(
        [sys.executable, f"examples/{script}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "countdown: Liftoff!" in proc.stdout
    assert "progress" in proc.stdout
    assert "weather" in proc.stdout


def test_the_tasks_example_runs() -> None:
    everything = ROOT / "tests" / "peers" / "node_modules" / ".bin" / "mcp-server-everything"
    if not everything.exists():
        pytest.skip("make peers not run")
    proc = subprocess.run(
        [sys.executable, "examples/tasks_example.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "chunk: progress 1/" in proc.stdout and "streamed countdown: Liftoff!" in proc.stdout
    assert "elicitation:" in proc.stdout and "✅ tasks:" in proc.stdout
