#!/usr/bin/env python3
"""Several ``bench/run.py --at OLD --at NEW`` runs pooled (issue 22: on this VM one
run's ratio of a cell moves by up to 0.1 from the next run's, so one run decides
nothing about a 5% question; docs/performance.md, 2026-12-04 thirteenth session).

    .venv/bin/python bench/pool_runs.py bench/results/A.json bench/results/B.json ...

Each file is a run's ``bench/results/<timestamp>.json`` with exactly two revisions of
each client (its ``--at``). Per client and metric (sequential and 100-concurrent
calls/s, client CPU µs per call): each run's ratio of the medians (new / old), their
median over the runs, and the pooled ratios: of the medians of every sample of all
runs, and the median of every repeat's own ratio (paired: the two samples of a repeat
run seconds apart).
"""

from __future__ import annotations

import json
import statistics
import sys
from typing import Any

METRICS = (
    ("seq", "calls_per_s", "sequential calls/s"),
    ("seq", "cpu_us_per_call", "sequential CPU µs/call"),
    ("conc", "calls_per_s", "100 concurrent calls/s"),
    ("conc", "cpu_us_per_call", "100 concurrent CPU µs/call"),
    ("conc_threads", "calls_per_s", "sync, 100 threads calls/s"),
)


def _pairs(run: dict[str, Any], client: str) -> tuple[str, str]:
    revs = [c for c in run["raw"]["clients"] if c.startswith(client + "@")]
    if len(revs) != 2:
        raise SystemExit(f"{client}: expected two revisions, got {revs}")
    return revs[0], revs[1]


def main() -> None:
    runs = []
    for path in sys.argv[1:]:
        with open(path) as f:
            runs.append(json.load(f))
    if not runs:
        raise SystemExit(__doc__)
    print(f"{len(runs)} runs: " + ", ".join(r["timestamp"] for r in runs))
    print(
        f"{'client':6} {'metric':28} {'per run (new/old)':36}"
        f" {'median':>7} {'pooled':>7} {'paired':>7}"
    )
    for client in ("sync", "trio"):
        for workload, key, label in METRICS:
            per_run, olds, news, pairs = [], [], [], []
            for run in runs:
                old, new = _pairs(run, client)
                samples = run["raw"]["samples"].get(workload, {})
                if old not in samples:
                    continue
                a = [s[key] for s in samples[old]]
                b = [s[key] for s in samples[new]]
                per_run.append(statistics.median(b) / statistics.median(a))
                olds += a
                news += b
                pairs += [y / x for x, y in zip(a, b, strict=True)]
            if not per_run:
                continue
            runs_text = " ".join(f"{r:.3f}" for r in per_run)
            print(
                f"{client:6} {label:28} {runs_text:36} {statistics.median(per_run):7.3f}"
                f" {statistics.median(news) / statistics.median(olds):7.3f}"
                f" {statistics.median(pairs):7.3f}"
            )


if __name__ == "__main__":
    main()
