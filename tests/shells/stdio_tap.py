#!/usr/bin/env python3
"""A transparent stdio tap for tests: runs a real server and records its traffic.

    python stdio_tap.py LOG -- COMMAND [ARGS...]

Bytes pass through unchanged in both directions. Each complete line is also appended
to LOG as one JSON object ``{"dir": "c2s" | "s2c", "line": "..."}``; when the client
closes our stdin, ``{"dir": "c2s", "eof": true}`` is appended before the server's stdin
is closed in turn. So LOG shows, in order, what the client wrote before it closed stdin.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 3 or args[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    log_path, command = args[0], args[2:]
    lock = threading.Lock()
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - closed at exit

    def record(entry: dict[str, object]) -> None:
        with lock:
            log.write(json.dumps(entry) + "\n")
            log.flush()

    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert child.stdin is not None and child.stdout is not None

    def pump(src: int, dst: int, direction: str) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(src, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                record({"dir": direction, "line": line.decode("utf-8", "replace")})
            try:
                os.write(dst, chunk)
            except OSError:
                break

    def client_to_server() -> None:
        assert child.stdin is not None
        pump(0, child.stdin.fileno(), "c2s")
        record({"dir": "c2s", "eof": True})
        child.stdin.close()

    threading.Thread(target=client_to_server, daemon=True).start()
    pump(child.stdout.fileno(), 1, "s2c")
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
