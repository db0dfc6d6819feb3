#!/usr/bin/env python3
"""A scripted, misbehaving MCP stdio server for tests (stdlib only).

Speaks real newline-delimited JSON-RPC on stdin/stdout and misbehaves according to its mode::

    python tests/servers/hostile_stdio.py MODE [ARG]
    python tests/servers/hostile_stdio.py garbage,requests     # modes can be combined with commas

Baseline (every mode unless it says otherwise): ``initialize`` gets protocolVersion 2025-11-25,
capabilities ``{"tools": {}}``, serverInfo ``{"name": "hostile-stdio", "version": "0.0.0"}``;
notifications (``notifications/initialized`` included) are ignored; ``ping`` -> ``{}``;
``tools/list`` -> one tool ``t``; any other request -> -32601; responses from the client are only
used by the ``requests`` mode. A normal ``tools/call`` answer is ``{"content": [{"type": "text",
"text": "ok"}], "isError": false}``. stdin EOF -> exit 0. Unparseable input is ignored.

Modes (the fault happens on ``tools/call`` unless stated):

garbage         before *every* response (initialize and ping included) writes garbage lines:
                non-JSON text, invalid UTF-8, ``[]``, ``42``, ``"str"``, ``null``, ``{}``,
                ``{"jsonrpc":"2.0"}``, a blank line, a CRLF-terminated ``{}``, an invalid
                ``method`` type, an unknown notification, an ``id: null`` error, a batch array,
                and responses to unknown ids (``987654321`` and ``"hostile-unknown-id"``);
                then the real answer.
unsolicited     writes 1000 responses (results and errors) to ids never sent - random ints in
                [10**9, 2**53] and random strings, seeded so runs repeat - then the real answer.
                ``arguments.count`` overrides 1000.
hugeline        writes one 100 MiB line (a JSON-RPC *response to the call's id* whose text is
                100 MiB of "x"), streamed in 1 MiB chunks, then keeps running. A tools/call
                with ``arguments.ok == true`` gets a normal answer. ``arguments.size`` (bytes)
                overrides the line length.
logflood        before the tools/call answer writes ``arguments.size`` bytes (default 1 MiB)
                of ``y`` lines, as ``yes`` would (a server whose logging goes to stdout),
                in 1 MiB writes; then the answer.
die             exits with status 3 on tools/call, without answering.
silent          never answers tools/call (ping and everything else still answered).
flood           sends 20000 ``notifications/message`` and 20000 ``notifications/progress`` for
                unknown tokens, then the answer. ``arguments.count`` overrides 20000.
badversion      initialize answers protocolVersion "1999-01-01" (then behaves normally).
noversion       initialize result has no protocolVersion (then behaves normally).
stderr          writes 10 MB to stderr at start (before reading stdin), then behaves normally.
sigterm         ignores SIGTERM and stdin EOF (keeps sleeping); serves normally until EOF.
requests        sends the client five requests - ``ping`` (id 1), ``roots/list`` (id 2),
                ``sampling/createMessage`` (id "s-3", valid params), ``elicitation/create``
                (id "s-4", form mode, valid) and ``bogus/method`` (id 5) - waits for the five
                replies (matched by id; ``arguments.timeout`` seconds, default 10), and answers
                the call with one text block holding JSON
                ``{"by_method": {method: reply-or-null}, "replies": [{"method", "id", "reply"}]}``
                where ``reply`` is the whole JSON-RPC response object received.
                ``arguments.requests`` = ``[{"method": ..., "params": ...}, ...]`` replaces the
                default five (ids are then 1, 2, ...), e.g. to send sampling with ``tools`` or
                elicitation in ``url`` mode.
progress_after  with ``params._meta.progressToken`` T: sends progress (T, 1/2, "before"), the
                answer, then progress (T, 2/2, "after") right after the answer
                (``arguments.late_delay`` seconds of delay before the late one, default 0).
note_after      answers tools/call, then ``arguments.late_delay`` seconds later (default 0.3)
                sends the notification ``notifications/hostile/late`` ``{"n": 1}``, while
                the client has no request in flight.
notes           before answering tools/call sends, in this order: ``notifications/resources/
                updated`` ``{"uri": "demo://x"}``, ``notifications/cancelled`` ``{"requestId":
                99, "reason": "gave up"}`` (the server abandons a request of its own),
                ``notifications/hostile/unknown`` ``{"x": 1}`` and ``notifications/message``
                (level info, logger "notes", data "hello").
swap_schema     tool ``t`` has outputSchema ``{"type": "object", "properties": {"n": {"type":
                "integer"}}, "required": ["n"]}`` (capabilities ``tools.listChanged``). A
                tools/call is held: the server sends ``notifications/tools/list_changed``,
                and from then on tools/list gives ``t`` an outputSchema requiring a string
                ``m`` instead; the held call is answered ``structuredContent`` ``{"n": 1}``
                (valid only under the first) right after the next tools/list is answered
                (SCH-17: a definition changed while the call is in flight).
cancel_log      never answers tools/call; every ``notifications/cancelled`` received is written
                to stderr as one line ``CANCELLED <json of the whole message>`` and appended
                (same line) to the file given as ARG, if any.
echo_raw        the answer's text is the JSON of the tools/call ``params`` exactly as received
                (compact separators), so a test can assert ``_meta`` hoisting etc.
noise           answers ``initialize`` with lines that are not JSON-RPC (a log line with ANSI
                colour codes, then a 1000-character line) and never with a response; with ARG
                ``exit`` it then exits with status 1 instead of waiting.
badanswer       answers tools/call with a line that cannot be decoded as a response unless
                ``arguments.ok`` is true: by default its text holds invalid UTF-8 (byte
                0xE9 in "caf\xe9"); ``arguments.kind == "shape"`` sends valid JSON with the
                call's id but neither ``result`` nor ``error``.
batch           holds every tools/call until ``arguments.batch`` of them have arrived, then
                answers them all, newest first; each answer's text is the call's
                ``arguments.text``. A client that waits for each answer before sending the next
                request never gets one.
slow            answers tools/call normally, ``arguments.delay`` seconds after it arrived
                (0 to 60; default 0.05).
"""

