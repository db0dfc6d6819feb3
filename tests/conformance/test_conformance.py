"""The official MCP conformance suite, 2025-11-25 client leg (see docs/conformance.md).

Runs tests/conformance/run.sh, which installs Node 24 and the pinned harness into
.cache/conformance/ on first use (network needed once), then runs every client scenario
of the 2025-11-25 revision against tests/conformance/client.py. Only the scenarios in
expected-failures-2025-11-25.yml (authorization, until the OAuth work) may fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def test_conformance_2025_11_25_leg() -> None:
    # The client runs under this interpreter, so the leg tests the code pytest imports.
    env = dict(os.environ, PYTHON=sys.executable)
    proc = subprocess.run(
        ["bash", str(HERE / "run.sh")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=15 * 60,
    )
    lines = proc.stdout.strip().splitlines()
    report = proc.stdout + "\n--- run.sh stderr (tail) ---\n" + proc.stderr[-4000:]
    assert proc.returncode == 0, report
    assert lines and lines[-1].endswith(" failed"), report
    passed = int(lines[-1].split()[0])
    # 5 non-authorization scenarios in the pinned harness (0.2.0-alpha.12).
    assert passed >= 5, report
