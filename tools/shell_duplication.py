"""Count code lines the two I/O shells share, identical once ``async``/``await`` are
stripped (issue 22's measure of what is written twice).

For each module present in both ``mcp_io_sync/`` and ``mcp_io_trio/`` (same relative
path), the code lines of each (blank lines, ``#`` comments, import statements, also
those over several lines, and lines of punctuation only left out; white space folded;
``async ``/``await `` removed) are
aligned with ``difflib`` and the lines of matching runs of two lines or more are
counted. Docstrings count (they are written twice too). Run:
``python tools/shell_duplication.py [-v]`` (``-v`` lists the runs of three or more).
"""

from __future__ import annotations

import ast
import difflib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_ASYNC = re.compile(r"\b(async|await)\s+")
_WORD = re.compile(r"\w")


def _import_lines(text: str) -> set[int]:
    """The line numbers (from 1) of every import statement, all of its lines."""
    return {
        n
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for n in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }


def code_lines(path: Path) -> list[str]:
    out = []
    text = path.read_text(encoding="utf-8")
    imports = _import_lines(text)
    for number, raw in enumerate(text.splitlines(), 1):
        if number in imports:
            continue
        line = " ".join(raw.split())
        if not line or line.startswith(("#", "import ", "from ")) or not _WORD.search(line):
            continue
        out.append(_ASYNC.sub("", line))
    return out


def shared(a: list[str], b: list[str]) -> list[tuple[int, int, int]]:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [m for m in matcher.get_matching_blocks() if m.size >= 2]


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    sync_root, trio_root = ROOT / "mcp_io_sync", ROOT / "mcp_io_trio"
    total = 0
    for path in sorted(sync_root.rglob("*.py")):
        other = trio_root / path.relative_to(sync_root)
        if not other.exists():
            continue
        a, b = code_lines(path), code_lines(other)
        blocks = shared(a, b)
        count = sum(m.size for m in blocks)
        total += count
        print(f"{path.relative_to(sync_root)!s:24} {count:5d}")
        if verbose:
            for m in blocks:
                if m.size >= 3:
                    print(f"    {m.size:4d}: {a[m.a]!r:.70}")
    print(f"{'total':24} {total:5d}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
