"""``mcp-proto``'s deprecation notices: once per configuration and version, not on every
command, and none for Logging on a handshake-era session (issue 24 G).

Through the CLI as a subprocess against the SDK server (``tests/servers/sdk_server.py``):
``--log-level`` on a 2026-07-28 session uses Logging, which that revision deprecates
(DEP-4). Each test has its own state folder (``XDG_STATE_HOME``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_io_sync import cli
from mcp_proto import deprecations

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "mcp_io_sync.cli"]
SDK = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_server.py")]
LOG = ["--log-level", "debug", "call", "log", "level=debug", "message=dbg"]
NOTICE = "mcp-proto: warning: Logging is deprecated (since MCP 2026-07-28)"

pytestmark = pytest.mark.peer


def run(state: Path, *args: str, server: list[str] = SDK) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_STATE_HOME": str(state)}
    return subprocess.run(
        [*CLI, *args, "--", *server],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        input="",
        timeout=120,
    )


def notices(proc: subprocess.CompletedProcess[str]) -> list[str]:
    assert proc.returncode == 0, proc.stderr
    assert "[sdk_server] sdk_server: dbg" in proc.stderr  # what --log-level asked for
    return [line for line in proc.stderr.splitlines() if "deprecated" in line]


def state_file(state: Path) -> Path:
    return state / "mcp-proto" / "notices.json"


def test_a_notice_is_shown_once_per_configuration(tmp_path: Path) -> None:
    first = run(tmp_path, "--protocol", "modern", *LOG)
    assert [n[: len(NOTICE)] for n in notices(first)] == [NOTICE]
    assert notices(run(tmp_path, "--protocol", "modern", *LOG)) == []
    # Another configuration (another server command) gets the notice once too.
    other = [sys.executable, "-u", SDK[1]]
    assert len(notices(run(tmp_path, "--protocol", "modern", *LOG, server=other))) == 1
    assert notices(run(tmp_path, "--protocol", "modern", *LOG, server=other)) == []
    saved = json.loads(state_file(tmp_path).read_text())
    assert saved["format"] == 1 and len(saved["shown"]) == 2
    # The entries are hashes: the file names no command.
    assert "sdk_server" not in state_file(tmp_path).read_text()


def test_quiet_remembers_nothing(tmp_path: Path) -> None:
    proc = run(tmp_path, "-q", "--protocol", "modern", *LOG)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert not state_file(tmp_path).exists()
    assert len(notices(run(tmp_path, "--protocol", "modern", *LOG))) == 1


@pytest.mark.parametrize(
    "garbage", [b"{not json", b"[1, 2]", b'{"format": 1, "shown": 7}', b"\xff"]
)
def test_a_corrupt_state_file_is_ignored_and_replaced(tmp_path: Path, garbage: bytes) -> None:
    path = state_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes(garbage)
    assert len(notices(run(tmp_path, "--protocol", "modern", *LOG))) == 1
    assert len(json.loads(path.read_text())["shown"]) == 1
    assert notices(run(tmp_path, "--protocol", "modern", *LOG)) == []
    assert [p.name for p in path.parent.iterdir()] == ["notices.json"]  # no temporary left


def test_on_a_handshake_era_session_log_level_warns_of_nothing(tmp_path: Path) -> None:
    """Logging is deprecated by 2026-07-28; on a 2025-11-25 session logging/setLevel is
    the protocol's way: the level is set, the server's debug line shown, no notice."""
    proc = run(tmp_path, "--protocol", "legacy", *LOG)
    assert notices(proc) == []
    assert proc.stderr.splitlines() == ["mcp-proto: debug: [sdk_server] sdk_server: dbg"]


def test_a_new_version_shows_the_notice_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In process (the version is this package's): the same configuration under another
    version is another entry."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    shown = []
    for version in ("1.0", "1.0", "2.0"):
        monkeypatch.setattr(cli, "__version__", version)
        deprecations.reset()  # (a new process each time, as on the command line)
        assert cli.main(["--protocol", "modern", *LOG, "--", *SDK]) == 0
        shown.append(
            sum("Logging is deprecated" in line for line in capsys.readouterr().err.splitlines())
        )
    deprecations.reset()
    assert shown == [1, 0, 1]


def test_the_memory_is_bounded(tmp_path: Path) -> None:
    from mcp_io_sync.cli import _notices

    path = tmp_path / "mcp-proto" / "notices.json"
    path.parent.mkdir()
    old = {f"{i:032x}": float(i) for i in range(_notices.MAX_ENTRIES + 50)}
    path.write_text(json.dumps({"format": 1, "shown": old}))
    deprecations.reset()
    memory = _notices.Notices(path, "configuration", "1.0")
    assert deprecations.announce("roots", lambda text: None)
    try:
        memory.remember()
    finally:
        deprecations.reset()
    shown = json.loads(path.read_text())["shown"]
    assert len(shown) == _notices.MAX_ENTRIES
    assert f"{0:032x}" not in shown  # the oldest went first
    assert memory._key("roots") in shown
