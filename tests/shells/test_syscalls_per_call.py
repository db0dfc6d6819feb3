"""System calls per tool call of both shells over stdio, counted by the kernel.

Issue 22 asked why CPU time per call rose while instructions did not; the kernel was
ruled out by counts (docs/performance.md, 2026-12-04 twelfth session): a sequential
call is one write of the request and one read of the answer in both shells, the
blocking shell's 100 concurrent calls go out in one write and the Trio shell's in two.
These tests keep it so, on the process's own ``/proc/self/io`` counters (``syscr``,
``syscw``: read- and write-type system calls of all its threads) around the timed calls
of ``bench/callgrind_calls.py --counts`` against ``bench/fast_server.py``.

The bounds leave room for the timing-dependent extras (the blocking shell wakes its
background reader with a one-byte write when that reader took the pipe during a pause
between calls; an answer split over two reads); what they catch is a message written
or read in pieces on every call, which doubles a count.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

WORKLOAD = os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "bench",
    "callgrind_calls.py",
)
CALLS = 200


def _counts(shell: str, mode: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, WORKLOAD, shell, mode, str(CALLS), "--counts"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("COUNTS ")]
    assert len(lines) == 1, done.stdout
    counts: dict[str, float] = json.loads(lines[0][len("COUNTS ") :])
    assert counts["calls"] == CALLS
    return counts


@pytest.mark.parametrize("shell", ["sync", "trio"])
def test_a_sequential_call_is_one_write_and_one_read(shell: str) -> None:
    counts = _counts(shell, "seq")
    # Each request needs its own write and each answer a read (nothing batches them).
    assert 1.0 <= counts["syscw"] < 1.5, counts
    assert 1.0 <= counts["syscr"] < 1.5, counts


def test_the_blocking_shell_writes_100_concurrent_calls_at_once() -> None:
    counts = _counts("sync", "conc")
    # One writev per round of 100 (0.01 per call); one write per request would be 1.
    assert 0.0 < counts["syscw"] < 0.1, counts


def test_the_trio_shell_writes_100_concurrent_calls_in_a_few_writes() -> None:
    counts = _counts("trio", "conc")
    # The first task of a round writes at once; the other 99 are gathered into one
    # writev a scheduler pass later (0.02 per call); one write per task would be 1.
    assert 0.0 < counts["syscw"] < 0.1, counts