from __future__ import annotations

import json
import os
import random
import select
import signal
import sys
import time
from typing import Any

MODES = {
    "slow",
    "garbage",
    "logflood",
    "unsolicited",
    "hugeline",
    "die",
    "silent",
    "flood",
    "badversion",
    "noversion",
    "stderr",
    "sigterm",
    "requests",
    "progress_after",
    "note_after",
    "notes",
    "swap_schema",
    "cancel_log",
    "echo_raw",
    "batch",
    "noise",
    "badanswer",
}

PROTOCOL_VERSION = "2025-11-25"
SERVER_INFO = {"name": "hostile-stdio", "version": "0.0.0"}
TOOL = {
    "name": "t",
    "description": "The hostile test server's only tool; calling it triggers the mode's fault.",
    "inputSchema": {"type": "object", "properties": {}, "additionalProperties": True},
}
OK_RESULT = {"content": [{"type": "text", "text": "ok"}], "isError": False}
MIB = 1024 * 1024
EOF = object()  # readline() sentinel for end of input

GARBAGE_LINES: list[bytes] = [
    b"this is not json {{{ \x01\x02",
    b"\xff\xfe\xfa invalid utf-8 \xc3\x28 \xa0\xa1",
    b"[]",
    b"42",
    b'"str"',
    b"null",
    b"{}",
    b'{"jsonrpc":"2.0"}',
    b"",
    b"   ",
    b"{}\r",  # with the "\n" added below: a CRLF-terminated line
    b'{"jsonrpc":"2.0","method":42}',
    b'{"jsonrpc":"2.0","method":"notifications/hostile/unknown","params":{"x":1}}',
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
    b'[{"jsonrpc":"2.0","id":987654320,"result":{}}]',
    b'{"jsonrpc":"2.0","id":987654321,"result":{"content":[{"type":"text","text":"WRONG"}]}}',
    b'{"jsonrpc":"2.0","id":"hostile-unknown-id","error":{"code":-32603,"message":"unsolicited"}}',
]


