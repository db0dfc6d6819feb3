#!/usr/bin/env python3
"""Python bytecodes per call, by function, revisions side by side (issue 22: the extra
bytecodes of a revision are what its extra CPU time per call pays for;
docs/performance.md, 2026-12-04 twelfth session).

    .venv/bin/python bench/opcodes_ab.py --at d2f56f8 --at HEAD
    .venv/bin/python bench/opcodes_ab.py --at d2f56f8 --at HEAD --cells trio.seq --top 40

Exports each revision as ``bench/kernel_ab.py`` does, runs ``bench/callgrind_calls.py
SHELL MODE N --opcodes`` once per revision and cell (exact counts: one run is enough),
and prints per cell the bytecodes per call of each revision and the functions whose
count differs most (``file:qualname``, the last revision minus the first).
"""

from __future__ import annotations

from _revisions import compiled_exports, run_cell
from callgrind_ab import ab_parser, parse_cells


def main() -> None:
    parser = ab_parser(__doc__)
    parser.add_argument("--n", type=int, default=300, help="timed calls per run")
    parser.add_argument("--top", type=int, default=25, help="functions listed per cell")
    args = parser.parse_args()
    dirs = compiled_exports(args.at, "mcp-opcodes-src-")
    labels = list(dirs)
    for cell in parse_cells(args.cells):
        runs = [run_cell(dirs[label], cell, args.n, "--opcodes") for label in labels]
        pairs = zip(labels, runs, strict=True)
        totals = "  ".join(f"{lab} {run['per_call']:8.1f}" for lab, run in pairs)
        print(f"{cell}: bytecodes per call  {totals}")
        first: dict[str, float] = runs[0]["by_func"]  # type: ignore[assignment]
        last: dict[str, float] = runs[-1]["by_func"]  # type: ignore[assignment]
        delta = {k: last.get(k, 0.0) - first.get(k, 0.0) for k in first.keys() | last.keys()}
        for name in sorted(delta, key=lambda k: -abs(delta[k]))[: args.top]:
            if abs(delta[name]) >= 0.5:
                print(
                    f"  {delta[name]:+8.1f}  {first.get(name, 0.0):8.1f} -> "
                    f"{last.get(name, 0.0):8.1f}  {name}"
                )
        print()


if __name__ == "__main__":
    main()
