"""A scripted 2026-07-28 stdio server for the subscription tests: faults a real server
does not produce on demand.

    python tests/servers/listen_stdio.py MODE [ARG]

Every mode answers ``server/discover`` (2026-07-28, tools capability), ``tools/list``
(no tools) and acknowledges ``subscriptions/listen`` with exactly what was asked.

modes
    flood N       after the acknowledgment, N ``notifications/resources/updated`` for
                  ``demo://busy``, then one for ``demo://quiet``, then one
                  ``notifications/tools/list_changed`` (the end marker)
    exit_after S  exits (status 3) S seconds after acknowledging its first listen
    never_ack     answers discover but never acknowledges a listen
    init_dies S   the processes are numbered through the file named by ``$LISTEN_GEN``
                  (each appends its pid at start): the first acknowledges and exits
                  (status 3) S seconds later, like ``exit_after``; the second answers
                  discover, never acknowledges, and exits S seconds after answering it
                  (an exit during the initialisation of a replacement, SUB-20); the
                  later ones behave normally
    deaf S        numbered like ``init_dies``: the first process answers discover, then
                  reads nothing more and exits (status 3) S seconds later, so what the
                  client writes meanwhile stays pending in the pipe (SUB-30); the later
                  ones behave normally

Every line received is appended, as is, to the file named by ``$LISTEN_LOG`` (when
set), prefixed with this process's pid: the tests read which listens each process got
and which were cancelled.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

SID = "io.modelcontextprotocol/subscriptionId"


def write(msg: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def on_stream(method: str, sid: Any, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": {"_meta": {SID: sid}, **params}}


def main(argv: list[str]) -> int:
    mode = argv[1]
    arg = argv[2] if len(argv) > 2 else None
    log = os.environ.get("LISTEN_LOG")
    acked = False
    generation = 0
    if mode in ("init_dies", "deaf"):
        with open(os.environ["LISTEN_GEN"], "a+", encoding="utf-8") as f:
            f.write(f"{os.getpid()}\n")
            f.seek(0)
            generation = len(f.read().split())
    delay = float(arg or "0.5")
    for line in sys.stdin:
        if log:
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"{os.getpid()} {line.strip()}\n")
        msg = json.loads(line)
        method, rid = msg.get("method"), msg.get("id")
        if rid is None:
            continue  # notifications (cancelled) are only logged
        if method == "server/discover":
            write(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "supportedVersions": ["2026-07-28"],
                        "capabilities": {"tools": {"listChanged": True}, "resources": {}},
                        "_meta": {
                            "io.modelcontextprotocol/serverInfo": {"name": "listen", "version": "1"}
                        },
                    },
                }
            )
            if mode == "init_dies" and generation == 2:
                threading.Timer(delay, lambda: os._exit(3)).start()
            if mode == "deaf" and generation == 1:
                time.sleep(delay)  # stdin is not read: the client's writes stay pending
                os._exit(3)
        elif method == "tools/list":
            write({"jsonrpc": "2.0", "id": rid, "result": {"tools": []}})
        elif method == "subscriptions/listen":
            if mode == "never_ack" or (mode == "init_dies" and generation == 2):
                continue
            granted = msg["params"]["notifications"]
            write(on_stream("notifications/subscriptions/acknowledged", rid, notifications=granted))
            if mode == "flood":
                for _ in range(int(arg or "5000")):
                    write(on_stream("notifications/resources/updated", rid, uri="demo://busy"))
                write(on_stream("notifications/resources/updated", rid, uri="demo://quiet"))
                write(on_stream("notifications/tools/list_changed", rid))
            elif (mode == "exit_after" or (mode == "init_dies" and generation == 1)) and not acked:
                threading.Timer(delay, lambda: os._exit(3)).start()
            acked = True
        else:
            write(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {"code": -32601, "message": f"no {method}"},
                }
            )
    time.sleep(0.05)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
