#!/usr/bin/env python3
"""Machine instructions per call of revisions side by side, under valgrind (issue 22's
cells: docs/performance.md, 2026-12-04 eleventh session).

    .venv/bin/python bench/callgrind_ab.py --at d2f56f8 --at HEAD
    .venv/bin/python bench/callgrind_ab.py --at d2f56f8 --at HEAD --cells sync.seq --runs 3
    .venv/bin/python bench/callgrind_ab.py --at d2f56f8 --at HEAD --cells sync.conc --sim

For each revision (its product packages exported as ``bench/run.py --at`` does) and each
cell (``sync.seq``, ``sync.conc``, ``trio.seq``, ``trio.conc``: ``bench/callgrind_calls.py``),
runs ``valgrind --tool=callgrind`` at N=200 and N=1200 and prints (total(1200) -
total(200)) / 1000, the client process's instructions per call, with the ratio to the
first revision. Each run is ~20-60 s of one CPU; ``--runs`` repeats the pair.

Two things make the count repeatable, both set here: the exported packages are compiled
to bytecode first (otherwise every run compiles them, hundreds of millions of
instructions that differ from run to run), and ``PYTHONHASHSEED=0`` (string hashes
decide dict and set layouts, so the collisions a run meets). What remains is the
scheduling of the client's threads against the server: a blocking call that finds its
answer already read takes a shorter path, so a cell moves by up to ~2% between runs on
a busy machine. Compare medians of several runs when a question is that close.

``--sim`` adds valgrind's cache and branch-predictor simulation (``--cache-sim=yes
--branch-sim=yes``; runs take about twice as long) and prints, per call, the simulated
first-level instruction and data cache misses (``I1mr``, ``D1mr`` + ``D1mw``) and the
mispredicted conditional and indirect branches (``Bcm``, ``Bim``) beside the
instructions: what CPU time pays for beyond the instruction count. The model is simple
(32 KiB 8-way first-level caches, a last-level cache, a table of two-bit counters and a
last-target table for branches): its counts compare revisions, they are not cycles
(docs/performance.md, 2026-12-04 twelfth session).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys

from _revisions import compiled_exports

HERE = os.path.dirname(os.path.abspath(__file__))
CELLS = ("sync.seq", "sync.conc", "trio.seq", "trio.conc")
#: Cells measured only when named: two callers in turn (``bench/callgrind_calls.py pair``).
EXTRA_CELLS = ("sync.pair", "trio.pair")
_EVENTS = re.compile(rb"Events    : ([A-Za-z0-9 ]+)")
_COLLECTED = re.compile(rb"Collected : ([\d ]+)")
#: The figures --sim prints: (label, the simulated events summed into it).
SIMULATED = (
    ("Ir", ("Ir",)),
    ("I1 miss", ("I1mr",)),
    ("D1 miss", ("D1mr", "D1mw")),
    ("LL miss", ("ILmr", "DLmr", "DLmw")),
    ("cond misp", ("Bcm",)),
    ("ind misp", ("Bim",)),
)


def _count(src: str, cell: str, n: int, sim: bool = False) -> dict[str, int]:
    """The client process's totals of callgrind's events (``Ir``, and with ``sim`` the
    simulated cache misses and mispredicted branches) for ``n`` calls of ``cell``."""
    shell, mode = cell.split(".")
    env = dict(os.environ, PYTHONPATH=src, PYTHONHASHSEED="0")
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            *(["--cache-sim=yes", "--branch-sim=yes"] if sim else []),
            sys.executable,
            os.path.join(HERE, "callgrind_calls.py"),
            shell,
            mode,
            str(n),
        ],
        capture_output=True,
        env=env,
        check=False,
    )
    events = _EVENTS.search(done.stderr)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None or events is None:
        tail = done.stderr.decode(errors="replace")[-2000:]
        raise SystemExit(f"{cell} N={n} at {src} failed:\n{tail}")
    names = events.group(1).decode().split()
    return dict(zip(names, map(int, found.group(1).split()), strict=True))


def parse_cells(text: str) -> list[str]:
    """The cells a comma-separated ``--cells`` names (each one of :data:`CELLS` or
    :data:`EXTRA_CELLS`)."""
    cells = [c for c in text.split(",") if c]
    for cell in cells:
        if cell not in CELLS + EXTRA_CELLS:
            known = ", ".join(CELLS + EXTRA_CELLS)
            raise SystemExit(f"unknown cell {cell!r} (one of {known})")
    return cells


def ab_parser(doc: str) -> argparse.ArgumentParser:
    """The arguments the A/B scripts share: ``--at`` (repeated) and ``--cells``
    (bench/callgrind_ab.py, bench/kernel_ab.py, bench/opcodes_ab.py)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--at", action="append", required=True, help="a revision (repeat)")
    parser.add_argument("--cells", default=",".join(CELLS), help="comma-separated cells")
    return parser


def main() -> None:
    parser = ab_parser(__doc__)
    parser.add_argument("--runs", type=int, default=1, help="repeats of each pair of runs")
    parser.add_argument(
        "--sim", action="store_true", help="also simulated cache misses and mispredicted branches"
    )
    args = parser.parse_args()
    cells = parse_cells(args.cells)
    dirs = compiled_exports(args.at, "mcp-callgrind-src-")
    labels = list(dirs)
    figures = SIMULATED if args.sim else SIMULATED[:1]
    per_call: dict[tuple[str, str, str], list[float]] = {}
    for run in range(args.runs):
        for cell in cells:
            for label in labels:  # interleaved: the machine's state is shared
                small = _count(dirs[label], cell, 200, args.sim)
                large = _count(dirs[label], cell, 1200, args.sim)
                shown = []
                for name, events in figures:
                    value = sum(large[e] - small[e] for e in events) / 1000
                    per_call.setdefault((label, cell, name), []).append(value)
                    shown.append(f"{name} {value:,.0f}")
                print(f"run {run + 1} {cell:10} {label:10} " + ", ".join(shown), flush=True)
    print()
    print(
        f"{'cell':10} {'per call':10} "
        + " ".join(f"{label:>12}" for label in labels)
        + "  ratios to first"
    )
    for cell in cells:
        for name, _ in figures:
            medians = [statistics.median(per_call[(label, cell, name)]) for label in labels]
            ratios = " ".join(f"{m / medians[0]:.3f}" if medians[0] else "-" for m in medians[1:])
            print(
                f"{cell:10} {name:10} " + " ".join(f"{m:12,.0f}" for m in medians) + f"  {ratios}"
            )


if __name__ == "__main__":
    main()
