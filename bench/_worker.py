"""One benchmark measurement in a fresh process (spawned by ``bench/run.py``).

    python bench/_worker.py CLIENT WORKLOAD [options]

CLIENT is ``raw`` | ``sync`` | ``trio`` | ``sdk``; WORKLOAD is ``cold`` | ``seq`` |
``mib`` | ``conc`` | ``rss``. Only the client library under test is imported (lazily,
inside its runner), so the process's peak RSS is that client's. The result is printed
as one line ``BENCH_RESULT {json}`` on stdout; it always carries ``maxrss_kib``, the
peak resident set of THIS process (``getrusage(RUSAGE_SELF)``: the server child is
not included).

Every workload connects to ``bench/fast_server.py`` and lists the tools first (both
our client and the SDK client list tools before the first call anyway: ours to route
the call, the SDK's to cache output schemas), then runs untimed warm-up calls, then
the timed part. Every reply is checked (the echoed text must equal what was sent).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = [sys.executable, os.path.join(HERE, "fast_server.py")]
SMALL_TEXT = "hello, benchmark"


class BenchError(RuntimeError):
    pass


def _check(got: str, want: str) -> None:
    if got != want:
        raise BenchError(f"echo mismatch: sent {len(want)} chars, got {len(got)}")


def _payload(size: int) -> str:
    # ASCII, no characters JSON must escape: the wire size is the payload size.
    unit = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return (unit * (size // len(unit) + 1))[:size]


def _cold(t0: float, t1: float, t2: float) -> dict[str, Any]:
    """connect..first tools/list result, then the first tools/call (first-use costs
    such as lazy imports land there), then closing."""
    return {
        "cold_ms": (t1 - t0) * 1e3,
        "first_call_ms": (t2 - t1) * 1e3,
        "close_ms": (time.perf_counter() - t2) * 1e3,
    }


# ---------------------------------------------------------------------------- raw


class RawClient:
    """The floor: a subprocess and hand-written JSON lines, no client library."""

    def __init__(self) -> None:
        # A 256 KiB buffer: fewer read() calls per 1 MiB line (this is the floor).
        self.proc = subprocess.Popen(
            SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1 << 18
        )
        self.next_id = 0
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin = self.proc.stdin
        self.stdout = self.proc.stdout
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        self.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.stdin.flush()

    def _encode(self, method: str, params: dict[str, Any]) -> bytes:
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        return json.dumps(msg, separators=(",", ":")).encode() + b"\n"

    def request(self, method: str, params: dict[str, Any]) -> Any:
        self.stdin.write(self._encode(method, params))
        self.stdin.flush()
        msg = json.loads(self.stdout.readline())
        return msg["result"]

    def list_tools(self) -> list[str]:
        return [t["name"] for t in self.request("tools/list", {})["tools"]]

    def call_echo(self, text: str) -> str:
        result = self.request("tools/call", {"name": "echo", "arguments": {"text": text}})
        return result["content"][0]["text"]  # type: ignore[no-any-return]

    def call_many(self, texts: list[str]) -> list[str]:
        """Pipelined: write every request, then read every response (ids matched)."""
        first = self.next_id + 1
        self.stdin.write(
            b"".join(
                self._encode("tools/call", {"name": "echo", "arguments": {"text": t}})
                for t in texts
            )
        )
        self.stdin.flush()
        out: list[str] = [""] * len(texts)
        for _ in texts:
            msg = json.loads(self.stdout.readline())
            out[msg["id"] - first] = msg["result"]["content"][0]["text"]
        return out

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait(5)


def run_raw(args: argparse.Namespace) -> dict[str, Any]:
    if args.workload == "cold":
        t0 = time.perf_counter()
        c = RawClient()
        tools = c.list_tools()
        t1 = time.perf_counter()
        assert tools == ["echo"], tools
        _check(c.call_echo(SMALL_TEXT), SMALL_TEXT)
        t2 = time.perf_counter()
        c.close()
        return _cold(t0, t1, t2)
    c = RawClient()
    assert c.list_tools() == ["echo"]
    try:
        return _common_workloads(
            args,
            call=c.call_echo,
            call_batch=c.call_many,
        )
    finally:
        c.close()


# ---------------------------------------------------------------------------- sync


def run_sync(args: argparse.Namespace) -> dict[str, Any]:
    import mcp_io_sync

    def echo(client: Any, text: str) -> str:
        return client.call_tool("echo", {"text": text})["content"][0]["text"]  # type: ignore[no-any-return]

    if args.workload == "cold":
        t0 = time.perf_counter()
        client = mcp_io_sync.connect(SERVER)
        tools = client.list_tools()
        t1 = time.perf_counter()
        assert [t.name for t in tools] == ["echo"], tools
        _check(echo(client, SMALL_TEXT), SMALL_TEXT)
        t2 = time.perf_counter()
        client.close()
        return _cold(t0, t1, t2)

    from concurrent.futures import ThreadPoolExecutor

    client = mcp_io_sync.connect(SERVER)
    # Concurrent calls: by default call_tools(concurrent=True), the blocking client's API
    # for it (one thread); with --threads N, N threads each calling call_tool (what a
    # program with its own threads does). Only then is there a thread pool (it costs RSS).
    concurrent = args.workload in ("conc", "rss")
    pool = ThreadPoolExecutor(max_workers=args.threads) if concurrent and args.threads else None
    try:
        assert [t.name for t in client.list_tools()] == ["echo"]

        def batch(texts: list[str]) -> list[str]:
            if pool is None:
                calls = [{"name": "echo", "arguments": {"text": t}} for t in texts]
                results = client.call_tools(calls, concurrent=True)
                return [r["content"][0]["text"] for r in results]
            return list(pool.map(lambda t: echo(client, t), texts))

        if pool is not None:
            # Start every pool thread before timing (the pool creates them lazily).
            batch([SMALL_TEXT] * args.threads)
        result = _common_workloads(args, call=lambda t: echo(client, t), call_batch=batch)
        if pool is not None:
            result["threads"] = args.threads
        return result
    finally:
        if pool is not None:
            pool.shutdown()
        client.close()


# ---------------------------------------------------------------------------- trio


def run_trio(args: argparse.Namespace) -> dict[str, Any]:
    import trio

    import mcp_io_trio

    async def echo(client: Any, text: str) -> str:
        return (await client.call_tool("echo", {"text": text}))["content"][0]["text"]  # type: ignore[no-any-return]

    async def main() -> dict[str, Any]:
        if args.workload == "cold":
            t0 = time.perf_counter()
            async with mcp_io_trio.connect(SERVER) as client:
                tools = await client.list_tools()
                t1 = time.perf_counter()
                assert [t.name for t in tools] == ["echo"], tools
                _check(await echo(client, SMALL_TEXT), SMALL_TEXT)
                t2 = time.perf_counter()
            return _cold(t0, t1, t2)

        async with mcp_io_trio.connect(SERVER) as client:
            assert [t.name for t in await client.list_tools()] == ["echo"]

            async def batch(texts: list[str]) -> list[str]:
                out: list[str] = [""] * len(texts)

                async def one(i: int, t: str) -> None:
                    out[i] = await echo(client, t)

                async with trio.open_nursery() as nursery:
                    for i, t in enumerate(texts):
                        nursery.start_soon(one, i, t)
                return out

            return await _common_workloads_async(
                args, call=lambda t: echo(client, t), call_batch=batch
            )

    return trio.run(main)


# ---------------------------------------------------------------------------- sdk


def run_sdk(args: argparse.Namespace) -> dict[str, Any]:
    import asyncio

    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])

    async def echo(session: Any, text: str) -> str:
        result = await session.call_tool("echo", {"text": text})
        return result.content[0].text  # type: ignore[no-any-return]

    async def main() -> dict[str, Any]:
        if args.workload == "cold":
            t0 = time.perf_counter()
            async with stdio_client(params) as (read, write):  # noqa: SIM117 - the SDK idiom
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = await session.list_tools()
                    t1 = time.perf_counter()
                    assert [t.name for t in tools.tools] == ["echo"], tools
                    _check(await echo(session, SMALL_TEXT), SMALL_TEXT)
                    t2 = time.perf_counter()
            return _cold(t0, t1, t2)

        async with stdio_client(params) as (read, write):  # noqa: SIM117 - the SDK idiom
            async with ClientSession(read, write) as session:
                await session.initialize()
                assert [t.name for t in (await session.list_tools()).tools] == ["echo"]

                async def batch(texts: list[str]) -> list[str]:
                    return list(await asyncio.gather(*(echo(session, t) for t in texts)))

                return await _common_workloads_async(
                    args, call=lambda t: echo(session, t), call_batch=batch
                )

    return asyncio.run(main())


# ---------------------------------------------------------------------------- workloads


def _plan(args: argparse.Namespace) -> tuple[str, int, int, int]:
    """(text, warm-up sequential calls, timed sequential calls, timed batches)."""
    if args.workload == "seq":
        return SMALL_TEXT, args.warmup, args.n, 0
    if args.workload == "mib":
        return _payload(args.size), 2, args.n, 0
    if args.workload == "conc":
        return SMALL_TEXT, args.warmup, 0, args.rounds
    if args.workload == "rss":
        return SMALL_TEXT, 0, args.n, args.rounds
    raise SystemExit(f"unknown workload {args.workload!r}")


def _cpu() -> float:
    """CPU seconds (user + system) used so far by this process, all its threads."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _report(
    args: argparse.Namespace, text: str, seq_s: float, batch_s: float, cpu_s: float
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if args.workload == "seq":
        out = {"calls": args.n, "seconds": seq_s, "calls_per_s": args.n / seq_s}
    elif args.workload == "mib":
        mib = args.n * len(text) / (1024 * 1024)
        out = {
            "calls": args.n,
            "seconds": seq_s,
            "payload_mib_per_s": mib / seq_s,
            "ms_per_call": seq_s / args.n * 1e3,
        }
    elif args.workload == "conc":
        calls = args.rounds * args.concurrency
        out = {
            "calls": calls,
            "concurrency": args.concurrency,
            "seconds": batch_s,
            "calls_per_s": calls / batch_s,
        }
    elif args.workload == "rss":
        out = {"calls": args.n + args.rounds * args.concurrency}
    # The client process's own CPU time per timed call: far less sensitive to the
    # scheduling noise of a shared machine than wall-clock throughput.
    out["cpu_us_per_call"] = cpu_s / out["calls"] * 1e6
    return out


