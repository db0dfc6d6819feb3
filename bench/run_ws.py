#!/usr/bin/env python3
"""WebSocket client benchmark (issue 25): mcp_io_sync / mcp_io_trio vs the official SDK
1.x WebSocket client, against the same SDK 1.x WebSocket server, in the same run.

    .venv/bin/python bench/run_ws.py            # needs `make ws-peer` (tests/peers/ws-venv)
    .venv/bin/python bench/run_ws.py --quick
    .venv/bin/python bench/run_ws.py --cpus 0   # pin driver, server and clients to CPU 0

Clients: ``sync`` (``mcp_io_sync.connect("ws://...")``), ``trio``
(``mcp_io_trio.connect``), ``sdk1`` (``mcp.ClientSession`` over
``mcp.client.websocket.websocket_client``, mcp 1.x on asyncio, run by the ws-venv's
python). Server: tests/servers/ws_sdk1_server.py (uvicorn + websockets, deflate on).
Workloads: ``seq`` (sequential ``tools/call echo``: wall time and client CPU per call)
and ``big`` (one ``tools/call big`` of 256 KiB: text and structured content make
512 KiB of JSON, under the SDK client's 1 MiB message limit; 5 MB is refused by it
with ``1009 message too big``, ours takes it). Every sample runs in a fresh process;
clients are interleaved; the table shows medians and ours/SDK ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SERVER = os.path.join(ROOT, "tests", "servers", "ws_sdk1_server.py")
WS_PY = os.path.join(ROOT, "tests", "peers", "ws-venv", "bin", "python")
CLIENTS = ("sync", "trio", "sdk1")
BIG = 256 * 1024


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ------------------------------------------------------------------ workers


def _work_sync(url: str, workload: str, n: int) -> dict[str, float]:
    import mcp_io_sync

    with mcp_io_sync.connect(url, protocol="legacy", read_timeout=60) as client:
        client.call_tool("echo", {"text": "warm"})
        cpu, t = _cpu(), time.perf_counter()
        if workload == "seq":
            for _ in range(n):
                client.call_tool("echo", {"text": "hello, benchmark"})
        else:
            for _ in range(n):
                client.call_tool("big", {"size": BIG})
        return {"wall": time.perf_counter() - t, "cpu": _cpu() - cpu}


def _work_trio(url: str, workload: str, n: int) -> dict[str, float]:
    import trio

    import mcp_io_trio

    async def main() -> dict[str, float]:
        async with mcp_io_trio.connect(url, protocol="legacy", read_timeout=60) as client:
            await client.call_tool("echo", {"text": "warm"})
            cpu, t = _cpu(), time.perf_counter()
            for _ in range(n):
                if workload == "seq":
                    await client.call_tool("echo", {"text": "hello, benchmark"})
                else:
                    await client.call_tool("big", {"size": BIG})
            return {"wall": time.perf_counter() - t, "cpu": _cpu() - cpu}

    return trio.run(main)


def _work_sdk1(url: str, workload: str, n: int) -> dict[str, float]:  # runs in ws-venv
    import asyncio

    from mcp import ClientSession
    from mcp.client.websocket import websocket_client

    async def main() -> dict[str, float]:
        async with (
            websocket_client(url) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.call_tool("echo", {"text": "warm"})
            cpu, t = _cpu(), time.perf_counter()
            for _ in range(n):
                if workload == "seq":
                    await session.call_tool("echo", {"text": "hello, benchmark"})
                else:
                    await session.call_tool("big", {"size": BIG})
            return {"wall": time.perf_counter() - t, "cpu": _cpu() - cpu}

    return asyncio.run(main())


def worker(client: str, url: str, workload: str, n: int) -> None:
    fn = {"sync": _work_sync, "trio": _work_trio, "sdk1": _work_sdk1}[client]
    print(json.dumps(fn(url, workload, n)))


# ------------------------------------------------------------------ driver


def _sample(client: str, url: str, workload: str, n: int) -> dict[str, float] | None:
    python = WS_PY if client == "sdk1" else sys.executable
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(
        [python, __file__, "--worker", client, url, workload, str(n)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=ROOT,
    )
    if done.returncode != 0:
        print(f"  {client}/{workload} failed: {done.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    out: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument(
        "--cpus", default=None, help="pin everything (server, clients) to these CPUs: 0 or 0,1"
    )
    parser.add_argument("--worker", nargs=4, metavar=("CLIENT", "URL", "WORKLOAD", "N"))
    args = parser.parse_args(argv)
    if args.worker:
        client, url, workload, n = args.worker
        worker(client, url, workload, int(n))
        return
    if not os.path.exists(WS_PY):
        sys.exit("tests/peers/ws-venv is missing: run `make ws-peer`")
    if args.cpus:
        # Inherited by the server and every worker started from here (bench/README.md,
        # "Noise": pinned, the wake-ups between client and server stay on one CPU).
        os.sched_setaffinity(0, {int(x) for x in args.cpus.split(",")})
    reps = args.reps or (3 if args.quick else 5)
    load_before = os.getloadavg()
    counts = {"seq": 300 if args.quick else 1000, "big": 10 if args.quick else 40}
    port = _free_port()
    server = subprocess.Popen(
        [WS_PY, SERVER, str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        url = f"ws://127.0.0.1:{port}/mcp"
        results: dict[tuple[str, str], list[dict[str, float]]] = {}
        for _ in range(reps):
            for workload, n in counts.items():
                for client in CLIENTS:
                    got = _sample(client, url, workload, n)
                    if got is not None:
                        results.setdefault((client, workload), []).append(
                            {k: v / n for k, v in got.items()}
                        )
        _report(results, reps)
        pinned = f"pinned to CPU {args.cpus}" if args.cpus else "unpinned"
        load_after = os.getloadavg()
        print(
            f"{pinned}; load average before {load_before[0]:.2f} (1 min) / "
            f"{load_before[1]:.2f} (5 min), after {load_after[0]:.2f} / {load_after[1]:.2f}"
        )
    finally:
        server.terminate()
        try:
            server.wait(5)
        except subprocess.TimeoutExpired:
            server.kill()


def _report(results: dict[tuple[str, str], list[dict[str, float]]], reps: int) -> None:
    def med(client: str, workload: str, key: str) -> float | None:
        samples = results.get((client, workload))
        return statistics.median(s[key] for s in samples) if samples else None

    print(f"WebSocket, SDK 1.x server; medians of {reps} runs; per call; ratio = ours / sdk1")
    print(f"{'workload':<8} {'client':<6} {'wall ms':>9} {'cpu ms':>9} {'wall x':>8} {'cpu x':>8}")
    for workload in ("seq", "big"):
        base_wall, base_cpu = med("sdk1", workload, "wall"), med("sdk1", workload, "cpu")
        for client in CLIENTS:
            wall, cpu = med(client, workload, "wall"), med(client, workload, "cpu")
            if wall is None or cpu is None:
                print(f"{workload:<8} {client:<6} {'failed':>9}")
                continue
            rw = f"{wall / base_wall:.2f}" if base_wall else "-"
            rc = f"{cpu / base_cpu:.2f}" if base_cpu else "-"
            print(f"{workload:<8} {client:<6} {wall * 1e3:>9.3f} {cpu * 1e3:>9.3f} {rw:>8} {rc:>8}")


if __name__ == "__main__":
    main(sys.argv[1:])
