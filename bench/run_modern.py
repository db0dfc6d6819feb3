#!/usr/bin/env python3
"""Modern-era benchmark rows (issue 10): sequential ``tools/call`` at the 2026-07-28 revision.

    .venv/bin/python bench/run_modern.py                 # stdio and Streamable HTTP (~2 min)
    .venv/bin/python bench/run_modern.py --quick         # fewer calls and repeats (~30 s)
    .venv/bin/python bench/run_modern.py --only sync,sdk --transports http

Our clients (``mcp_io_sync`` / ``mcp_io_trio`` with ``protocol="modern"``) against the
floor (``raw``: no client library, hand-written JSON-RPC over a pipe or ``http.client``,
the same requests with their ``_meta`` and, over HTTP, the revision's headers) and the
official SDK client (``mcp==2.3.0``: ``mcp.Client(target, mode="2026-07-28")``, which
speaks the revision directly: no ``initialize``, ``_meta`` on every request), all talking
to the same minimal modern server: ``bench/fast_server.py --modern`` over stdio (each
client starts its own) and ``bench/fast_http_server.py json --modern`` over Streamable
HTTP (one server for the run). Both servers refuse a request whose ``_meta`` (and, over
HTTP, ``MCP-Protocol-Version`` header) does not carry 2026-07-28, so a client that does
not speak the revision fails here instead of being measured in the handshake era.

Each sample is a fresh worker process: connect, list tools, 50 untimed warm-up calls,
then ``--calls`` back-to-back ``tools/call echo`` (every reply checked); it reports the
rate (calls/s, wall clock) and the client CPU per call (user+system of the worker
process, all its threads; the stdio server is a child process and is not counted).
Clients are interleaved, the order rotates each repeat, the table shows medians. The
floor is in the same run because this machine's speed drifts (a shared 2-CPU VM: the
same client's CPU per call moves by half between runs minutes apart, the floor with
it); under the table, the ratios of each repeat alone (ours and the SDK measured
seconds apart) show how far that drift moved the medians.

Targets (issue 10, "bench/"): rate ≥ 3x the SDK client's, client CPU per call ≤ 0.3x its.
``PASS``/``MISS`` per client and row; a client that could not run shows ``ERROR`` with
its first error line. Results: the table on stdout, every sample in
``bench/results/modern-<timestamp>.json`` (gitignored).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
FAST_SERVER = os.path.join(HERE, "fast_server.py")
FAST_HTTP_SERVER = os.path.join(HERE, "fast_http_server.py")
CLIENTS = ("raw", "sync", "trio", "sdk")
OURS = ("sync", "trio")
TRANSPORTS = ("stdio", "http")
WARMUP = 50
RATE_TARGET = 3.0  # ours / SDK, higher is better
CPU_TARGET = 0.3  # ours / SDK, lower is better


# ---------------------------------------------------------------- worker (one sample)


def _cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _check(text: str, i: int) -> None:
    if text != f"m{i}":
        raise RuntimeError(f"call {i}: echo answered {text!r}")


def _stdio_argv() -> list[str]:
    return [sys.executable, FAST_SERVER, "--modern"]


MODERN = "2026-07-28"
RAW_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _raw_request(rid: int, method: str, params: dict[str, Any]) -> bytes:
    msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {**params, "_meta": RAW_META}}
    return json.dumps(msg, separators=(",", ":")).encode()


def _raw_result(line: bytes, rid: int) -> Any:
    msg = json.loads(line)
    if msg.get("id") != rid or "result" not in msg:
        raise RuntimeError(f"request {rid}: answered {line[:200]!r}")
    return msg["result"]


def work_raw(transport: str, url: str, calls: int) -> tuple[float, float]:
    """The floor: the same requests, no client library (blocking pipe or http.client)."""
    if transport == "stdio":
        proc = subprocess.Popen(_stdio_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        stdin, stdout = proc.stdin, proc.stdout
        assert stdin is not None and stdout is not None

        def request(rid: int, method: str, params: dict[str, Any]) -> Any:
            stdin.write(_raw_request(rid, method, params) + b"\n")
            stdin.flush()
            return _raw_result(stdout.readline(), rid)

        def close() -> None:
            stdin.close()
            proc.wait(5)

    else:
        import http.client
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port)

        def request(rid: int, method: str, params: dict[str, Any]) -> Any:
            headers = {
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": MODERN,
                "Mcp-Method": method,
            }
            if "name" in params:
                headers["Mcp-Name"] = params["name"]
            conn.request("POST", parts.path, _raw_request(rid, method, params), headers)
            response = conn.getresponse()
            body = response.read()
            if response.status != 200:
                raise RuntimeError(f"request {rid}: HTTP {response.status}")
            return _raw_result(body, rid)

        close = conn.close

    try:
        request(0, "server/discover", {})
        request(1, "tools/list", {})

        def call(i: int, rid: int) -> None:
            result = request(rid, "tools/call", {"name": "echo", "arguments": {"text": f"m{i}"}})
            _check(result["content"][0]["text"], i)

        for i in range(WARMUP):
            call(i, 2 + i)
        cpu0, t0 = _cpu(), time.perf_counter()
        for i in range(calls):
            call(i, 2 + WARMUP + i)
        return time.perf_counter() - t0, _cpu() - cpu0
    finally:
        close()


def work_sync(transport: str, url: str, calls: int) -> tuple[float, float]:
    import mcp_io_sync

    target: Any = _stdio_argv() if transport == "stdio" else url
    with mcp_io_sync.connect(target, protocol="modern", read_timeout=30) as client:
        client.list_tools()
        for i in range(WARMUP):
            _check(client.call_tool("echo", {"text": f"m{i}"})["content"][0]["text"], i)
        cpu0, t0 = _cpu(), time.perf_counter()
        for i in range(calls):
            _check(client.call_tool("echo", {"text": f"m{i}"})["content"][0]["text"], i)
        return time.perf_counter() - t0, _cpu() - cpu0


def work_trio(transport: str, url: str, calls: int) -> tuple[float, float]:
    import trio

    import mcp_io_trio

    target: Any = _stdio_argv() if transport == "stdio" else url

    async def main() -> tuple[float, float]:
        async with mcp_io_trio.connect(target, protocol="modern", read_timeout=30) as client:
            await client.list_tools()
            for i in range(WARMUP):
                r = await client.call_tool("echo", {"text": f"m{i}"})
                _check(r["content"][0]["text"], i)
            cpu0, t0 = _cpu(), time.perf_counter()
            for i in range(calls):
                r = await client.call_tool("echo", {"text": f"m{i}"})
                _check(r["content"][0]["text"], i)
            return time.perf_counter() - t0, _cpu() - cpu0

    return trio.run(main)


def work_sdk(transport: str, url: str, calls: int) -> tuple[float, float]:
    import asyncio
    import warnings

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    warnings.simplefilter("ignore")  # the SDK's deprecation notices are not ours to judge
    target: Any = url
    if transport == "stdio":
        argv = _stdio_argv()
        target = StdioServerParameters(command=argv[0], args=argv[1:])

    async def main() -> tuple[float, float]:
        async with Client(target, mode="2026-07-28") as client:
            await client.list_tools()
            for i in range(WARMUP):
                r = await client.call_tool("echo", {"text": f"m{i}"})
                _check(r.content[0].text, i)  # type: ignore[union-attr]
            cpu0, t0 = _cpu(), time.perf_counter()
            for i in range(calls):
                r = await client.call_tool("echo", {"text": f"m{i}"})
                _check(r.content[0].text, i)  # type: ignore[union-attr]
            return time.perf_counter() - t0, _cpu() - cpu0

    return asyncio.run(main())


WORKERS = {"raw": work_raw, "sync": work_sync, "trio": work_trio, "sdk": work_sdk}


def worker(client: str, transport: str, url: str, calls: int) -> int:
    try:
        wall, cpu = WORKERS[client](transport, url, calls)
    except Exception as exc:  # reported to the driver as this sample's error
        line = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
        print("BENCH_RESULT " + json.dumps({"error": line}), flush=True)
        return 0
    result = {"rate": calls / wall, "cpu_us": cpu / calls * 1e6, "wall": wall, "cpu": cpu}
    print("BENCH_RESULT " + json.dumps(result), flush=True)
    return 0


# ---------------------------------------------------------------- driver


def start_http_server() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, FAST_HTTP_SERVER, "json", "--modern"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise SystemExit(f"fast_http_server.py did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}/mcp"


def sample(client: str, transport: str, url: str, calls: int) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--worker", client, transport, url, "--calls", str(calls)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after 300 s"}
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            result: dict[str, Any] = json.loads(line.split(" ", 1)[1])
            return result
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"worker exited {proc.returncode}: {tail[:300]}"}


def verdict(ratio: float | None, better: str, target: float) -> str:
    if ratio is None:
        return "ERROR"
    ok = ratio >= target if better == "higher" else ratio <= target
    return "PASS" if ok else "MISS"


def fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def report(
    samples: dict[tuple[str, str], list[dict[str, Any]]],
    clients: list[str],
    transports: list[str],
    calls: int,
) -> list[str]:
    ours = [c for c in clients if c in OURS]
    lines = [f"modern era (2026-07-28): {calls} sequential tools/call echo, medians"]
    header = ["metric", "unit", "better", *clients, *(f"{c}/sdk" for c in ours), "target", *ours]
    rows = [header]
    errors: list[str] = []
    for transport in transports:
        for key, name, unit, better, target in (
            ("rate", "sequential tools/call", "calls/s", "higher", RATE_TARGET),
            ("cpu_us", "client CPU per call", "µs", "lower", CPU_TARGET),
        ):
            medians: dict[str, float | None] = {}
            for c in clients:
                good = [s[key] for s in samples[(c, transport)] if "error" not in s]
                medians[c] = statistics.median(good) if good else None
                bad = [s["error"] for s in samples[(c, transport)] if "error" in s]
                if bad and key == "rate":
                    errors.append(f"{c} over {transport}: {len(bad)} failed sample(s): {bad[0]}")
            sdk = medians.get("sdk")
            ratios = {c: (medians[c] / sdk if medians[c] and sdk else None) for c in ours}
            sign = "≥" if better == "higher" else "≤"
            rows.append(
                [
                    f"{transport}: {name}",
                    unit,
                    better,
                    *(fmt(medians[c]) for c in clients),
                    *(fmt(ratios[c]) for c in ours),
                    f"{sign}{target:g}x",
                    *(verdict(ratios[c], better, target) for c in ours),
                ]
            )
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(header))]
    for r in rows:
        lines.append("  ".join(str(v).ljust(w) for v, w in zip(r, widths, strict=True)))
    lines += per_repeat(samples, ours, transports)
    lines += [f"  ! {e}" for e in errors]
    return lines


def per_repeat(
    samples: dict[tuple[str, str], list[dict[str, Any]]], ours: list[str], transports: list[str]
) -> list[str]:
    """Each repeat's own ratio ours/SDK (measured seconds apart, so a drift of the
    machine's speed between repeats cancels out): the spread the medians come from."""
    lines = []
    for transport in transports:
        sdk = samples.get(("sdk", transport), [])
        for c in ours:
            mine = samples.get((c, transport), [])
            for key, name in (("rate", "rate"), ("cpu_us", "CPU")):
                ratios = [
                    m[key] / s[key]
                    for m, s in zip(mine, sdk, strict=False)
                    if "error" not in m and "error" not in s and s[key]
                ]
                if ratios:
                    shown = " ".join(f"{r:.2f}" for r in ratios)
                    lines.append(f"  per repeat, {transport} {c}/sdk {name}: {shown}")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--worker", nargs=3, metavar=("CLIENT", "TRANSPORT", "URL"))
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="500 calls, 3 repeats")
    p.add_argument("--only", default=",".join(CLIENTS), help="clients, e.g. sync,sdk")
    p.add_argument("--transports", default=",".join(TRANSPORTS))
    args = p.parse_args(argv)
    if args.worker:
        client, transport, url = args.worker
        return worker(client, transport, url, args.calls)
    if args.quick:
        args.calls, args.repeats = 500, 3
    clients = [c for c in args.only.split(",") if c]
    transports = [t for t in args.transports.split(",") if t]
    unknown = (set(clients) - set(CLIENTS)) | (set(transports) - set(TRANSPORTS))
    if unknown:
        raise SystemExit(f"unknown client/transport: {', '.join(sorted(unknown))}")
    samples: dict[tuple[str, str], list[dict[str, Any]]] = {
        (c, t): [] for c in clients for t in transports
    }
    server, url = start_http_server() if "http" in transports else (None, "-")
    try:
        for r in range(args.repeats):
            order = clients[r % len(clients) :] + clients[: r % len(clients)]
            for transport in transports:
                for c in order:
                    s = sample(c, transport, url, args.calls)
                    samples[(c, transport)].append(s)
                    shown = s.get("error") or f"{s['rate']:.0f} calls/s, {s['cpu_us']:.0f} µs"
                    print(f"[{r + 1}/{args.repeats}] {transport} {c}: {shown}", file=sys.stderr)
    finally:
        if server is not None:
            server.kill()
            server.wait()
    out = report(samples, clients, transports, args.calls)
    print("\n".join(out))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = os.path.join(HERE, "results", f"modern-{stamp}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(
            {
                "calls": args.calls,
                "repeats": args.repeats,
                "samples": {f"{c}/{t}": v for (c, t), v in samples.items()},
                "table": out,
            },
            f,
            indent=1,
        )
    print(f"samples: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
