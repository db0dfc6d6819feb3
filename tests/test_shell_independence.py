"""Neither shell imports the other (issue 9, item 5).

``mcp_io_sync`` (threads, subprocess) and ``mcp_io_trio`` (Trio) are peers: a Trio
program must not load the blocking shell, nor a blocking one Trio. What both need is
pure (``mcp_proto``) or OS/HTTP-library mechanics (``mcp_io_common``, which imports
neither shell nor any event loop). Checked on the source with ``ast``, every import
statement included (lazy ones inside functions too), and by importing each shell in a
fresh interpreter.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: package -> top-level modules it must never import.
FORBIDDEN = {
    "mcp_io_sync": {"mcp_io_trio", "trio"},
    "mcp_io_trio": {"mcp_io_sync"},
    "mcp_io_common": {"mcp_io_sync", "mcp_io_trio", "trio", "asyncio", "anyio"},
}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_never_imports_the_other_shell(package: str) -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: import {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, name in _imports(path)
        if name.split(".")[0] in FORBIDDEN[package]
    ]
    assert offenders == []


@pytest.mark.parametrize(
    ("shell", "absent"), [("mcp_io_sync", "mcp_io_trio"), ("mcp_io_trio", "mcp_io_sync")]
)
def test_importing_a_shell_does_not_load_the_other(shell: str, absent: str) -> None:
    code = f"import sys, {shell}; print({absent!r} in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "False"


def test_the_checker_sees_an_offending_import(tmp_path: Path) -> None:
    # The walk finds lazy imports inside functions, so the test above can fail.
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from mcp_io_sync._base import BaseServer\n")
    assert _imports(module) == [(2, "mcp_io_sync._base")]


# ---------------------------------------------------------------------- protocol vocabulary

#: Protocol vocabulary that has no place in a shell (issue 9, item 5): header names,
#: method names, retry and backoff decisions, response classification, SSE parsing.
#: All of it is the machine's (``mcp_proto.connection``); a shell only runs exchanges.
PROTOCOL_VOCABULARY = (
    '"Last-Event-ID"',
    '"Mcp-Session-Id"',
    '"WWW-Authenticate"',
    '"notifications/',
    '"initialize"',
    '"tools/call"',
    "backoff_delay",
    "is_retryable",
    "classify_response",
    "SSEParser",
)

#: Shells whose every module is checked (a shell joins once it drives the machine).
VOCABULARY_FREE_SHELLS = ["mcp_io_sync", "mcp_io_trio"]


def _vocabulary_in(path: Path) -> list[str]:
    """``file:line: word`` for each vocabulary word in the file (first occurrence)."""
    text = path.read_text(encoding="utf-8")
    return [
        f"{path.name}:{text.count(chr(10), 0, text.index(word)) + 1}: {word}"
        for word in PROTOCOL_VOCABULARY
        if word in text
    ]


@pytest.mark.parametrize("package", VOCABULARY_FREE_SHELLS)
def test_shell_source_has_no_protocol_vocabulary(package: str) -> None:
    offenders = [
        hit for path in sorted((ROOT / package).rglob("*.py")) for hit in _vocabulary_in(path)
    ]
    assert offenders == []


def test_the_vocabulary_check_sees_a_rule(tmp_path: Path) -> None:
    # The check can fail: a module naming a header or deciding a retry is found.
    module = tmp_path / "m.py"
    module.write_text('x = 1\nheaders = {"Mcp-Session-Id": sid}\nif is_retryable(m, e): pass\n')
    assert _vocabulary_in(module) == ['m.py:2: "Mcp-Session-Id"', "m.py:3: is_retryable"]
