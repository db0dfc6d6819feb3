"""Trio shell: the cheap request path keeps Trio's semantics.

The server object drives the core machine (``mcp_proto.connection``): a stdio request is
written without a scheduler pass, the caller parks without a ``trio.Event`` or a cancel
scope, and one timer task per server hands the machine its deadlines. These tests pin
what must not change: every call is a checkpoint (also when its answer is already
there), a cancelled call is cancelled in the machine, which tells the server (and a
call in an already cancelled scope sends nothing), timeouts fire at their own deadline
and send ``notifications/cancelled`` first, and concurrent large and small writes stay
whole.

The first group uses an in-memory transport (the machine's writes answered synchronously
or by the test) to reach each branch deterministically; then a real stdio server; then
HTTP (a cancelled call over HTTP) and a cancelled caller whose connect waits for the
previous process to stop.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

import mcp_io_trio
from mcp_io_trio._base import BaseServer
from mcp_proto import errors
from mcp_proto.config import config_from_dict
from mcp_proto.limits import Limits
from mcp_proto.types import Implementation

from ._http_support import hostile_http_server
from .conftest import hostile, text_of

RECORDING: list[str] = [sys.executable, str(Path(__file__).with_name("recording_server.py"))]

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "loopback", "version": "0"},
}


class _Loopback(BaseServer):
    """A stdio transport whose writes never yield (like the pipe's fast path): it
    records what the machine writes and may answer a request on the spot."""

    type = "loopback"

    def __init__(self, nursery: trio.Nursery, **kwargs: Any) -> None:
        super().__init__(
            # The handshake era: this loopback scripts initialize (issue 10's probe
            # has its own suites).
            config_from_dict({"command": ["unused"], "read_timeout": 30, "protocol": "legacy"}),
            name="loopback",
            client_info=Implementation("test", "0"),
            # Roots declared: the tests send notifications/roots/list_changed, which
            # a session without the capability drops (CAP-5).
            capabilities=lambda: {"roots": {"listChanged": True}},
            limits=Limits(),
            logger=logging.getLogger("test_trio_fastpath"),
            on_event=lambda server, event: None,
            nursery=lambda: nursery,
        )
        self.sent: list[dict[str, Any]] = []
        #: called with each request sent after the handshake; returns the result to
        #: deliver at once, or None to leave it pending
        self.answer: Callable[[dict[str, Any]], Any] = lambda msg: None

    async def _open_transport(self) -> None:
        pass

    def _detach_transport(self, graceful: bool) -> Callable[[], Awaitable[None]]:
        return trio.lowlevel.checkpoint

    def _write(self, messages: list[bytes]) -> bool:
        for data in messages:
            msg = json.loads(data)
            self.sent.append(msg)
            if "id" not in msg or "method" not in msg:
                continue
            result = INIT_RESULT if msg["method"] == "initialize" else self.answer(msg)
            if result is not None:
                # Fed now, dispatched by the driver once it performed the frames.
                self.respond(msg["id"], result, dispatch=False)
        return False

    def respond(self, request_id: Any, result: Any, *, dispatch: bool = True) -> None:
        reply = {"jsonrpc": "2.0", "id": request_id, "result": result}
        self._conn.receive_data(json.dumps(reply).encode() + b"\n", trio.current_time())
        if dispatch:
            self._pump_nowait()

    def requests(self, method: str = "ping") -> list[dict[str, Any]]:
        return [m for m in self.sent if m.get("method") == method and "id" in m]

    def cancellations(self) -> list[dict[str, Any]]:
        return [m["params"] for m in self.sent if m.get("method") == "notifications/cancelled"]


@pytest.mark.trio
async def test_answer_already_there_is_still_a_checkpoint() -> None:
    async with trio.open_nursery() as nursery:
        server = _Loopback(nursery)
        await server.ensure_connected()
        server.answer = lambda msg: {"n": 1}
        with trio.testing.assert_checkpoints():
            assert await server.request("ping") == {"n": 1}
        await server.cleanup()


@pytest.mark.trio
async def test_cancelled_while_the_answer_is_already_there() -> None:
    """The scope is cancelled after the request went out and its answer arrived, but
    before the caller's checkpoint: the call raises Cancelled (the answer is dropped),
    and nothing more is sent (the request is no longer pending)."""
    async with trio.open_nursery() as nursery:
        server = _Loopback(nursery)
        await server.ensure_connected()
        with trio.CancelScope() as scope:

            def answer_then_cancel(msg: dict[str, Any]) -> Any:
                scope.cancel()
                return {"n": 1}

            server.answer = answer_then_cancel
            await server.request("ping")
        assert scope.cancelled_caught
        assert len(server.requests()) == 1
        assert server.cancellations() == []
        assert server._waiters == {}
        server.answer = lambda msg: {"n": 2}
        assert await server.request("ping") == {"n": 2}
        await server.cleanup()


@pytest.mark.trio
async def test_cancelled_while_waiting_sends_notifications_cancelled() -> None:
    async with trio.open_nursery() as nursery:
        server = _Loopback(nursery)
        await server.ensure_connected()
        with trio.move_on_after(0.2) as scope:
            await server.request("ping")
        assert scope.cancelled_caught
        [request] = server.requests()
        assert server.cancellations() == [
            {"requestId": request["id"], "reason": "Request cancelled by the client"}
        ]
        assert server._waiters == {}
        server.respond(request["id"], {"late": True})  # discarded, nobody waits for it
        server.answer = lambda msg: {"n": 2}
        assert await server.request("ping") == {"n": 2}
        await server.cleanup()


@pytest.mark.trio
async def test_call_in_an_already_cancelled_scope_sends_nothing() -> None:
    async with trio.open_nursery() as nursery:
        server = _Loopback(nursery)
        await server.ensure_connected()
        server.answer = lambda msg: {"n": 1}
        with trio.CancelScope() as scope:
            scope.cancel()
            await server.request("ping")
        assert scope.cancelled_caught
        assert server.requests() == []
        assert server.cancellations() == []
        with trio.CancelScope() as scope:
            scope.cancel()
            await server.notify("notifications/roots/list_changed")
        assert scope.cancelled_caught
        assert [m["method"] for m in server.sent] == [
            "initialize",
            "notifications/initialized",
        ]
        await server.cleanup()


@pytest.mark.trio
async def test_notify_is_a_checkpoint() -> None:
    async with trio.open_nursery() as nursery:
        server = _Loopback(nursery)
        await server.ensure_connected()
        with trio.testing.assert_checkpoints():
            await server.notify("notifications/roots/list_changed")
        assert server.sent[-1]["method"] == "notifications/roots/list_changed"
        await server.cleanup()


@pytest.mark.trio
async def test_each_request_times_out_at_its_own_deadline(autojump_clock: Any) -> None:
    """One timer task serves every request: a later request with a shorter timeout
    re-arms it earlier; the cancellation goes out before the caller sees the timeout."""
    failed: dict[str, float] = {}
    ids: dict[str, Any] = {}
    async with trio.open_nursery() as nursery:
        server = _Loopback(nursery)
        await server.ensure_connected()
        t0 = trio.current_time()

        async def call(label: str, timeout: float) -> None:
            with pytest.raises(errors.RequestTimeoutError):
                await server.request("ping", timeout=timeout)
            failed[label] = trio.current_time() - t0
            expected = {"requestId": ids[label], "reason": "Request timed out"}
            assert expected in server.cancellations()

        async def answered() -> None:
            assert await server.request("ping", timeout=2.0) == {"ok": True}

        async with trio.open_nursery() as calls:
            calls.start_soon(call, "long", 10.0)
            await trio.sleep(0.5)
            ids["long"] = server.requests()[-1]["id"]
            calls.start_soon(call, "short", 1.0)
            await trio.sleep(0.1)
            ids["short"] = server.requests()[-1]["id"]
            calls.start_soon(answered)
            await trio.sleep(0.1)
            server.respond(server.requests()[-1]["id"], {"ok": True})  # before its deadline
        assert 1.5 <= failed["short"] < 1.6
        assert 10.0 <= failed["long"] < 10.1
        assert len(server.cancellations()) == 2
        assert server._waiters == {}
        await server.cleanup()
    assert not server._timer_running


@pytest.mark.trio
async def test_the_timer_task_does_not_outlive_cleanup() -> None:
    """A far deadline must not keep the nursery open once the server is cleaned up."""
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            server = _Loopback(nursery)
            await server.ensure_connected()

            async def answer_soon() -> None:
                await trio.sleep(0.05)
                server.respond(server.requests()[-1]["id"], {})

            nursery.start_soon(answer_soon)
            assert await server.request("ping", timeout=3600) == {}
            assert server._timer_running
            await server.cleanup()
    assert not server._timer_running


# ------------------------------------------------------------------ real stdio server


def test_stdio_calls_and_notifications_are_checkpoints() -> None:
    async def main() -> None:
        with trio.fail_after(30):
            async with mcp_io_trio.connect(RECORDING) as c:
                await c.list_tools()
                for _ in range(3):
                    with trio.testing.assert_checkpoints():
                        await c.ping()
                with trio.testing.assert_checkpoints():
                    await c.send_notification("notifications/custom", {"x": 1})
                with trio.testing.assert_checkpoints():
                    result = await c.call_tool("notifications")
                notes = json.loads(result["content"][0]["text"])
                assert {"method": "notifications/custom", "params": {"x": 1}} in notes

    trio.run(main)


def test_stdio_call_in_a_cancelled_scope_sends_nothing(tmp_path: Path) -> None:
    """Against a server that logs every notifications/cancelled: a call whose scope is
    already cancelled neither sends its request nor has anything to cancel."""
    log = tmp_path / "cancelled.log"

    async def main() -> None:
        with trio.fail_after(30):
            async with mcp_io_trio.connect(hostile("cancel_log", str(log))) as c:
                await c.list_tools()
                with trio.CancelScope() as scope:
                    scope.cancel()
                    await c.call_tool("t")
                assert scope.cancelled_caught
                # A cancelled call whose request did go out is cancelled politely;
                # the server logs it, which also shows the first one logged nothing.
                with trio.move_on_after(0.2) as scope:
                    await c.call_tool("t")
                assert scope.cancelled_caught
                with trio.move_on_after(10):
                    while not (log.exists() and "CANCELLED" in log.read_text()):
                        await trio.sleep(0.02)
                assert await c.ping() == {}

    trio.run(main)
    [line] = log.read_text(encoding="utf-8").splitlines()
    note = json.loads(line.split(" ", 1)[1])
    assert note["params"]["reason"] == "Request cancelled by the client"


def test_stdio_concurrent_large_and_small_writes_stay_whole() -> None:
    """Large frames (write lock, partial writes) and small ones (written at once when
    the lock is free) from many tasks: every request reaches the server intact."""

    async def main() -> None:
        with trio.fail_after(60):
            async with mcp_io_trio.connect(RECORDING) as c:
                await c.list_tools()
                results: dict[int, Any] = {}

                async def one(i: int) -> None:
                    size = 300_000 if i % 3 == 0 else 10
                    await c.send_notification("notifications/custom", {"i": i, "pad": "x" * size})
                    results[i] = await c.call_tool("init", {"i": i, "pad": "y" * size})

                async with trio.open_nursery() as nursery:
                    for i in range(30):
                        nursery.start_soon(one, i)
                assert sorted(results) == list(range(30))
                notes = json.loads((await c.call_tool("notifications"))["content"][0]["text"])
                got = sorted(
                    n["params"]["i"] for n in notes if n["method"] == "notifications/custom"
                )
                assert got == list(range(30))
                for n in notes:
                    if n["method"] == "notifications/custom":
                        i = n["params"]["i"]
                        assert n["params"]["pad"] == "x" * (300_000 if i % 3 == 0 else 10)

    trio.run(main)


def test_stdio_a_gathering_caller_cancelled_still_writes_the_batch() -> None:
    """With calls in flight, a request's write waits one scheduler pass and takes the
    frames of the batch's other tasks with it (``StdioServer._write`` in
    mcp_io_trio/_stdio.py). The second caller of a batch is the one that waits (the
    first writes at once, then parks for its answer); cancelled during that pass, it
    still writes the batch (shielded), so the other calls complete, and its own call is
    cancelled politely (its request went out)."""

    async def main() -> None:
        with trio.fail_after(30):
            async with mcp_io_trio.connect(RECORDING) as c:
                await c.list_tools()
                scopes: list[trio.CancelScope] = []
                done: dict[int, Any] = {}

                async def one(i: int) -> None:
                    with trio.CancelScope() as scope:
                        scopes.append(scope)
                        if len(scopes) == 3:
                            scopes[1].cancel()  # the gathering caller, parked meanwhile
                        done[i] = await c.call_tool("init")

                async with trio.open_nursery() as nursery:
                    for i in range(20):
                        nursery.start_soon(one, i)
                assert scopes[1].cancelled_caught
                assert len(done) == 19
                assert all(r.is_error is False for r in done.values())
                notes = json.loads((await c.call_tool("notifications"))["content"][0]["text"])
                methods = [n["method"] for n in notes]
                assert methods == ["notifications/initialized", "notifications/cancelled"]

    trio.run(main)


def test_stdio_more_gathered_frames_than_one_writev_takes() -> None:
    """2,000 tasks calling at once: the gathered frames outnumber the buffers one
    ``writev`` takes (IOV_MAX, 1,024 on Linux), so the flush writes them in turns."""

    async def main() -> None:
        with trio.fail_after(60):
            async with mcp_io_trio.connect(RECORDING) as c:
                await c.list_tools()
                done: list[Any] = []

                async def one() -> None:
                    done.append(await c.call_tool("init"))

                async with trio.open_nursery() as nursery:
                    for _ in range(2000):
                        nursery.start_soon(one)
                assert len(done) == 2000
                assert all(r.is_error is False for r in done)

    trio.run(main)


def test_stdio_frames_gathered_when_the_client_closes_are_written(tmp_path: Path) -> None:
    """With calls in flight, a notification's write waits one scheduler pass and takes
    the batch's other frames with it (``StdioServer._write``); the other senders'
    ``send_notification`` returns meanwhile. If one of them then closes the client, what
    was gathered is still written before stdin is closed, as a frame written at once
    would have been: every notification whose send returned reaches the server. A tap
    shows what reached it before end of input."""
    log = tmp_path / "tap.log"
    tap = [sys.executable, str(Path(__file__).with_name("stdio_tap.py")), str(log), "--"]
    returned: list[int] = []

    async def main() -> None:
        with trio.fail_after(30):
            async with mcp_io_trio.connect(tap + RECORDING) as c:
                await c.list_tools()
                started: list[int] = []

                async def one(i: int) -> None:
                    started.append(i)
                    if len(started) == 1:  # in flight: the senders after it gather
                        with contextlib.suppress(errors.MCPError):
                            await c.call_tool("init")
                        return
                    with contextlib.suppress(errors.MCPError):
                        await c.send_notification("notifications/custom", {"i": i})
                        returned.append(i)
                        if len(returned) == 1:
                            await c.close()  # the first to return: nothing written yet

                async with trio.open_nursery() as nursery:
                    for i in range(4):
                        nursery.start_soon(one, i)

    trio.run(main)
    entries = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    sent = [json.loads(e["line"]) for e in entries if e["dir"] == "c2s" and "line" in e]
    customs = [m["params"]["i"] for m in sent if m.get("method") == "notifications/custom"]
    assert returned
    assert set(returned) <= set(customs), (returned, customs)


STALLING_SERVER = r"""
import json, os, sys, time
buf = b""
corrupt = 0
notes = []
def send(obj):
    os.write(1, json.dumps(obj).encode() + b"\n")