def log(msg: str) -> None:
    try:
        sys.stderr.write(f"hostile_stdio: {msg}\n")
        sys.stderr.flush()
    except Exception:
        pass


class Server:
    def __init__(self, modes: set[str], arg: str | None) -> None:
        self.modes = modes
        self.arg = arg
        self.fd_in = sys.stdin.fileno()
        self.out = sys.stdout.buffer
        self.buf = bytearray()
        self.eof = False
        self.pending: dict[
            str, Any
        ] = {}  # json-key of our request id -> reply (None until answered)
        self.rng = random.Random(20251125)
        self.held: list[tuple[Any, dict[str, Any]]] = []  # the batch mode's calls
        self.held_call: Any = None  # swap_schema: the call held until tools/list
        self.swapped = False  # swap_schema: tools/list gives the second schema

    # -------------------------------------------------------------------------------- I/O helpers

    def readline(self, timeout: float | None = None) -> bytes | object | None:
        """One line without its newline; the EOF sentinel at end of input; None on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line = bytes(self.buf[:nl])
                del self.buf[: nl + 1]
                return line
            if self.eof:
                if self.buf:
                    line = bytes(self.buf)
                    self.buf.clear()
                    return line
                return EOF
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                ready, _, _ = select.select([self.fd_in], [], [], remaining)
                if not ready:
                    return None
            try:
                chunk = os.read(self.fd_in, 65536)
            except InterruptedError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                self.eof = True
            else:
                self.buf += chunk

    def write_raw(self, data: bytes) -> None:
        try:
            self.out.write(data)
            self.out.flush()
        except (BrokenPipeError, ValueError, OSError):
            self.on_broken_stdout()

    def on_broken_stdout(self) -> None:
        if "sigterm" in self.modes:
            self.sleep_forever()
        os._exit(0)

    def send(self, obj: Any) -> None:
        self.write_raw(json.dumps(obj, separators=(",", ":")).encode() + b"\n")

    def respond(self, req_id: Any, result: Any = None, error: Any = None) -> None:
        if "garbage" in self.modes:
            self.write_raw(b"".join(line + b"\n" for line in GARBAGE_LINES))
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": req_id}
        if error is not None:
            msg["error"] = error
        else:
            msg["result"] = result if result is not None else {}
        self.send(msg)

    @staticmethod
    def sleep_forever() -> None:
        while True:
            time.sleep(3600)

    # ------------------------------------------------------------------------------------ main loop

    def run(self) -> None:
        if "sigterm" in self.modes:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if "stderr" in self.modes:
            block = (b"E" * 99 + b"\n") * 10486  # ~1 MiB
            for _ in range(10):  # ~10 MB
                try:
                    sys.stderr.buffer.write(block)
                    sys.stderr.buffer.flush()
                except Exception:
                    break
        while True:
            line = self.readline()
            if not isinstance(line, bytes):  # EOF
                break
            self.dispatch_line(line)
        if "sigterm" in self.modes:
            self.sleep_forever()

    def dispatch_line(self, line: bytes) -> None:
        try:
            msg = json.loads(line)
        except Exception:
            return
        if not isinstance(msg, dict):
            return
        try:
            self.dispatch(msg)
        except SystemExit:
            raise
        except Exception as exc:  # never crash on odd input
            log(f"ignored error while handling a message: {exc!r}")

    def dispatch(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        has_id = "id" in msg
        if method is None:
            if has_id and ("result" in msg or "error" in msg):
                key = json.dumps(msg["id"])
                if key in self.pending and self.pending[key] is None:
                    self.pending[key] = msg
            return
        if not isinstance(method, str):
            if has_id:
                self.respond(msg["id"], error={"code": -32600, "message": "Invalid Request"})
            return
        if not has_id:
            self.on_notification(method, msg)
            return
        self.on_request(msg["id"], method, msg.get("params"), msg)

    def on_notification(self, method: str, msg: dict[str, Any]) -> None:
        if method == "notifications/cancelled" and "cancel_log" in self.modes:
            line = "CANCELLED " + json.dumps(msg, separators=(",", ":"))
            log_line = line + "\n"
            try:
                sys.stderr.write(log_line)
                sys.stderr.flush()
            except Exception:
                pass
            if self.arg:
                try:
                    with open(self.arg, "a", encoding="utf-8") as fh:
                        fh.write(log_line)
                except OSError as exc:
                    log(f"cannot append to {self.arg!r}: {exc!r}")

    def on_request(self, req_id: Any, method: str, params: Any, msg: dict[str, Any]) -> None:
        if method == "initialize" and "noise" in self.modes:
            self.write_raw(
                b"\x1b[31mError: Cannot find module 'left-pad'\x1b[0m (node:42) stack follows\n"
                + b"at Object.<anonymous> "
                + b"x" * 1000
                + b"\n"
            )
            if self.arg == "exit":
                os._exit(1)
            return
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {
                    "tools": {"listChanged": True} if "swap_schema" in self.modes else {}
                },
                "serverInfo": SERVER_INFO,
            }
            if "badversion" in self.modes:
                result["protocolVersion"] = "1999-01-01"
            if "noversion" in self.modes:
                del result["protocolVersion"]
            self.respond(req_id, result)
        elif method == "ping":
            self.respond(req_id, {})
        elif method == "tools/list" and "swap_schema" in self.modes:
            self.respond(req_id, {"tools": [_swap_tool(self.swapped)]})
            held, self.held_call = self.held_call, None
            if held is not None:
                structured = {"n": 1}
                content = [{"type": "text", "text": json.dumps(structured)}]
                self.respond(held, {"content": content, "structuredContent": structured})
        elif method == "tools/list":
            self.respond(req_id, {"tools": [TOOL]})
        elif method == "tools/call":
            self.on_tools_call(req_id, params if isinstance(params, dict) else {})
        else:
            self.respond(req_id, error={"code": -32601, "message": "Method not found"})

    # ----------------------------------------------------------------------------------- tools/call

    def on_tools_call(self, req_id: Any, params: dict[str, Any]) -> None:
        args = params.get("arguments")
        args = args if isinstance(args, dict) else {}
        modes = self.modes
        if "die" in modes:
            try:
                self.out.flush()
            except Exception:
                pass
            os._exit(3)
        if "silent" in modes or "cancel_log" in modes:
            return
        if "slow" in modes:
            delay = args.get("delay", 0.05)
            if isinstance(delay, (int, float)) and not isinstance(delay, bool) and 0 < delay <= 60:
                time.sleep(delay)
        if "swap_schema" in modes:
            self.held_call, self.swapped = req_id, True
            self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            return
        if "hugeline" in modes and args.get("ok") is not True:
            self.huge_line(req_id, _int_arg(args, "size", 100 * MIB))
            return
        if "logflood" in modes:
            size = _int_arg(args, "size", MIB)
            for start in range(0, size, MIB):
                self.write_raw(b"y\n" * (min(MIB, size - start) // 2))
        if "unsolicited" in modes:
            self.unsolicited(_int_arg(args, "count", 1000))
        if "flood" in modes:
            self.flood(_int_arg(args, "count", 20000))
        if "requests" in modes:
            self.server_requests(req_id, args)
            return
        if "progress_after" in modes:
            self.progress_after(req_id, params, args)
            return
        if "notes" in modes:
            for method, note in (
                ("notifications/resources/updated", {"uri": "demo://x"}),
                ("notifications/cancelled", {"requestId": 99, "reason": "gave up"}),
                ("notifications/hostile/unknown", {"x": 1}),
                ("notifications/message", {"level": "info", "logger": "notes", "data": "hello"}),
            ):
                self.send({"jsonrpc": "2.0", "method": method, "params": note})
            self.respond(req_id, OK_RESULT)
            return
        if "note_after" in modes:
            self.respond(req_id, OK_RESULT)
            delay = args.get("late_delay", 0.3)
            if isinstance(delay, (int, float)) and not isinstance(delay, bool) and 0 < delay <= 60:
                time.sleep(delay)
            late = {"jsonrpc": "2.0", "method": "notifications/hostile/late", "params": {"n": 1}}
            self.send(late)
            return
        if "batch" in modes:
            self.held.append((req_id, args))
            if len(self.held) >= _int_arg(args, "batch", 1):
                for held_id, held_args in reversed(self.held):
                    text = str(held_args.get("text", "ok"))
                    content = [{"type": "text", "text": text}]
                    self.respond(held_id, {"content": content, "isError": False})
                self.held.clear()
            return
        if "badanswer" in modes and args.get("ok") is not True:
            rid = json.dumps(req_id).encode()
            if args.get("kind") == "shape":
                self.write_raw(b'{"jsonrpc":"2.0","id":' + rid + b"}\n")
            else:
                self.write_raw(
                    b'{"jsonrpc":"2.0","id":' + rid + b',"result":{"content":'
                    b'[{"type":"text","text":"caf\xe9"}],"isError":false}}\n'
                )
            return
        if "echo_raw" in modes:
            text = json.dumps(params, separators=(",", ":"), ensure_ascii=False)
            self.respond(req_id, {"content": [{"type": "text", "text": text}], "isError": False})
            return
        self.respond(req_id, OK_RESULT)

    def huge_line(self, req_id: Any, size: int) -> None:
        head = (
            b'{"jsonrpc":"2.0","id":'
            + json.dumps(req_id).encode()
            + b',"result":{"content":[{"type":"text","text":"'
        )
        tail = b'"}],"isError":false}}\n'
        body = max(0, size - len(head) - len(tail))
        chunk = b"x" * MIB
        self.write_raw(head)
        while body > 0:
            n = min(body, MIB)
            self.write_raw(chunk if n == MIB else chunk[:n])
            body -= n
        self.write_raw(tail)

    def unsolicited(self, count: int) -> None:
        lines = []
        for i in range(count):
            if i % 2 == 0:
                rid: Any = self.rng.randint(10**9, 2**53)
            else:
                rid = f"unsolicited-{self.rng.getrandbits(64):016x}"
            if i % 3 == 0:
                msg = {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {"code": -32603, "message": f"unsolicited {i}"},
                }
            else:
                msg = {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {"content": [{"type": "text", "text": f"unsolicited {i}"}]},
                }
            lines.append(json.dumps(msg, separators=(",", ":")).encode())
        self.write_raw(b"\n".join(lines) + b"\n" if lines else b"")

    def flood(self, count: int) -> None:
        batch: list[bytes] = []

        def flush() -> None:
            if batch:
                self.write_raw(b"\n".join(batch) + b"\n")
                batch.clear()

        for i in range(count):
            batch.append(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": {"level": "info", "logger": "hostile", "data": f"flood {i}"},
                    },
                    separators=(",", ":"),
                ).encode()
            )
            if len(batch) >= 1000:
                flush()
        for i in range(count):
            token: Any = f"hostile-unknown-token-{i}" if i % 2 == 0 else 10**9 + i
            batch.append(
                json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": i, "total": count},
                    },
                    separators=(",", ":"),
                ).encode()
            )
            if len(batch) >= 1000:
                flush()
        flush()

    def progress_after(self, req_id: Any, params: dict[str, Any], args: dict[str, Any]) -> None:
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if token is None:
            self.respond(
                req_id,
                {"content": [{"type": "text", "text": "no progressToken"}], "isError": False},
            )
            return

        def progress(value: int, message: str) -> None:
            self.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {
                        "progressToken": token,
                        "progress": value,
                        "total": 2,
                        "message": message,
                    },
                }
            )

        progress(1, "before")
        self.respond(req_id, OK_RESULT)
        delay = args.get("late_delay", 0)
        if isinstance(delay, (int, float)) and not isinstance(delay, bool) and 0 < delay <= 60:
            time.sleep(delay)
        progress(2, "after")

    def server_requests(self, req_id: Any, args: dict[str, Any]) -> None:
        custom = args.get("requests")
        plan: list[tuple[Any, Any, Any]]
        if isinstance(custom, list) and custom:
            plan = [
                (i + 1, r.get("method"), r.get("params"))
                for i, r in enumerate(custom)
                if isinstance(r, dict) and isinstance(r.get("method"), str)
            ]
        else:
            plan = [
                (1, "ping", None),
                (2, "roots/list", None),
                (
                    "s-3",
                    "sampling/createMessage",
                    {
                        "messages": [
                            {"role": "user", "content": {"type": "text", "text": "Say hello"}}
                        ],
                        "maxTokens": 16,
                    },
                ),
                (
                    "s-4",
                    "elicitation/create",
                    {
                        "mode": "form",
                        "message": "What is your name?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                            "required": ["name"],
                        },
                    },
                ),
                (5, "bogus/method", None),
            ]
        timeout = args.get("timeout", 10)
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
            timeout = 10
        keys = []
        for rid, method, rparams in plan:
            key = json.dumps(rid)
            keys.append(key)
            self.pending[key] = None
            msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
            if rparams is not None:
                msg["params"] = rparams
            self.send(msg)
        deadline = time.monotonic() + float(timeout)
        while any(self.pending.get(k) is None for k in keys):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            line = self.readline(timeout=remaining)
            if not isinstance(line, bytes):  # timeout or EOF
                break
            self.dispatch_line(line)
        replies = [
            {"method": method, "id": rid, "reply": self.pending.pop(key, None)}
            for (rid, method, _), key in zip(plan, keys, strict=True)
        ]
        by_method: dict[str, Any] = {}
        for r in replies:
            by_method.setdefault(r["method"], r["reply"])
        text = json.dumps({"by_method": by_method, "replies": replies}, separators=(",", ":"))
        self.respond(req_id, {"content": [{"type": "text", "text": text}], "isError": False})
        if self.eof and "sigterm" not in self.modes:
            sys.exit(0)


def _swap_tool(swapped: bool) -> dict[str, Any]:
    """swap_schema's tool ``t``: its outputSchema wants ``n`` (integer), or once swapped
    ``m`` (string)."""
    key, kind = ("m", "string") if swapped else ("n", "integer")
    schema = {"type": "object", "properties": {key: {"type": kind}}, "required": [key]}
    return {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}


def _int_arg(args: dict[str, Any], name: str, default: int) -> int:
    value = args.get(name)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return default


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write(
            f"usage: {argv[0]} MODE[,MODE...] [ARG]\nmodes: {', '.join(sorted(MODES))}\n"
        )
        return 2
    modes = {m.strip() for m in argv[1].split(",") if m.strip()}
    unknown = modes - MODES
    if unknown or not modes:
        sys.stderr.write(
            f"unknown mode(s): {', '.join(sorted(unknown)) or '(none)'}; "
            f"known: {', '.join(sorted(MODES))}\n"
        )
        return 2
    Server(modes, argv[2] if len(argv) > 2 else None).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
