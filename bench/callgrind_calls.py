#!/usr/bin/env python3
"""A fixed workload for exact per-call counts under valgrind (docs/performance.md).

    valgrind --tool=callgrind .venv/bin/python bench/callgrind_calls.py SHELL MODE N
    .venv/bin/python bench/callgrind_calls.py SHELL MODE N --counts

``SHELL`` is ``sync`` or ``trio``, ``MODE`` ``seq`` (N sequential ``tools/call echo``)
or ``conc`` (N/100 rounds of 100 at once: ``call_tools(..., concurrent=True)``, a Trio
nursery) or ``pair`` (two threads or tasks, N/2 sequential calls each, so one call is
always in flight while the other is sent), against ``bench/fast_server.py``, after
``tools/list`` and 100 warm-up calls; every reply is checked as ``bench/_worker.py``
checks it. The instructions of one call: the "Collected" totals of N=1200 and N=200,
their difference over 1,000. Start-up and import cancel out, and unlike CPU time the
figure does not move with the machine's load (the server is a child process: valgrind
does not trace it). To count a commit, export its product packages as ``bench/run.py
--at`` does and put them first on ``PYTHONPATH``; compile them first (``python -m
compileall``) and set ``PYTHONHASHSEED=0``, or the runs differ by thousands of
instructions per call (``bench/callgrind_ab.py`` does all this).

``--counts`` (no valgrind) prints one ``COUNTS {json}`` line: what the kernel and the
collector saw of this process between the end of the warm-up and the end of the N
calls, per call (``bench/kernel_ab.py`` runs it for revisions side by side): user and
system CPU µs, voluntary and involuntary context switches (all threads,
``getrusage``), read- and write-type system calls (``/proc/self/io`` ``syscr``,
``syscw``), minor page faults, and the collector's runs per generation.

``--opcodes`` (no valgrind; slow, so use N=300 or so) prints one ``OPCODES {json}``
line: the Python bytecodes every thread executed per timed call, in all, by name and
by function (``file:qualname``; exact, independent of the machine's load). Bytecode
dispatch is where the interpreter misses its caches and branch predictions, so a
revision that executes as many machine instructions with more bytecodes is slower
(docs/performance.md, 2026-12-04 twelfth session; ``bench/opcodes_ab.py`` compares
revisions).
"""

from __future__ import annotations

import collections
import dis
import gc
import json
import os
import resource
import sys
import threading
import time
from types import FrameType
from typing import Any

SERVER = [
    sys.executable,
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "fast_server.py"),
]
TEXT = "hello, benchmark"


def _snapshot() -> dict[str, float]:
    r = resource.getrusage(resource.RUSAGE_SELF)
    out = {
        "user_us": r.ru_utime * 1e6,
        "sys_us": r.ru_stime * 1e6,
        "vol_cs": float(r.ru_nvcsw),
        "invol_cs": float(r.ru_nivcsw),
        "minflt": float(r.ru_minflt),
        "wall_us": time.perf_counter() * 1e6,
    }
    with open("/proc/self/io") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("syscr", "syscw"):
                out[key] = float(value)
    for gen, stats in enumerate(gc.get_stats()):
        out[f"gc{gen}"] = float(stats["collections"])
    out["threads"] = float(len(os.listdir("/proc/self/task")))
    return out


class Counts:
    """Snapshots around the timed calls (``--counts``), or the bytecodes executed
    between them (``--opcodes``); a no-op otherwise."""

    def __init__(self, on: bool, opcodes: bool = False) -> None:
        self.on = on
        self.opcodes = opcodes
        self.tracing = False
        self.executed: collections.Counter[str] = collections.Counter()
        self.by_func: collections.Counter[str] = collections.Counter()
        self.before: dict[str, float] = {}
        if opcodes:
            # Installed before the client starts, so its threads (the sync shell's
            # reader) have the hook too; it traces nothing until start().
            threading.settrace(self._global)
            sys.settrace(self._global)

    def _global(self, frame: FrameType, event: str, arg: Any) -> Any:
        if not self.tracing:
            return None
        frame.f_trace_opcodes = True
        return self._local

    def _local(self, frame: FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            code = frame.f_code
            self.executed[dis.opname[code.co_code[frame.f_lasti]]] += 1
            self.by_func[f"{os.path.basename(code.co_filename)}:{code.co_qualname}"] += 1
        return self._local

    def start(self) -> None:
        if self.opcodes:
            self.tracing = True  # every thread's frames entered from now on
        elif self.on:
            self.before = _snapshot()

    def stop(self, calls: int) -> None:
        if self.opcodes:
            sys.settrace(None)
            threading.settrace(None)  # type: ignore[arg-type]
            self.tracing = False
            by_name = {k: v / calls for k, v in self.executed.most_common()}
            by_func = {k: v / calls for k, v in self.by_func.most_common()}
            line = {
                "per_call": sum(by_name.values()),
                "by_name": by_name,
                "by_func": by_func,
                "calls": calls,
            }
            sys.stdout.write("OPCODES " + json.dumps(line) + "\n")
            sys.stdout.flush()
            return
        if not self.on:
            return
        after = _snapshot()
        per_call = {k: (after[k] - v) / calls for k, v in self.before.items() if k != "threads"}
        per_call["threads"] = after["threads"]
        sys.stdout.write("COUNTS " + json.dumps(dict(per_call, calls=calls)) + "\n")
        sys.stdout.flush()


def main() -> None:
    shell, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    counts = Counts("--counts" in sys.argv[4:], "--opcodes" in sys.argv[4:])
    if shell == "sync":
        import mcp_io_sync

        with mcp_io_sync.connect(SERVER) as client:
            client.list_tools()
            for _ in range(100):
                client.call_tool("echo", {"text": TEXT})
            counts.start()
            if mode == "seq":
                for _ in range(n):
                    assert client.call_tool("echo", {"text": TEXT})["content"][0]["text"] == TEXT
            elif mode == "pair":

                def calls_in_turn() -> None:
                    for _ in range(n // 2):
                        result = client.call_tool("echo", {"text": TEXT})
                        assert result["content"][0]["text"] == TEXT

                pair = [threading.Thread(target=calls_in_turn) for _ in range(2)]
                for t in pair:
                    t.start()
                for t in pair:
                    t.join()
            else:
                calls = [{"name": "echo", "arguments": {"text": TEXT}}] * 100
                for _ in range(n // 100):
                    results = client.call_tools(calls, concurrent=True)
                    assert all(r["content"][0]["text"] == TEXT for r in results)
            counts.stop(n)
        return
    import trio

    import mcp_io_trio

    async def run() -> None:
        async with mcp_io_trio.connect(SERVER) as client:
            await client.list_tools()
            for _ in range(100):
                await client.call_tool("echo", {"text": TEXT})

            async def one() -> None:
                result = await client.call_tool("echo", {"text": TEXT})
                assert result["content"][0]["text"] == TEXT

            counts.start()
            if mode == "seq":
                for _ in range(n):
                    await one()
            elif mode == "pair":

                async def calls_in_turn() -> None:
                    for _ in range(n // 2):
                        await one()

                async with trio.open_nursery() as nursery:
                    for _ in range(2):
                        nursery.start_soon(calls_in_turn)
            else:
                for _ in range(n // 100):
                    async with trio.open_nursery() as nursery:
                        for _ in range(100):
                            nursery.start_soon(one)
            counts.stop(n)

    trio.run(run)


if __name__ == "__main__":
    main()