while True:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    buf += chunk
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        try:
            msg = json.loads(line)
        except ValueError:
            corrupt += 1
            continue
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            if method == "notifications/stall":
                time.sleep(1.0)  # reads nothing meanwhile: the client's pipe fills up
            elif method == "notifications/x":
                notes.append(msg["params"])
            continue
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "stalling", "version": "0"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "stats", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            ok = all(n["pad"] == "z" * 10000 for n in notes)
            text = json.dumps({"corrupt": corrupt, "notes": len(notes), "intact": ok})
            result = {"content": [{"type": "text", "text": text}]}
        else:
            result = {}
        send({"jsonrpc": "2.0", "id": rid, "result": result})
"""


def test_stdio_cancelled_mid_frame_leaves_no_corrupt_line(tmp_path: Path) -> None:
    """Frames larger than PIPE_BUF can be written in part when the pipe is nearly full.
    If the caller is cancelled then, the rest of the frame still goes out (shielded,
    bounded): the server never reads half a message glued to the next one."""
    script = tmp_path / "stalling_server.py"
    script.write_text(STALLING_SERVER, encoding="utf-8")

    async def main() -> None:
        with trio.fail_after(30):
            async with mcp_io_trio.connect([sys.executable, str(script)]) as c:
                await c.list_tools()
                await c.send_notification("notifications/stall")
                sent = 0
                with trio.move_on_after(0.3) as scope:
                    while True:  # fills the pipe, then blocks in a partial write
                        await c.send_notification("notifications/x", {"pad": "z" * 10000})
                        sent += 1
                assert scope.cancelled_caught
                assert sent > 3
                for _ in range(3):  # more frames after the interrupted one
                    await c.send_notification("notifications/x", {"pad": "z" * 10000})
                    sent += 1
                stats = json.loads((await c.call_tool("stats"))["content"][0]["text"])
                assert stats == {"corrupt": 0, "notes": sent, "intact": True}

    trio.run(main)


# ------------------------------------------------------------------ HTTP


@pytest.mark.parametrize("mode", ["slow", "slow+sse"])
def test_http_cancelled_call_is_cancelled_in_the_machine(mode: str) -> None:
    """A Trio caller that gives up on an HTTP call (its scope is cancelled) cancels
    the call in the machine: the server gets notifications/cancelled for that request,
    the held exchange is let go, and the connection stays usable."""
    with hostile_http_server(mode) as peer:
        rec = peer.recorder

        async def main() -> None:
            with trio.fail_after(30):
                async with mcp_io_trio.connect(peer.url, read_timeout=10) as c:
                    await c.list_tools()
                    with trio.move_on_after(0.3) as scope:
                        await c.call_tool("t")
                    assert scope.cancelled_caught
                    assert await c.ping() == {}

        trio.run(main)
        [call] = rec.posts("tools/call")
        assert rec.wait_for(lambda r: bool(r.cancelled()), timeout=5)
        assert rec.cancelled() == [
            {"requestId": call.rpc_id, "reason": "Request cancelled by the client"}
        ]
        assert rec.wait_for(
            lambda r: any(n.startswith("slow: client closed") for n in r.notes), timeout=5
        ), rec.notes


def test_a_call_cancelled_while_the_old_process_stops_leaves_the_connect_going() -> None:
    """The connection is dropped (a line over the limit) and its process ignores
    SIGTERM, so stopping it takes a while; the next call has to wait for it before a new
    process starts. That caller is cancelled meanwhile: the new process still starts (the
    machine asked for it), and the call after it works."""

    async def main() -> None:
        with trio.fail_after(40):
            async with mcp_io_trio.connect(
                hostile("sigterm,hugeline"), limits=Limits(max_line_size=1 << 20)
            ) as c:
                assert text_of(await c.call_tool("t", {"ok": True})) == "ok"
                with pytest.raises(errors.LineTooLongError):
                    await c.call_tool("t", {"size": (1 << 20) + 16384})
                with trio.move_on_after(0.3) as scope:
                    await c.call_tool("t", {"ok": True})
                assert scope.cancelled_caught
                assert text_of(await c.call_tool("t", {"ok": True})) == "ok"

    trio.run(main)
