"""Side-by-side revisions for the benchmarks (issue 9: "the old and the new revision side
by side in one run, using the --at option").

``--at OLD --at NEW`` exports each revision's product packages with ``git archive`` into
its own temporary directory; each of our clients is then measured once per revision, as
``sync@OLD`` and ``sync@NEW``, interleaved with the others in the same run (same machine
state, same SDK baseline), and a second table compares each revision with the first one.
One ``--at`` keeps the old meaning: measure that revision instead of the working tree.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
#: The product's packages (the ones a revision may lack are skipped when exporting).
PRODUCT = ("mcp_proto", "mcp_io_common", "mcp_io_sync", "mcp_io_trio")
#: A revision may be at most this much worse than the first one in any cell (issue 9).
TOLERANCE = 0.05


def export_commit(rev: str, dest: str) -> str:
    """``git archive`` the product packages at ``rev`` into ``dest``; returns the commit."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", rev], capture_output=True, text=True, cwd=REPO, check=True
    ).stdout.strip()
    present = subprocess.run(
        ["git", "ls-tree", "--name-only", commit, "--", *PRODUCT],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout.split()
    archive = subprocess.run(
        ["git", "archive", commit, *present], capture_output=True, cwd=REPO, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", dest], input=archive, check=True)
    return commit


def compiled_exports(revs: Sequence[str], prefix: str) -> dict[str, str]:
    """Each of ``revs`` exported (:func:`export_commit`) into its own temporary directory
    (removed at exit) and compiled to bytecode, so a run does not compile it again:
    {commit: directory}, in the order given (bench/callgrind_ab.py, bench/kernel_ab.py)."""
    dirs: dict[str, str] = {}
    for rev in revs:
        dest = tempfile.mkdtemp(prefix=prefix)
        atexit.register(shutil.rmtree, dest, True)
        label = export_commit(rev, dest)
        subprocess.run([sys.executable, "-m", "compileall", "-q", dest], check=True)
        dirs[label] = dest
    return dirs


def run_cell(
    src: str, cell: str, n: int, flag: str, preexec_fn: Callable[[], None] | None = None
) -> dict[str, Any]:
    """``bench/callgrind_calls.py SHELL MODE N FLAG`` (``cell`` is ``SHELL.MODE``) on the
    product packages exported into ``src``, natively: the JSON of the line it prints for
    ``--counts`` or ``--opcodes`` (bench/kernel_ab.py, bench/opcodes_ab.py)."""
    shell, mode = cell.split(".")
    prefix = {"--counts": "COUNTS ", "--opcodes": "OPCODES "}[flag]
    done = subprocess.run(
        [sys.executable, os.path.join(HERE, "callgrind_calls.py"), shell, mode, str(n), flag],
        capture_output=True,
        env=dict(os.environ, PYTHONPATH=src, PYTHONHASHSEED="0"),
        preexec_fn=preexec_fn,
        check=False,
    )
    for line in done.stdout.decode().splitlines():
        if line.startswith(prefix):
            got: dict[str, Any] = json.loads(line[len(prefix) :])
            return got
    raise SystemExit(f"{cell} at {src} failed:\n{done.stderr.decode(errors='replace')[-2000:]}")


class Revisions:
    """The revisions a run measures (none: the working tree)."""

    def __init__(self, revs: Sequence[str]) -> None:
        self.dirs: dict[str, str] = {}
        self.labels: list[str] = []
        for rev in revs:
            dest = tempfile.mkdtemp(prefix="mcp-bench-src-")
            atexit.register(shutil.rmtree, dest, True)
            label = export_commit(rev, dest)
            if label in self.dirs:
                raise SystemExit(f"--at {rev}: revision {label} given twice")
            self.labels.append(label)
            self.dirs[label] = dest

    @property
    def side_by_side(self) -> bool:
        return len(self.labels) > 1

    def expand(self, clients: Iterable[str], ours: Iterable[str]) -> list[str]:
        """Each of our clients once per revision (``sync@abc1234``) when comparing."""
        if not self.side_by_side:
            return list(clients)
        mine = set(ours)
        out: list[str] = []
        for c in clients:
            out += [f"{c}@{label}" for label in self.labels] if c in mine else [c]
        return out

    def source(self, client: str) -> str | None:
        """The exported tree ``client`` runs from (None: the installed working tree)."""
        if "@" in client:
            return self.dirs[client.split("@", 1)[1]]
        if len(self.labels) == 1:
            return self.dirs[self.labels[0]]
        return None

    def env(self, client: str) -> dict[str, str]:
        """The environment of a measured process: ``client``'s revision first on the
        path, and bytecode caches allowed. An installed package has compiled bytecode
        (pip compiles at install, as it did for the SDK): with
        ``PYTHONDONTWRITEBYTECODE`` inherited, every fresh process would compile this
        project's modules again, and the import and cold-start rows would time the
        compiler for our client only."""
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        src = self.source(client)
        if src is not None:
            old = os.environ.get("PYTHONPATH")
            env["PYTHONPATH"] = src + (os.pathsep + old if old else "")
        return env


def base(client: str) -> str:
    """``sync@abc1234`` -> ``sync``."""
    return client.split("@", 1)[0]


def paired_ratio(old: dict[str, Any], new: dict[str, Any]) -> float | None:
    """The median of new/old over the repeats (sample i of each revision was taken in
    repeat i, one right after the other); None without per-repeat values or when a
    revision lost a sample (the pairs would no longer line up)."""
    a, b = old.get("values"), new.get("values")
    if not a or not b or len(a) != len(b):
        return None
    ratios = [y / x for x, y in zip(a, b, strict=True) if x]
    return statistics.median(ratios) if ratios else None


def compare_table(
    revs: Revisions, ours: Sequence[str], rows: Iterable[tuple[str, str, bool, dict[str, Any]]]
) -> tuple[str, list[dict[str, Any]]]:
    """Each later revision against the first, per metric and client: the medians, the
    ratio new/old and whether the new one is more than ``TOLERANCE`` worse.

    ``rows``: (label, unit, higher_is_better, cells) with cells = client -> {"median"}."""
    first, *later = revs.labels
    header = [
        "metric",
        "unit",
        "client",
        first,
        *later,
        *(f"{x}/{first}" for x in later),
        *("paired" for _ in later),
        "",
    ]
    lines: list[list[str]] = []
    findings: list[dict[str, Any]] = []
    for label, unit, higher, cells in rows:
        for c in ours:
            old_cell = cells.get(f"{c}@{first}", {})
            old = old_cell.get("median")
            if old is None:
                continue
            new_cells = [cells.get(f"{c}@{x}", {}) for x in later]
            news = [cell.get("median") for cell in new_cells]
            row = [label, unit, c, f"{old:.1f}", *(f"{v:.1f}" if v else "-" for v in news)]
            pairs = [paired_ratio(old_cell, cell) for cell in new_cells]
            verdict = ""
            for x, v, paired in zip(later, news, pairs, strict=True):
                if not v or not old:
                    row.append("-")
                    continue
                ratio = v / old
                worse = (1 - ratio) if higher else (ratio - 1)
                row.append(f"{ratio:.3f}")
                bad = worse > TOLERANCE
                verdict = "WORSE" if bad else (verdict or "ok")
                findings.append(
                    {
                        "metric": label,
                        "client": c,
                        "old": old,
                        "new": v,
                        "revision": x,
                        "ratio": ratio,
                        "paired_ratio": paired,
                        "worse_by": worse,
                        "verdict": "WORSE" if bad else "ok",
                    }
                )
            row += [f"{p:.3f}" if p is not None else "-" for p in pairs]
            row.append(verdict)
            lines.append(row)
    widths = [max(len(r[i]) for r in [header, *lines]) for i in range(len(header))]

    def fmt(r: list[str]) -> str:
        return "  ".join(
            cell.ljust(w) if i < 3 else cell.rjust(w)
            for i, (cell, w) in enumerate(zip(r, widths, strict=True))
        )

    text = [
        f"revisions side by side: each against {first} (WORSE: the ratio of the medians "
        f"is more than {TOLERANCE:.0%} worse in the metric's direction; paired, for "
        "information: the median of each repeat's own ratio, the two samples taken "
        "seconds apart, so a drift of the machine's speed between repeats cancels out)",
        fmt(header),
        fmt(["-" * w for w in widths]),
        *map(fmt, lines),
    ]
    return "\n".join(text), findings
