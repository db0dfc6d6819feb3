"""Running the command line as users run it, for the CLI suites (tests/test_cli*.py): a
subprocess (``python -m mcp_io_sync.cli``) from the repository's root, and the same on a
terminal (a pty) for what only a terminal shows (the progress line, the table's width)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "mcp_io_sync.cli"]
SDK = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_server.py")]

Proc = subprocess.CompletedProcess[str]


def run_cli(
    *args: str,
    server: Sequence[str] | None = None,
    timeout: float = 90,
    stdin: str | None = "",
    env: Mapping[str, str] | None = None,
) -> Proc:
    """``mcp-proto ARGS [-- SERVER...]``, its output captured. ``stdin=None``: no
    input at all (``/dev/null``); a string is written to it."""
    argv = [*CLI, *args]
    if server is not None:
        argv += ["--", *server]
    return subprocess.run(
        argv,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        env=dict(os.environ if env is None else env),
    )


def one_line_error(proc: Proc) -> str:
    """The failure's stderr, checked to be exactly one line with no traceback."""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert lines[0].startswith("mcp-proto: "), lines[0]
    return lines[0]


def on_terminal(
    argv: Sequence[str],
    *,
    terminal: str,
    env: Mapping[str, str],
    timeout: float = 90,
) -> tuple[int, str, bytes]:
    """Run ``argv`` with its ``terminal`` stream (``"stdout"`` or ``"stderr"``) on a
    pty, the other one captured: (exit code, what the terminal showed, the other)."""
    import pty

    master, slave = pty.openpty()
    try:
        streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, terminal: slave}
        proc = subprocess.Popen(
            list(argv),
            cwd=ROOT,
            stdout=streams["stdout"],
            stderr=streams["stderr"],
            stdin=subprocess.DEVNULL,
            env=dict(env),
        )
        os.close(slave)
        out, err = proc.communicate(timeout=timeout)
        chunks = []
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child's end is closed and all was read
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
    screen = b"".join(chunks).decode("utf-8", "replace")
    return proc.returncode, screen, (err if terminal == "stdout" else out) or b""
