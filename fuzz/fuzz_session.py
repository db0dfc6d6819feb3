#!/usr/bin/env python3
"""Fuzz the stdio framer, the Session and the server-request handlers together.

The invariant (after h11's ``fuzz/afl-server.py``): whatever bytes a server writes, the
core either turns them into events or raises a typed error, nothing else. Concretely,
for every input:

* the only exception allowed out of the framer is ``LineTooLongError``; ``Session``
  and ``serve_request`` never raise on peer input at all;
* feeding the input as one chunk and byte by byte gives the same events and the same
  outbound messages;
* every outbound message is one well-formed JSON-RPC text without a raw newline;
* after a final ``handle_timeout`` + ``connection_lost`` nothing is left pending.

Run it with atheris (coverage-guided) when it is installed, else with a seeded loop
of random and mutated inputs::

    python fuzz/fuzz_session.py                        # atheris if importable
    python fuzz/fuzz_session.py --plain -n 100000 --seed 1

See fuzz/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Iterable, Sequence
from typing import Any

# The shared fuzzing helpers sit beside this file (it also runs as a plain script).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _fuzzlib import Target, drive_host_op

from mcp_proto import NEED_DATA
from mcp_proto.errors import LineTooLongError, MCPError, TransportError
from mcp_proto.events import (
    LogMessage,
    MessageDiscarded,
    NotificationReceived,
    ProgressReceived,
    RequestFailed,
    ResponseReceived,
    ServerRequest,
)
from mcp_proto.handlers import Handlers, Reply, serve_request
from mcp_proto.limits import Limits
from mcp_proto.session import Session, State
from mcp_proto.stdio import EOF, LineFramer
from mcp_proto.types import Implementation, Root

BIG_LINE = 1 << 20
SMALL_LINE = 64  # a second run with a small bound exercises the overflow paths

SERVER_CAPS = {"tools": {}, "logging": {}, "resources": {"subscribe": True}}

# What a server might plausibly send: the fuzzer starts from these and mutates them.
SEEDS: tuple[bytes, ...] = (
    b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ok"}]}}',
    b'{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"t","inputSchema":{}}]}}',
    b'{"jsonrpc":"2.0","id":4,"error":{"code":-32022,"message":"v","data":{"s":[1]}}}',
    b'{"jsonrpc":"2.0","id":5,"error":"boom"}',
    b'{"jsonrpc":"2.0","method":"notifications/progress",'
    b'"params":{"progressToken":"p2","progress":1,"total":3,"message":"m"}}',
    b'{"jsonrpc":"2.0","method":"notifications/message",'
    b'"params":{"level":"warning","logger":"db\\n","data":"a\\nFAKE LOG LINE"}}',
    b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}',
    b'{"jsonrpc":"2.0","id":"s1","method":"ping"}',
    b'{"jsonrpc":"2.0","id":"s2","method":"roots/list"}',
    b'{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":'
    b'[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":5}}',
    b'{"jsonrpc":"2.0","id":8,"method":"elicitation/create","params":{"mode":"form",'
    b'"message":"m","requestedSchema":{"type":"object","properties":'
    b'{"n":{"type":"string","default":"x"}}}}}',
    b'{"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{"mode":"url",'
    b'"url":"https://example.com","elicitationId":"e"}}',
    b'[{"jsonrpc":"2.0","id":3,"result":{}},{"jsonrpc":"2.0","method":"x"}]',
    b'{"jsonrpc":"2.0","id":true,"result":{}}',
    b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
    b"not json",
    b"\xff\xfe",
    b"[]",
)

_HANDLERS = Handlers(
    sampling=lambda messages, prefs, system, max_tokens, params: {"content": "fuzzed"},
    elicitation=lambda message, schema: {"n": "answer"},
    roots=lambda: [Root("file:///fuzz")],
)


def _make_session(max_line_size: int) -> Session:
    """A session in READY with a few requests in flight (ids 2..5)."""
    session = Session(
        client_info=Implementation(name="fuzz", version="0"),
        capabilities={},
        limits=Limits(max_line_size=max_line_size, max_log_message=200),
    )
    rid = session.start_handshake(now=0.0, timeout=None)
    session.receive_message(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "result": {"protocolVersion": "2025-11-25", "capabilities": SERVER_CAPS},
            }
        )
    )
    event = session.next_event()
    assert isinstance(event, ResponseReceived)
    session.complete_handshake(event.result)
    session.send_request("tools/call", {"name": "t"}, now=0.0, timeout=10.0, want_progress=True)
    session.send_request("tools/list", None, now=0.0, timeout=None)
    session.send_request("ping", None, now=0.0, timeout=5.0)
    session.send_request(
        "tools/call", {"name": "t", "_meta": {"progressToken": 7}}, now=0.0, timeout=None
    )
    session.data_to_send()
    return session


def _serve(session: Session, event: ServerRequest) -> tuple[Any, ...]:
    """Answer a server request as a shell would (host handlers are plain functions)."""
    reply = drive_host_op(serve_request(_HANDLERS, event.method, event.params, server="fuzz"))
    assert isinstance(reply, Reply)
    if reply.code is not None:
        assert reply.message is not None
        session.send_error_response(event.request_id, reply.code, reply.message)
    else:
        session.send_response(event.request_id, reply.result)
    return ("reply", event.request_id, reply.code, json.dumps(reply.result, sort_keys=True))


def _summary(event: object) -> tuple[Any, ...]:
    """A comparable description of an event (exceptions compare by type and text)."""
    if isinstance(event, RequestFailed):
        return (
            "failed",
            event.request_id,
            event.method,
            type(event.error).__name__,
            str(event.error),
        )
    if isinstance(event, ResponseReceived):
        return (
            "response",
            event.request_id,
            event.method,
            json.dumps(event.result, sort_keys=True),
        )
    if isinstance(event, ProgressReceived):
        return (
            "progress",
            event.request_id,
            repr(event.progress),
            repr(event.total),
            event.message,
        )
    if isinstance(event, LogMessage):
        assert "\n" not in event.text and "\r" not in event.text
        assert event.logger is None or "\n" not in event.logger
        return ("log", event.level, event.logger, event.text)
    if isinstance(event, MessageDiscarded):
        return ("discarded", event.reason)
    if isinstance(event, NotificationReceived):
        return ("notification", event.method, json.dumps(event.params, sort_keys=True))
    if isinstance(event, ServerRequest):
        return ("request", event.request_id, event.method)
    raise AssertionError(f"not an event: {event!r}")


def _drain(session: Session, trace: list[tuple[Any, ...]]) -> None:
    while True:
        event = session.next_event()
        if event is NEED_DATA:
            return
        trace.append(_summary(event))
        if isinstance(event, ServerRequest):
            trace.append(_serve(session, event))


def _check_outbox(session: Session, trace: list[tuple[Any, ...]]) -> None:
    for item in session.data_to_send():
        assert isinstance(item, bytes) and b"\n" not in item
        message = json.loads(item)
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0"
        trace.append(("sent", item))


def run(chunks: Iterable[bytes], max_line_size: int = BIG_LINE) -> list[tuple[Any, ...]]:
    """Feed ``chunks`` through a framer into a fresh session; return the trace.

    Raises only if the invariant is broken (any exception but LineTooLongError).
    """
    session = _make_session(max_line_size)
    framer = LineFramer(max_line_size)
    trace: list[tuple[Any, ...]] = []

    def pump() -> None:
        while True:
            line = framer.next_line()
            if line is NEED_DATA or isinstance(line, EOF):
                return
            assert isinstance(line, bytes)
            assert b"\n" not in line and len(line) <= max_line_size
            session.receive_message(line)
            _drain(session, trace)
            _check_outbox(session, trace)

    try:
        for chunk in chunks:
            framer.receive_data(chunk)
            pump()
        framer.receive_data(b"")
        pump()
    except LineTooLongError as exc:
        assert isinstance(exc, MCPError)
        trace.append(("line too long",))
    # End of stream: expire what is due, then the connection goes.
    session.handle_timeout(1e9)
    _drain(session, trace)
    session.connection_lost(TransportError("end of fuzz input"))
    _drain(session, trace)
    _check_outbox(session, trace)
    assert session.state is State.CLOSED
    assert session.pending_count == 0 and session.next_deadline() is None
    return trace


def check_one(data: bytes) -> None:
    """The invariant for one input: whole and byte by byte agree, nothing untyped escapes."""
    for limit in (BIG_LINE, SMALL_LINE):
        whole = run([data] if data else [], limit)
        bytewise = run([data[i : i + 1] for i in range(len(data))], limit)
        assert whole == bytewise, "chunking changed what the session saw"


# ---------------------------------------------------------------- input generation


_KEYS = (
    "id",
    "method",
    "params",
    "result",
    "error",
    "code",
    "message",
    "data",
    "progressToken",
    "progress",
    "total",
    "level",
    "logger",
    "mode",
    "action",
    "content",
    "messages",
    "role",
    "type",
    "_meta",
    "requestedSchema",
)
_PARAM_KEYS = (
    "progressToken",
    "progress",
    "total",
    "message",
    "level",
    "logger",
    "data",
    "mode",
    "messages",
    "requestedSchema",
    "url",
    "tools",
)


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, 1, 2, 3, 5, 7, -1, 2**53, 10**30, rng.randrange(-100, 100)])
    if kind == 3:
        return rng.choice([0.5, -1.5, 1e308, 1e-300])
    if kind == 4:
        return rng.choice(["", "p2", "s1", "x" * 100, "a\nb", "\u2603", "\x00", "2025-11-25"])
    if kind == 5:
        return [_random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(_KEYS): _random_json(rng, depth + 1) for _ in range(rng.randrange(5))}


def _random_message(rng: random.Random) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": rng.choice(["2.0", "2.0", "2.0", "1.0", 2])}
    shape = rng.randrange(4)
    if shape in (0, 1):
        msg["method"] = rng.choice(
            [
                "ping",
                "roots/list",
                "sampling/createMessage",
                "elicitation/create",
                "notifications/progress",
                "notifications/message",
                "notifications/cancelled",
                "x/unknown",
            ]
        )
        if rng.random() < 0.8:
            if rng.random() < 0.3:
                msg["params"] = _random_json(rng, 1)
            else:
                keys = rng.sample(_PARAM_KEYS, rng.randrange(5))
                msg["params"] = {k: _random_json(rng, 2) for k in keys}
        if shape == 0:
            msg["id"] = rng.choice([1, 2, 3, 4, 5, 99, "s", True, None, 1.5])
    else:
        msg["id"] = rng.choice([1, 2, 3, 4, 5, 6, 99, "2", True, None])
        if shape == 2:
            msg["result"] = _random_json(rng, 1)
        else:
            msg["error"] = rng.choice(
                [
                    _random_json(rng, 1),
                    {"code": rng.choice([-32020, -32021, -32022, -1]), "message": "m"},
                ]
            )
    return json.dumps(msg).encode()


def _mutate(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randrange(1, 5)):
        op = rng.randrange(6)
        pos = rng.randrange(len(buf) + 1)
        if op == 0 and buf:
            buf[min(pos, len(buf) - 1)] = rng.randrange(256)
        elif op == 1:
            buf[pos:pos] = bytes([rng.choice(b'\n\r{}[]":,\\0 \xff')])
        elif op == 2 and buf:
            del buf[pos : pos + rng.randrange(1, 8)]
        elif op == 3:
            other = rng.choice(SEEDS)
            cut = rng.randrange(len(other) + 1)
            buf[pos:] = other[cut:]
        elif op == 4:
            buf[pos:pos] = rng.choice([b"\n", b"\r\n", b"\n\n", b"  "])
        else:
            buf[pos:pos] = rng.choice(SEEDS)
    return bytes(buf)


def generate(rng: random.Random) -> bytes:
    """One fuzz input: a few newline-separated messages, some of them damaged."""
    parts = []
    for _ in range(rng.randrange(1, 6)):
        choice = rng.random()
        if choice < 0.35:
            part = rng.choice(SEEDS)
        elif choice < 0.65:
            part = _random_message(rng)
        elif choice < 0.9:
            part = _mutate(rng, rng.choice(SEEDS))
        else:
            part = bytes(rng.randrange(256) for _ in range(rng.randrange(40)))
        parts.append(part)
    sep = rng.choice([b"\n", b"\r\n", b"\n"])
    data = sep.join(parts)
    return data + sep if rng.random() < 0.8 else data


def run_plain(iterations: int, seed: int) -> int:
    """The no-atheris fallback: ``iterations`` seeded inputs. Returns how many ran."""
    rng = random.Random(seed)
    for seed_input in SEEDS:
        check_one(seed_input + b"\n")
    for i in range(iterations):
        data = generate(rng)
        try:
            check_one(data)
        except Exception:
            sys.stderr.write(f"invariant broken at iteration {i} (seed {seed}); input:\n{data!r}\n")
            raise
    return iterations


#: The target record for ``fuzz/run.py`` and the corpus test (the same ``check_one``).
TARGET = Target(
    name="session",
    check=check_one,
    seeds=tuple(seed + b"\n" for seed in SEEDS),
    max_len=4096,
    description="stdio bytes -> framer -> Session -> serve_request -> replies",
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plain", action="store_true", help="never use atheris")
    parser.add_argument("-n", "--iterations", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args, rest = parser.parse_known_args(argv)
    if not args.plain:
        try:
            import atheris  # type: ignore[import-not-found]
        except ImportError:
            print("atheris is not installed: running the plain random loop", file=sys.stderr)
        else:

            def test_one_input(data: bytes) -> None:
                check_one(data)

            for seed_input in SEEDS:
                check_one(seed_input + b"\n")
            atheris.Setup([sys.argv[0], *rest], test_one_input)
            atheris.Fuzz()
            return 0
    done = run_plain(args.iterations, args.seed)
    print(f"{done} inputs, invariant held (seed {args.seed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
