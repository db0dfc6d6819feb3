#!/usr/bin/env python3
"""Streamable HTTP client benchmark: mcp_io_sync / mcp_io_trio vs the official SDK client.

    .venv/bin/python bench/run_http.py                 # full run (~10 minutes)
    .venv/bin/python bench/run_http.py --quick         # short run (~1-2 minutes)
    .venv/bin/python bench/run_http.py --only seq,sse  # some workloads / reply modes
    .venv/bin/python bench/run_http.py --only sync,sdk # some clients

Clients: ``raw`` (a plain ``httpcore`` loop with hand-written JSON-RPC POSTs, no client
library: the floor), ``sync`` (``mcp_io_sync.connect(url)``), ``trio``
(``mcp_io_trio.connect(url)``), ``sdk`` (``mcp.ClientSession`` over
``mcp.client.streamable_http.streamable_http_client``, asyncio, mcp 2.3.0).
Workloads: ``seq`` (sequential ``tools/call``), ``conc`` (rounds of 100 concurrent
calls). Reply modes: ``json`` and ``sse`` (see ``bench/fast_http_server.py``).

Every measurement runs in its own fresh Python process (this file with ``--worker``),
which starts its own ``bench/fast_http_server.py`` on 127.0.0.1; clients are
interleaved and every measurement is repeated; the table shows medians. Prints the table
(absolute numbers, ratios ours/SDK, direction, PASS/MISS per target) and writes every
sample to ``bench/results/http-<timestamp>.json``. See bench/README-http.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import itertools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(HERE, "fast_http_server.py")
RESULTS = os.path.join(HERE, "results")
PY = sys.executable

CLIENTS = ("raw", "sync", "trio", "sdk")
OURS = ("sync", "trio")
WORKLOADS = ("seq", "conc")
MODES = ("json", "sse")
SMALL_TEXT = "hello, benchmark"
VERSION = "2025-11-25"


@dataclass(frozen=True)
class Settings:
    reps: int
    seq_calls: int
    conc_rounds: int
    warmup: int


FULL = Settings(reps=5, seq_calls=2000, conc_rounds=20, warmup=100)
QUICK = Settings(reps=1, seq_calls=300, conc_rounds=4, warmup=30)


@dataclass(frozen=True)
class Metric:
    workload: str
    mode: str
    key: str
    label: str
    unit: str
    higher_is_better: bool
    target: float | None
    fmt: str = "{:.0f}"
    sdk_from: str | None = None  # the workload whose SDK median the ratio uses


def _metrics() -> list[Metric]:
    out = []
    for mode in MODES:
        out += [
            Metric(
                "seq", mode, "calls_per_s", f"[{mode}] sequential tools/call", "calls/s", True, 3.0
            ),
            Metric(
                "seq",
                mode,
                "cpu_us_per_call",
                f"[{mode}]   client CPU per call (seq)",
                "us",
                False,
                0.3 if mode == "sse" else None,
            ),
            Metric(
                "conc",
                mode,
                "calls_per_s",
                f"[{mode}] 100 concurrent tools/call",
                "calls/s",
                True,
                3.0,
            ),
            Metric(
                "conc_many",
                mode,
                "calls_per_s",
                f"[{mode}]   (info) sync, call_tools(concurrent=True)",
                "calls/s",
                True,
                None,
                sdk_from="conc",
            ),
            Metric(
                "conc",
                mode,
                "cpu_us_per_call",
                f"[{mode}]   client CPU per call (conc)",
                "us",
                False,
                0.3 if mode == "sse" else None,
            ),
            Metric(
                "seq",
                mode,
                "server_cpu_us_per_call",
                f"[{mode}]   (info) server CPU per call (seq)",
                "us",
                False,
                None,
            ),
        ]
    return out


METRICS = _metrics()


# ============================================================================ worker


class BenchError(RuntimeError):
    pass


def _check(got: str, want: str) -> None:
    if got != want:
        raise BenchError(f"echo mismatch: sent {want!r}, got {got!r}")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _proc_cpu(pid: int) -> float:
    """user+sys CPU seconds of another process (Linux /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return float("nan")


class Timed:
    """Collects the timed section's wall, client CPU and server CPU."""

    def __init__(self, server_pid: int, profile: str | None) -> None:
        self.server_pid = server_pid
        self.profile = profile
        self.prof: Any = None

    def __enter__(self) -> Timed:
        if self.profile:
            import cProfile

            self.prof = cProfile.Profile()
        self.s0 = _proc_cpu(self.server_pid)
        self.c0 = _cpu()
        self.t0 = time.perf_counter()
        if self.prof is not None:
            self.prof.enable()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.prof is not None:
            self.prof.disable()
        self.wall = time.perf_counter() - self.t0
        self.cpu = _cpu() - self.c0
        self.server_cpu = _proc_cpu(self.server_pid) - self.s0
        if self.prof is not None:
            self.prof.dump_stats(self.profile)


def _report(args: argparse.Namespace, t: Timed) -> dict[str, Any]:
    calls = args.n if args.workload == "seq" else args.rounds * args.concurrency
    return {
        "calls": calls,
        "seconds": t.wall,
        "calls_per_s": calls / t.wall,
        "cpu_us_per_call": t.cpu / calls * 1e6,
        "server_cpu_us_per_call": t.server_cpu / calls * 1e6,
    }


def _run_sync_workload(args: argparse.Namespace, call: Any, batch: Any, pid: int) -> dict[str, Any]:
    text = SMALL_TEXT
    for _ in range(args.warmup):
        _check(call(text), text)
    if args.workload == "conc":  # a warm-up round: starts the threads, fills the pools
        _check(batch([text] * args.concurrency)[-1], text)
    with Timed(pid, args.profile) as t:
        if args.workload == "seq":
            for _ in range(args.n):
                _check(call(text), text)
        else:
            for _ in range(args.rounds):
                for got in batch([text] * args.concurrency):
                    _check(got, text)
    return _report(args, t)


async def _run_async_workload(
    args: argparse.Namespace, call: Any, batch: Any, pid: int
) -> dict[str, Any]:
    text = SMALL_TEXT
    for _ in range(args.warmup):
        _check(await call(text), text)
    if args.workload == "conc":  # a warm-up round: fills the connection pools
        _check((await batch([text] * args.concurrency))[-1], text)
    with Timed(pid, args.profile) as t:
        if args.workload == "seq":
            for _ in range(args.n):
                _check(await call(text), text)
        else:
            for _ in range(args.rounds):
                for got in await batch([text] * args.concurrency):
                    _check(got, text)
    return _report(args, t)


# ---------------------------------------------------------------------------- raw


class RawClient:
    """The floor: one httpcore pool and hand-written JSON-RPC POSTs, no client library."""

    def __init__(self, url: str, sse: bool) -> None:
        import httpcore

        self.url = url
        self.sse = sse
        self.pool = httpcore.ConnectionPool(max_connections=100)
        self.ids = itertools.count(1)
        self.headers = [
            (b"Accept", b"application/json, text/event-stream"),
            (b"Content-Type", b"application/json"),
        ]
        r = self.pool.request("POST", url, headers=self.headers, content=self._init_body())
        sid = dict(r.headers)[b"mcp-session-id"]
        self._decode(r.content)
        self.headers += [(b"Mcp-Session-Id", sid), (b"MCP-Protocol-Version", VERSION.encode())]
        r = self.pool.request(
            "POST",
            url,
            headers=self.headers,
            content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        )
        assert r.status == 202, r.status
        self.protocol_version = VERSION

    def _init_body(self) -> bytes:
        return json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": VERSION,
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
        ).encode()

    def _decode(self, body: bytes) -> Any:
        if self.sse:
            for line in body.splitlines():
                if line.startswith(b"data:"):
                    return json.loads(line[5:])
            raise BenchError("no data in the SSE reply")
        return json.loads(body)

    def request(self, method: str, params: dict[str, Any]) -> Any:
        msg = {"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params}
        r = self.pool.request(
            "POST", self.url, headers=self.headers, content=json.dumps(msg).encode()
        )
        return self._decode(r.content)["result"]

    def call_echo(self, text: str) -> str:
        result = self.request("tools/call", {"name": "echo", "arguments": {"text": text}})
        return result["content"][0]["text"]  # type: ignore[no-any-return]

    def close(self) -> None:
        self.pool.request("DELETE", self.url, headers=self.headers)
        self.pool.close()


def run_raw(args: argparse.Namespace, url: str, pid: int) -> dict[str, Any]:
    from concurrent.futures import ThreadPoolExecutor

    c = RawClient(url, args.mode == "sse")
    assert [t["name"] for t in c.request("tools/list", {})["tools"]] == ["echo"]
    pool = ThreadPoolExecutor(max_workers=args.concurrency)
    try:
        result = _run_sync_workload(
            args, c.call_echo, lambda texts: list(pool.map(c.call_echo, texts)), pid
        )
        result["protocol_version"] = c.protocol_version
        return result
    finally:
        pool.shutdown()
        c.close()


# ---------------------------------------------------------------------------- sync


def run_sync(args: argparse.Namespace, url: str, pid: int) -> dict[str, Any]:
    from concurrent.futures import ThreadPoolExecutor

    import mcp_io_sync

    client = mcp_io_sync.connect(url)

    def echo(text: str) -> str:
        return client.call_tool("echo", {"text": text})["content"][0]["text"]  # type: ignore[no-any-return]

    # Concurrent calls: call_tools(concurrent=True), the blocking client's API for them,
    # or with --threads N, N threads each calling call_tool.
    pool = ThreadPoolExecutor(max_workers=args.threads) if args.threads else None

    def batch(texts: list[str]) -> list[str]:
        if pool is not None:
            return list(pool.map(echo, texts))
        calls = [{"name": "echo", "arguments": {"text": t}} for t in texts]
        return [r["content"][0]["text"] for r in client.call_tools(calls, concurrent=True)]

    try:
        assert [t.name for t in client.list_tools()] == ["echo"]
        result = _run_sync_workload(args, echo, batch, pid)
        result["protocol_version"] = client.servers[0].protocol_version
        return result
    finally:
        if pool is not None:
            pool.shutdown()
        client.close()


# ---------------------------------------------------------------------------- trio


def run_trio(args: argparse.Namespace, url: str, pid: int) -> dict[str, Any]:
    import trio

    import mcp_io_trio

    async def main() -> dict[str, Any]:
        async with mcp_io_trio.connect(url) as client:

            async def echo(text: str) -> str:
                return (await client.call_tool("echo", {"text": text}))["content"][0]["text"]  # type: ignore[no-any-return]

            async def batch(texts: list[str]) -> list[str]:
                out = [""] * len(texts)

                async def one(i: int, t: str) -> None:
                    out[i] = await echo(t)

                async with trio.open_nursery() as nursery:
                    for i, t in enumerate(texts):
                        nursery.start_soon(one, i, t)
                return out

            assert [t.name for t in await client.list_tools()] == ["echo"]
            result = await _run_async_workload(args, echo, batch, pid)
            result["protocol_version"] = client.servers[0].protocol_version
            return result

    return trio.run(main)


# ---------------------------------------------------------------------------- sdk


def run_sdk(args: argparse.Namespace, url: str, pid: int) -> dict[str, Any]:
    import asyncio

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> dict[str, Any]:
        async with streamable_http_client(url) as (read, write):  # noqa: SIM117 - SDK idiom
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                assert [t.name for t in (await session.list_tools()).tools] == ["echo"]

                async def echo(text: str) -> str:
                    result = await session.call_tool("echo", {"text": text})
                    return result.content[0].text  # type: ignore[no-any-return,union-attr]

                async def batch(texts: list[str]) -> list[str]:
                    return list(await asyncio.gather(*(echo(t) for t in texts)))

                result = await _run_async_workload(args, echo, batch, pid)
                result["protocol_version"] = init.protocol_version
                return result

    return asyncio.run(main())


RUNNERS = {"raw": run_raw, "sync": run_sync, "trio": run_trio, "sdk": run_sdk}


def worker_main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(prog="run_http.py --worker")
    p.add_argument("client", choices=CLIENTS)
    p.add_argument("workload", choices=WORKLOADS)
    p.add_argument("mode", choices=MODES)
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--concurrency", type=int, default=100)
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="sync conc: N threads calling call_tool (0: call_tools(concurrent=True))",
    )
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--profile", metavar="FILE", help="cProfile the timed section (calling thread)")
    args = p.parse_args(argv)
    server = subprocess.Popen([PY, SERVER, args.mode], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        if not line.startswith("PORT "):
            raise BenchError(f"server did not start: {line!r}")
        url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"
        result = RUNNERS[args.client](args, url, server.pid)
    finally:
        server.kill()
        server.wait()
    if result.get("protocol_version") != VERSION:
        raise BenchError(f"negotiated {result.get('protocol_version')!r}, not {VERSION}")
    result["maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    lib = {"sync": "mcp_io_sync", "trio": "mcp_io_trio", "sdk": "mcp", "raw": "httpcore"}
    result["library_file"] = getattr(sys.modules.get(lib[args.client]), "__file__", None)
    result.update(client=args.client, workload=args.workload, mode=args.mode)
    sys.stdout.write("BENCH_RESULT " + json.dumps(result) + "\n")
    sys.stdout.flush()


# ============================================================================ driver


def _stdio_bench() -> Any:
    """bench/run.py: its noise guards and source/version records are reused as is."""
    sys.path.insert(0, HERE)
    import run

    return run


def run_worker(
    client: str, workload: str, mode: str, st: Settings, threads: int = 0
) -> dict[str, Any]:
    """One sample; ``client`` may name a revision (``sync@abc1234``, see --at)."""
    sb = _stdio_bench()
    extra = ["--warmup", str(st.warmup), "--threads", str(threads)]
    extra += ["--n", str(st.seq_calls)] if workload == "seq" else ["--rounds", str(st.conc_rounds)]
    cmd = [PY, os.path.abspath(__file__), "--worker", sb.base(client), workload, mode, *extra]
    last = ""
    for attempt in range(2):
        waited = sb.wait_for_quiet() if sb.QUIET_WAIT > 0 else 0.0
        busy0, own0, t0 = sb._machine_busy_s(), sb._children_cpu_s(), time.perf_counter()
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=600, cwd=HERE, env=sb.REVS.env(client)
        )
        wall = time.perf_counter() - t0
        foreign = (sb._machine_busy_s() - busy0) - (sb._children_cpu_s() - own0)
        for line in proc.stdout.splitlines():
            if line.startswith("BENCH_RESULT "):
                result: dict[str, Any] = json.loads(line[len("BENCH_RESULT ") :])
                result["foreign_load"] = max(0.0, foreign) / (wall * (os.cpu_count() or 1))
                result["waited_for_quiet_s"] = waited
                return result
        last = f"exit {proc.returncode}: {proc.stderr[-3000:]}"
        tail = proc.stderr.strip().splitlines()[-1:] or [""]
        print(
            f"  {client}/{workload}/{mode} failed ({tail[0]}); attempt {attempt + 1}",
            file=sys.stderr,
        )
        time.sleep(1)
    return {"error": last, "client": client, "workload": workload, "mode": mode}


def collect(only: set[str], st: Settings, log: Any) -> dict[str, Any]:
    def pick(names: tuple[str, ...]) -> list[str]:
        return [x for x in names if not (only & set(names)) or x in only]

    clients, workloads, modes = pick(CLIENTS), pick(WORKLOADS), pick(MODES)
    clients = _stdio_bench().REVS.expand(clients, OURS)
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for rep in range(st.reps):
        t0 = time.perf_counter()
        k = 0
        for mode in modes:
            for workload in workloads:
                order = clients[k % len(clients) :] + clients[: k % len(clients)]
                k += rep + 1
                for c in order:
                    r = run_worker(c, workload, mode, st, threads=100)
                    samples.setdefault(f"{workload}.{mode}", {}).setdefault(c, []).append(r)
                    if c.split("@")[0] == "sync" and workload == "conc":
                        r = run_worker(c, workload, mode, st, threads=0)
                        key = f"conc_many.{mode}"
                        samples.setdefault(key, {}).setdefault(c, []).append(r)
        log(f"  repeat {rep + 1}/{st.reps} done in {time.perf_counter() - t0:.0f} s")
    return {"clients": clients, "workloads": workloads, "modes": modes, "samples": samples}


def summarize(data: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for wm, per_client in data["samples"].items():
        for c, rs in per_client.items():
            ok = [r for r in rs if "error" not in r]
            for key in ("calls_per_s", "cpu_us_per_call", "server_cpu_us_per_call"):
                vals = [r[key] for r in ok]
                if vals:
                    out.setdefault(f"{wm}.{key}", {})[c] = {
                        "median": statistics.median(vals),
                        "min": min(vals),
                        "max": max(vals),
                        "n": len(vals),
                        "values": vals,  # in repeat order (the paired ratio of --at runs)
                    }
    return out


def render(
    summary: dict[str, Any], data: dict[str, Any], st: Settings
) -> tuple[str, dict[str, Any]]:
    clients = data["clients"]
    ours = [c for c in clients if c.split("@")[0] in OURS]
    header = ["metric", "unit", "better", *clients, *(f"{c}/sdk" for c in ours), "target"]
    header += [*ours, "raw/sdk"] if "raw" in clients else ours
    rows: list[list[str]] = []
    verdicts: dict[str, Any] = {}
    for m in METRICS:
        cells = summary.get(f"{m.workload}.{m.mode}.{m.key}")
        if not cells:
            continue
        row = [m.label, m.unit, "higher" if m.higher_is_better else "lower"]
        row += [m.fmt.format(cells[c]["median"]) if c in cells else "-" for c in clients]
        sdk_cells = summary.get(f"{m.sdk_from}.{m.mode}.{m.key}", {}) if m.sdk_from else cells
        sdk = sdk_cells.get("sdk", {}).get("median")
        ratios = {c: (cells[c]["median"] / sdk if c in cells and sdk else None) for c in clients}
        row += [f"{ratios[c]:.2f}x" if ratios[c] is not None else "-" for c in ours]
        row.append(
            "" if m.target is None else ("≥" if m.higher_is_better else "≤") + f"{m.target:g}x"
        )
        for c in ours:
            v = ""
            if m.target is not None and ratios[c] is not None:
                ok = ratios[c] >= m.target if m.higher_is_better else ratios[c] <= m.target
                v = "PASS" if ok else "MISS"
                verdicts[f"{m.workload}.{m.mode}.{m.key}.{c}"] = {
                    "ratio": ratios[c],
                    "target": m.target,
                    "verdict": v,
                    "higher_is_better": m.higher_is_better,
                }
            row.append(v)
        if "raw" in clients:
            row.append(f"{ratios['raw']:.2f}x" if ratios["raw"] is not None else "-")
        rows.append(row)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )

    notes = [
        "",
        "ratios: ours/SDK of the medians ('better' gives the direction); raw/sdk = the floor.",
        f"runs: sequential {st.seq_calls} calls; concurrent {st.conc_rounds} rounds of 100 "
        f"calls; each in a fresh process with its own server, x{st.reps}; medians.",
        "100 concurrent: sync = ThreadPoolExecutor(100) calling call_tool (info row: one",
        "call_tools(calls, concurrent=True), POSTs from 64 threads); trio = 100 tasks;",
        "sdk = asyncio.gather; raw = ThreadPoolExecutor(100) over one httpcore pool.",
        "client CPU per call: user+sys of the client process (all threads) / timed calls;",
        "server CPU (info): the same for the server process (equal work for every client).",
        f"every client negotiates {VERSION}; [json] = application/json replies,",
        "[sse] = text/event-stream replies (one 'message' event per POST).",
    ]
    return "\n".join(
        [line(header), line(["-" * w for w in widths]), *map(line, rows), *notes]
    ), verdicts


def render_spread(summary: dict[str, Any], data: dict[str, Any]) -> str:
    lines = ["spread of the samples (min..max, n):"]
    for m in METRICS:
        cells = summary.get(f"{m.workload}.{m.mode}.{m.key}")
        if cells:
            parts = [
                f"{c} {m.fmt.format(v['min'])}..{m.fmt.format(v['max'])} (n={v['n']})"
                for c, v in cells.items()
            ]
            lines.append(f"  {m.label.strip()}: " + "; ".join(parts))
    loads = [
        r["foreign_load"]
        for per in data["samples"].values()
        for rs in per.values()
        for r in rs
        if "foreign_load" in r
    ]
    if loads:
        lines.append(
            f"machine share used by other processes (median): {statistics.median(loads):.0%}"
        )
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker_main(sys.argv[2:])
        return
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--quick", action="store_true", help="fewer calls, one repeat")
    p.add_argument(
        "--only",
        default="",
        help="comma-separated clients ("
        + ",".join(CLIENTS)
        + "), workloads ("
        + ",".join(WORKLOADS)
        + ") and/or reply modes ("
        + ",".join(MODES)
        + ")",
    )
    p.add_argument("--reps", type=int, help="override the number of repeats")
    p.add_argument(
        "--quiet-wait",
        type=float,
        default=2.0,
        metavar="S",
        help="before each sample wait up to S seconds for the machine to calm down (0 = never)",
    )
    p.add_argument(
        "--cpus",
        help="diagnostic: pin this driver and so every worker and server it starts to these "
        "CPUs (e.g. 0); the default is no pinning, as a user would run",
    )
    p.add_argument(
        "--at",
        metavar="REV",
        action="append",
        default=[],
        help="measure the product as committed at REV, exported with git archive; given "
        "twice (--at OLD --at NEW), both revisions are measured side by side in one run and "
        "compared (as bench/run.py --at)",
    )
    p.add_argument("--out", help="JSON output path (default bench/results/http-<timestamp>.json)")
    args = p.parse_args()
    if args.cpus:
        os.sched_setaffinity(0, {int(x) for x in args.cpus.split(",")})  # inherited
    only = {x.strip() for x in args.only.split(",") if x.strip()}
    unknown = only - set(CLIENTS) - set(WORKLOADS) - set(MODES)
    if unknown:
        p.error(f"unknown --only name(s): {', '.join(sorted(unknown))}")
    st = QUICK if args.quick else FULL
    if args.reps:
        st = Settings(**{**st.__dict__, "reps": args.reps})
    sb = _stdio_bench()
    sb.QUIET_WAIT = args.quiet_wait
    sb.REVS = sb.Revisions(args.at)

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    machine: dict[str, Any] = {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
        "pinned_cpus": args.cpus,
    }
    before = sb.source_state()
    log(
        f"bench http: python {machine['python']}, {machine['cpu_count']} CPUs, load "
        f"{machine['loadavg_start'][0]:.2f}; {st}; sources {before['sources_sha256']} "
        f"at {before['git_head']} + {len(before['uncommitted'])} uncommitted product file(s)"
    )
    t0 = time.perf_counter()
    data = collect(only, st, log)
    after = sb.source_state()
    machine["loadavg_end"] = os.getloadavg()
    summary = summarize(data)
    table, verdicts = render(summary, data, st)
    print()
    print(table)
    print()
    print(render_spread(summary, data))
    elapsed = time.perf_counter() - t0
    print(
        f"\n({'quick' if args.quick else 'full'} run, {elapsed:.0f} s, load average "
        f"{machine['loadavg_start'][0]:.2f} -> {machine['loadavg_end'][0]:.2f}; product "
        f"sources {before['sources_sha256']} at {before['git_head']}"
        f"{' + uncommitted changes' if before['uncommitted'] else ''})"
    )
    comparison: list[dict[str, Any]] = []
    if sb.REVS.side_by_side:
        rows = [
            (
                m.label,
                m.unit,
                m.higher_is_better,
                summary.get(f"{m.workload}.{m.mode}.{m.key}", {}),
            )
            for m in METRICS
        ]
        ours = [c for c in OURS if any(x.split("@")[0] == c for x in data["clients"])]
        text, comparison = sb.compare_table(sb.REVS, ours, rows)
        print()
        print(text)
    errors = [
        r for per in data["samples"].values() for rs in per.values() for r in rs if "error" in r
    ]
    if errors:
        print(f"WARNING: {len(errors)} sample(s) failed and were left out (see the JSON)")
    if after["sources_sha256"] != before["sources_sha256"]:
        print("WARNING: the product sources changed during the run; rerun on a quiet tree")
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    doc = {
        "timestamp": stamp,
        "quick": args.quick,
        "only": sorted(only),
        "settings": st.__dict__,
        "machine": machine,
        "versions": {**sb.versions(), **_more_versions()},
        "source_before": before,
        "source_after": after,
        "summary": summary,
        "verdicts": verdicts,
        "table": table,
        "revisions": sb.REVS.labels,
        "comparison": comparison,
        "raw": data,
        "elapsed_s": elapsed,
    }
    os.makedirs(RESULTS, exist_ok=True)
    path = args.out or os.path.join(RESULTS, f"http-{stamp}{'-quick' if args.quick else ''}.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    log(f"wrote {path}")


def _more_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("httpcore", "h11", "httpx2"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "absent"
    return out


if __name__ == "__main__":
    main()
