#!/usr/bin/env python3
"""What the kernel and the collector see per call, revisions side by side (issue 22:
docs/performance.md, 2026-12-04 twelfth session).

    .venv/bin/python bench/kernel_ab.py --at d2f56f8 --at HEAD
    .venv/bin/python bench/kernel_ab.py --at d2f56f8 --at HEAD --cells sync.conc --reps 15 --cpus 0

For each revision (its product packages exported and compiled as ``bench/callgrind_ab.py``
does, ``PYTHONHASHSEED=0``) and each cell (``sync.seq``, ``sync.conc``, ``trio.seq``,
``trio.conc``), runs ``bench/callgrind_calls.py SHELL MODE N --counts`` natively, in a
fresh process per sample, revisions interleaved (their order alternates each repeat),
and prints per call: user and system CPU µs, context switches (voluntary, involuntary),
read- and write-type system calls, minor page faults, the collector's runs per
generation, wall µs; the median per revision, the ratio of the medians to the first
revision and the *paired* ratio (the median over repeats of each repeat's own ratio: the
samples of one repeat run seconds apart, so the machine's drift between repeats cancels)
and the ratio of the minima (``best``: other processes only add to a sample's CPU time,
through the caches they evict, so the least disturbed sample is the fastest).
The counts of system calls and switches are the deterministic part; CPU µs move with
the machine's load (printed before and after). Only their sum ``cpu_us`` is exact: the
kernel splits it into user and system time by sampling at its timer tick, so the split
of a sample of some 100 ms is rough. ``--cpus`` pins each sample and its
server as ``bench/run.py --cpus`` does.
"""

from __future__ import annotations

import json
import os
import statistics
import time

from _revisions import compiled_exports, run_cell
from callgrind_ab import ab_parser, parse_cells

METRICS = (
    "user_us",
    "sys_us",
    "cpu_us",
    "vol_cs",
    "invol_cs",
    "syscr",
    "syscw",
    "minflt",
    "gc0",
    "gc1",
    "wall_us",
)


def _sample(src: str, cell: str, n: int, cpus: set[int] | None) -> dict[str, float]:
    def pin() -> None:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)

    counts: dict[str, float] = run_cell(src, cell, n, "--counts", pin)
    counts["cpu_us"] = counts["user_us"] + counts["sys_us"]
    return counts


def main() -> None:
    parser = ab_parser(__doc__)
    parser.add_argument("--reps", type=int, default=9, help="samples per revision and cell")
    parser.add_argument("--n", type=int, default=2000, help="timed calls per sample")
    parser.add_argument("--cpus", help="pin every sample and its server (e.g. 0)")
    parser.add_argument("--json", help="also write every sample to this file")
    args = parser.parse_args()
    cells = parse_cells(args.cells)
    cpus = {int(c) for c in args.cpus.split(",")} if args.cpus else None
    dirs = compiled_exports(args.at, "mcp-kernel-src-")
    labels = list(dirs)
    load_before = os.getloadavg()
    print(f"load average {load_before[0]:.2f}; pinned to {args.cpus or 'none'}", flush=True)
    samples: dict[tuple[str, str], list[dict[str, float]]] = {}
    started = time.time()
    for rep in range(args.reps):
        order = labels if rep % 2 == 0 else labels[::-1]
        for cell in cells:
            for label in order:
                got = _sample(dirs[label], cell, args.n, cpus)
                samples.setdefault((label, cell), []).append(got)
        print(f"repeat {rep + 1}/{args.reps} done, load {os.getloadavg()[0]:.2f}", flush=True)
    load_after = os.getloadavg()
    print(
        f"load average {load_before[0]:.2f} -> {load_after[0]:.2f}, {time.time() - started:.0f} s\n"
    )
    head = f"{'cell':10} {'per call':9} " + " ".join(f"{lab:>9}" for lab in labels)
    print(head + "  ratio  paired  best  (to the first revision)")
    for cell in cells:
        for metric in METRICS:
            per_rev = [[s[metric] for s in samples[(lab, cell)]] for lab in labels]
            medians = [statistics.median(v) for v in per_rev]
            line = f"{cell:10} {metric:9} " + " ".join(f"{m:9.3f}" for m in medians)
            for values in per_rev[1:]:
                if medians[0]:
                    ratio = statistics.median(values) / medians[0]
                    pairs = [b / a for a, b in zip(per_rev[0], values, strict=True) if a]
                    paired = statistics.median(pairs) if pairs else float("nan")
                    best = min(values) / min(per_rev[0]) if min(per_rev[0]) else float("nan")
                    line += f"  {ratio:5.3f}  {paired:6.3f}  {best:5.3f}"
            print(line)
        print()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "revisions": labels,
                    "cpus": args.cpus,
                    "n": args.n,
                    "load": [load_before, load_after],
                    "samples": {f"{lab} {cell}": v for (lab, cell), v in samples.items()},
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
