#!/usr/bin/env python3
"""A fixed workload for exact per-call counts under valgrind (docs/performance.md).

    valgrind --tool=callgrind .venv/bin/python bench/callgrind_calls.py SHELL MODE N

``SHELL`` is ``sync`` or ``trio``, ``MODE`` ``seq`` (N sequential ``tools/call echo``)
or ``conc`` (N/100 rounds of 100 at once: ``call_tools(..., concurrent=True)``, a Trio
nursery), against ``bench/fast_server.py``, after ``tools/list`` and 100 warm-up calls;
every reply is checked as ``bench/_worker.py`` checks it. The instructions of one call:
the "Collected" totals of N=1200 and N=200, their difference over 1,000. Start-up and
import cancel out, and unlike CPU time the figure does not move with the machine's load
(the server is a child process: valgrind does not trace it). To count a commit, export
its product packages as ``bench/run.py --at`` does and put them first on ``PYTHONPATH``;
compile them first (``python -m compileall``) and set ``PYTHONHASHSEED=0``, or the runs
differ by thousands of instructions per call (``bench/callgrind_ab.py`` does all this).
"""

from __future__ import annotations

import os
import sys

SERVER = [
    sys.executable,
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "fast_server.py"),
]
TEXT = "hello, benchmark"


def main() -> None:
    shell, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if shell == "sync":
        import mcp_io_sync

        with mcp_io_sync.connect(SERVER) as client:
            client.list_tools()
            for _ in range(100):
                client.call_tool("echo", {"text": TEXT})
            if mode == "seq":
                for _ in range(n):
                    assert client.call_tool("echo", {"text": TEXT})["content"][0]["text"] == TEXT
            else:
                calls = [{"name": "echo", "arguments": {"text": TEXT}}] * 100
                for _ in range(n // 100):
                    results = client.call_tools(calls, concurrent=True)
                    assert all(r["content"][0]["text"] == TEXT for r in results)
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

            if mode == "seq":
                for _ in range(n):
                    await one()
            else:
                for _ in range(n // 100):
                    async with trio.open_nursery() as nursery:
                        for _ in range(100):
                            nursery.start_soon(one)

    trio.run(run)


if __name__ == "__main__":
    main()