def _common_workloads(args: argparse.Namespace, *, call: Any, call_batch: Any) -> dict[str, Any]:
    text, warmup, n, rounds = _plan(args)
    for _ in range(warmup):
        _check(call(text), text)
    if args.workload == "conc":
        _check(call_batch([text] * args.concurrency)[-1], text)  # warm-up round
    c0 = _cpu()
    t0 = time.perf_counter()
    for _ in range(n):
        _check(call(text), text)
    t1 = time.perf_counter()
    for _ in range(rounds):
        for got in call_batch([text] * args.concurrency):
            _check(got, text)
    t2 = time.perf_counter()
    c1 = _cpu()
    return _report(args, text, t1 - t0, t2 - t1, c1 - c0)


async def _common_workloads_async(
    args: argparse.Namespace, *, call: Any, call_batch: Any
) -> dict[str, Any]:
    text, warmup, n, rounds = _plan(args)
    for _ in range(warmup):
        _check(await call(text), text)
    if args.workload == "conc":
        _check((await call_batch([text] * args.concurrency))[-1], text)  # warm-up round
    c0 = _cpu()
    t0 = time.perf_counter()
    for _ in range(n):
        _check(await call(text), text)
    t1 = time.perf_counter()
    for _ in range(rounds):
        for got in await call_batch([text] * args.concurrency):
            _check(got, text)
    t2 = time.perf_counter()
    c1 = _cpu()
    return _report(args, text, t1 - t0, t2 - t1, c1 - c0)


