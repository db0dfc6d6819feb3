#!/usr/bin/env python3
"""Where does our client spend a sequential ``tools/call``? (profiling helper)

    .venv/bin/python bench/profile_client.py wire --client sync   # real pipes + fast_server
    .venv/bin/python bench/profile_client.py wire --client trio
    .venv/bin/python bench/profile_client.py core                 # no pipes, no threads
    .venv/bin/python bench/profile_client.py machine              # the connection machine

``wire``: connects to ``bench/fast_server.py``, first measures calls/s and the process's
CPU time per call without a profiler, then runs cProfile on the calling thread (the
sync client's reader thread is not seen by cProfile: its work shows up in the CPU per
call, and the ``core`` mode covers the protocol work it does).

``core``: the blocking ``Client`` with the server object's ``request`` /
``ensure_connected`` replaced by an in-memory echo that drives the same ``Session``
(encode, decode, events): what the sans-IO core and the client's effect loop cost per
call with no I/O and no thread hand-off at all. It patches shell internals, so it may
need updating when ``mcp_io_sync`` is refactored.

``--opcodes`` (``wire``, ``core``): also counts the Python opcodes the calling thread
executes per call, per file (200 calls under ``sys.settrace``). Exact and independent of
the machine's load: the figure to compare two revisions with on a busy VM (C code such as
json and the system calls is not in it; CPU time per call is the whole story).

``machine``: the connection machine alone (``mcp_proto.connection.Connection`` over
stdio, no shell, time a number): rounds of ``--concurrency`` ``start_call`` (each
followed by ``frames_to_send``, ``next_event`` and ``next_deadline``, as a driver does
after every input), then one read holding every answer and the events drained. Prints
the send and receive cost per call (the 10th percentile of the rounds: this VM's
speed drifts), the figures a change to the machine's hot paths moves.

To profile a commit instead of the working tree, export it and put it first on the
path: ``git archive HEAD mcp_proto mcp_io_sync mcp_io_trio | tar -x -C /tmp/src`` and
``PYTHONPATH=/tmp/src``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import resource
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = [sys.executable, os.path.join(HERE, "fast_server.py")]
TEXT = "hello, benchmark"
OPCODE_CALLS = 200  # calls traced by --opcodes (tracing is slow; the count is exact)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _report(label: str, n: int, wall: float, cpu: float) -> None:
    print(
        f"{label}: {n / wall:,.0f} calls/s, {wall / n * 1e6:.1f} us wall and "
        f"{cpu / n * 1e6:.1f} us CPU (whole process) per call"
    )


def _print_profile(prof: cProfile.Profile, n: int, top: int) -> None:
    stats = pstats.Stats(prof)
    rows = []
    for (path, line, func), (_cc, ncalls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        short = path
        for marker in ("/mcp_proto/", "/mcp_io_sync/", "/mcp_io_trio/", "/trio/", "/json/"):
            if marker in path:
                short = marker.strip("/") + "/" + path.split(marker, 1)[1]
                break
        else:
            short = os.path.basename(path) if path != "~" else "(builtin)"
        rows.append((tottime, cumtime, ncalls, f"{short}:{line}({func})"))
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows)
    print(f"cProfile of the calling thread, {total / n * 1e6:.1f} us/call profiled; top {top}:")
    print(f"{'self us/call':>12} {'cum us/call':>12} {'calls/call':>10}  function")
    for tottime, cumtime, ncalls, name in rows[:top]:
        print(f"{tottime / n * 1e6:12.2f} {cumtime / n * 1e6:12.2f} {ncalls / n:10.2f}  {name}")


def _short(path: str) -> str:
    for marker in ("/mcp_proto/", "/mcp_io_sync/", "/mcp_io_trio/", "/mcp_io_common/", "/trio/"):
        if marker in path:
            return marker.strip("/") + "/" + path.split(marker, 1)[1]
    return os.path.basename(path)


class _Opcodes:
    """Counts the Python opcodes the calling thread executes, per file (``sys.settrace``
    with ``f_trace_opcodes``): unlike time, the count does not move with this shared
    VM's load, so two revisions compare exactly. C code (json, the epoll call) is not
    counted; a Python function calling it counts its own opcodes only."""

    def __init__(self) -> None:
        from collections import Counter

        self.counts: Counter[str] = Counter()

    def _global(self, frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        return self._local

    def _local(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "opcode":
            self.counts[frame.f_code.co_filename] += 1
        return self._local

    def __enter__(self) -> _Opcodes:
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(None)

    def report(self, n: int, top: int) -> None:
        total = sum(self.counts.values())
        by_package: dict[str, int] = {}
        for path, count in self.counts.items():
            package = _short(path).split("/", 1)[0] if "/" in _short(path) else "(other)"
            by_package[package] = by_package.get(package, 0) + count
        packages = ", ".join(
            f"{name} {count / n:.0f}"
            for name, count in sorted(by_package.items(), key=lambda kv: -kv[1])
        )
        print(f"Python opcodes per call (calling thread): {total / n:.0f} ({packages})")
        print(f"top {top} files:")
        for path, count in self.counts.most_common(top):
            print(f"{count / n:10.1f}  {_short(path)}")


# ---------------------------------------------------------------------------- wire


def wire_sync(n: int, top: int, opcodes: bool = False) -> None:
    import mcp_io_sync

    print(f"profiling {mcp_io_sync.__file__}")
    with mcp_io_sync.connect(SERVER) as client:
        client.list_tools()
        for _ in range(300):
            client.call_tool("echo", {"text": TEXT})
        c0, t0 = _cpu(), time.perf_counter()
        for _ in range(n):
            client.call_tool("echo", {"text": TEXT})
        _report("mcp_io_sync, no profiler", n, time.perf_counter() - t0, _cpu() - c0)
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(n):
            client.call_tool("echo", {"text": TEXT})
        prof.disable()
        _print_profile(prof, n, top)
        if opcodes:
            with _Opcodes() as counter:
                for _ in range(OPCODE_CALLS):
                    client.call_tool("echo", {"text": TEXT})
            counter.report(OPCODE_CALLS, top)


def wire_trio(n: int, top: int, opcodes: bool = False) -> None:
    import trio

    import mcp_io_trio

    print(f"profiling {mcp_io_trio.__file__}")

    async def main() -> None:
        async with mcp_io_trio.connect(SERVER) as client:
            await client.list_tools()
            for _ in range(300):
                await client.call_tool("echo", {"text": TEXT})
            c0, t0 = _cpu(), time.perf_counter()
            for _ in range(n):
                await client.call_tool("echo", {"text": TEXT})
            _report("mcp_io_trio, no profiler", n, time.perf_counter() - t0, _cpu() - c0)
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(n):
                await client.call_tool("echo", {"text": TEXT})
            prof.disable()
            # Scheduler passes per call: each pass polls epoll once.
            passes = sum(
                v[1]
                for k, v in pstats.Stats(prof).stats.items()  # type: ignore[attr-defined]
                if k[2] == "get_events"
            )
            print(f"trio scheduler passes (epoll polls) per call: {passes / n:.1f}")
            _print_profile(prof, n, top)
            if opcodes:
                with _Opcodes() as counter:
                    for _ in range(OPCODE_CALLS):
                        await client.call_tool("echo", {"text": TEXT})
                counter.report(OPCODE_CALLS, top)

    trio.run(main)


# ---------------------------------------------------------------------------- core


def core(n: int, top: int, opcodes: bool = False) -> None:
    import mcp_io_sync
    from mcp_io_sync import _client as client_mod
    from mcp_proto._util import NEED_DATA
    from mcp_proto.session import Session
    from mcp_proto.types import Implementation

    print(f"profiling {mcp_io_sync.__file__} (in-memory transport)")
    tools = {
        "tools": [
            {
                "name": "echo",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
            }
        ]
    }
    session = Session(client_info=Implementation("bench", "0"), capabilities={})
    rid = session.start_handshake(now=0.0, timeout=None)
    session.data_to_send()
    init = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}
    session.receive_message(json.dumps({"jsonrpc": "2.0", "id": rid, "result": init}))
    while session.next_event() is not NEED_DATA:
        pass
    session.complete_handshake(init)
    session.data_to_send()

    def request(self: Any, method: str, params: Any = None, **_: Any) -> Any:
        # What the shell and its reader thread do with the session, minus pipes/threads;
        # the "server" side is one json.loads + json.dumps.
        request_id = session.send_request(method, params, now=time.monotonic(), timeout=60.0)
        frames = session.data_to_send()
        b"".join(f + b"\n" for f in frames)
        req = json.loads(frames[0])
        result = (
            tools
            if method == "tools/list"
            else {"content": [{"type": "text", "text": req["params"]["arguments"]["text"]}]}
        )
        reply = {"jsonrpc": "2.0", "id": request_id, "result": result}
        session.receive_message(json.dumps(reply, separators=(",", ":")).encode())
        events: list[Any] = []
        while (event := session.next_event()) is not NEED_DATA:
            events.append(event)
        return events[0].result

    def ensure_connected(self: Any) -> Any:
        return session.server

    server_classes = {
        cls
        for cls in vars(client_mod).values()
        if isinstance(cls, type) and hasattr(cls, "request") and hasattr(cls, "ensure_connected")
    }
    for cls in server_classes:
        cls.request = request
        cls.ensure_connected = ensure_connected
    client = mcp_io_sync.Client([{"command": "true", "args": []}])
    client.list_tools()
    for _ in range(1000):
        client.call_tool("echo", {"text": TEXT})
    c0, t0 = _cpu(), time.perf_counter()
    for _ in range(n):
        client.call_tool("echo", {"text": TEXT})
    _report("in-memory core + effect loop, no profiler", n, time.perf_counter() - t0, _cpu() - c0)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        client.call_tool("echo", {"text": TEXT})
    prof.disable()
    _print_profile(prof, n, top)
    if opcodes:
        with _Opcodes() as counter:
            for _ in range(OPCODE_CALLS):
                client.call_tool("echo", {"text": TEXT})
        counter.report(OPCODE_CALLS, top)


def machine(rounds: int, concurrency: int) -> None:
    from mcp_proto._util import NEED_DATA
    from mcp_proto.config import ServerConfig
    from mcp_proto.connection import Connection, Write
    from mcp_proto.limits import Limits
    from mcp_proto.types import Implementation

    config = ServerConfig(type="stdio", command=("server",), protocol="legacy")
    conn = Connection(
        config,
        name="bench",
        client_info=Implementation("bench", "0"),
        capabilities=lambda: {},
        limits=Limits(),
        random=lambda: 0.5,
    )
    conn.connect(0.0)
    conn.frames_to_send()  # OpenTransport
    conn.transport_opened(0.0)
    (write,) = [f for f in conn.frames_to_send() if isinstance(f, Write)]
    init = json.loads(write.messages[0])
    result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}}
    reply = {"jsonrpc": "2.0", "id": init["id"], "result": result}
    conn.receive_data(json.dumps(reply).encode() + b"\n", 0.0)
    conn.frames_to_send()
    while conn.next_event() is not NEED_DATA:
        pass
    params = {"name": "echo", "arguments": {"text": TEXT}}
    answer = b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}\n'
    send: list[float] = []
    receive: list[float] = []
    for r in range(rounds + 20):
        written = []
        t0 = time.perf_counter()
        for _ in range(concurrency):
            conn.start_call("tools/call", params, now=0.0)
            written.append(conn.frames_to_send())
            conn.next_event()
            conn.next_deadline()
        t1 = time.perf_counter()
        ids = [json.loads(f.messages[0])["id"] for frames in written for f in frames]
        data = b"".join(answer % (i, TEXT.encode()) for i in ids)
        t2 = time.perf_counter()
        conn.receive_data(data, 0.0)
        answered = 0
        while conn.next_event() is not NEED_DATA:
            answered += 1
        conn.next_deadline()
        t3 = time.perf_counter()
        assert answered == concurrency, answered
        if r >= 20:  # (warm-up rounds left out)
            send.append((t1 - t0) / concurrency * 1e6)
            receive.append((t3 - t2) / concurrency * 1e6)
    send.sort()
    receive.sort()
    print(
        f"connection machine, rounds of {concurrency} calls then one read of their answers:"
        f" send {send[len(send) // 10]:.2f} us/call, receive {receive[len(receive) // 10]:.2f}"
        f" us/call (10th percentile of {rounds} rounds)"
    )


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("mode", choices=["wire", "core", "machine"])
    p.add_argument("--client", choices=["sync", "trio"], default="sync")
    p.add_argument("--n", type=int, default=5000, help="calls per measurement")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--concurrency", type=int, default=100, help="machine: calls per round")
    p.add_argument(
        "--opcodes",
        action="store_true",
        help="wire, core: also count the Python opcodes per call, per file (exact, load-free)",
    )
    args = p.parse_args()
    if args.mode == "machine":
        machine(args.n // 10, args.concurrency)
    elif args.mode == "core":
        core(args.n * 4, args.top, args.opcodes)
    elif args.client == "sync":
        wire_sync(args.n, args.top, args.opcodes)
    else:
        wire_trio(args.n, args.top, args.opcodes)


if __name__ == "__main__":
    main()