RUNNERS = {"raw": run_raw, "sync": run_sync, "trio": run_trio, "sdk": run_sdk}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("client", choices=sorted(RUNNERS))
    p.add_argument("workload", choices=["cold", "seq", "mib", "conc", "rss"])
    p.add_argument("--n", type=int, default=2000, help="timed sequential calls")
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--size", type=int, default=1024 * 1024, help="mib: payload bytes")
    p.add_argument("--rounds", type=int, default=10, help="rounds of concurrent calls")
    p.add_argument("--concurrency", type=int, default=100)
    p.add_argument(
        "--threads",
        type=int,
        default=0,
        help="sync conc/rss: N threads calling call_tool (0: call_tools(concurrent=True))",
    )
    args = p.parse_args()
    if args.client in ("sync", "trio"):
        from mcp_proto import jsonrpc

        if os.environ.get("MCP_PROTO_JSON"):  # bench/run.py --json
            jsonrpc.set_json_backend(os.environ["MCP_PROTO_JSON"])
    result = RUNNERS[args.client](args)
    result["maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Which copy of the library was measured (run.py --at exports a commit elsewhere).
    lib = {"sync": "mcp_io_sync", "trio": "mcp_io_trio", "sdk": "mcp"}.get(args.client)
    if lib is not None:
        result["library_file"] = getattr(sys.modules.get(lib), "__file__", None)
    if args.client in ("sync", "trio"):
        result["json_encoder"] = sys.modules["mcp_proto.jsonrpc"].json_backend()
    result["client"], result["workload"] = args.client, args.workload
    sys.stdout.write("BENCH_RESULT " + json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
