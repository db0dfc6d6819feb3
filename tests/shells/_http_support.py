"""Shared bits of the HTTP behavioural suites (test_http_*.py).

* ``http_peers`` / ``hostile_http`` / ``self_signed`` imported from tests/servers (not a
  package);
* :class:`PeerPool`: HTTP peers started lazily and shared by the tests of one module
  (the SDK server takes ~0.7 s to start, server-everything more);
* :func:`flex_http_server`: the hostile ``ok`` server, also answering at another path and
  optionally as a plain-HTTP-only server (for connect() detection and HTTP-4);
* small helpers (counting logged requests, waiting for the SDK server's events).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from .conftest import SERVERS, Shell, text_of

if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))

import hostile_http
import http_peers
import http_tap
from http_peers import (
    Peer,
    everything_http_server,
    free_port,
    hostile_http_server,
    sdk_http_server,
)
from self_signed import self_signed

__all__ = [
    "Peer",
    "PeerPool",
    "everything_http_server",
    "flex_http_server",
    "free_port",
    "hostile_http",
    "hostile_http_server",
    "http_peers",
    "http_tap",
    "requests_logged",
    "sdk_http_server",
    "self_signed",
    "wait_for_sdk_event",
]

#: Per-request bound of every HTTP test client (the blocking shell cannot be cancelled).
HTTP_READ_TIMEOUT = 10.0


class PeerPool:
    """Peers started on first use and stopped together (a module-scoped fixture)."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()
        self._peers: dict[tuple[str, str], Peer] = {}

    def _get(self, kind: str, mode: str, factory: Callable[[str], Any]) -> Peer:
        key = (kind, mode)
        if key not in self._peers:
            self._peers[key] = self._stack.enter_context(factory(mode))
        return self._peers[key]

    def sdk(self, mode: str) -> Peer:
        return self._get("sdk", mode, sdk_http_server)

    def everything(self, mode: str) -> Peer:
        return self._get("everything", mode, everything_http_server)

    def close(self) -> None:
        self._stack.close()


def requests_logged(shell: Shell, method: str) -> int:
    """How many ``method`` requests the client logged sending (DEBUG ``-> server method``)."""
    return sum(
        1 for m in shell.log.messages(logging.DEBUG) if m.startswith("-> ") and f" {method} " in m
    )


async def wait_for_sdk_event(shell: Shell, c: Any, event: str, timeout: float = 10.0) -> list[str]:
    """Poll the SDK server's ``events`` tool until ``event`` shows up; all events seen."""
    recorded: list[str] = []
    deadline = time.monotonic() + timeout
    while True:
        recorded.extend(json.loads(text_of(await c.call_tool("events", timeout=5))))
        if event in recorded or time.monotonic() > deadline:
            return recorded
        await shell.sleep(0.1)


class FlexServer(hostile_http.HostileHTTPServer):
    """The hostile server, with Streamable HTTP also served at ``alias`` (another path
    than ``/mcp``, so that connect() has to detect the transport), and:

    plain_only   POSTs whose Accept lists ``text/event-stream`` get 406 and GETs 405: only a
                 plain-HTTP client (Accept: application/json) gets through.
    tolerant     a POST whose Accept lacks ``text/event-stream`` is served anyway (the
                 hostile baseline would answer 406), so a plain-HTTP client can connect.

    The recorder keeps every request exactly as sent.
    """

    def __init__(
        self, mode: str, *, alias: str | None = None, plain_only: bool = False, **options: Any
    ) -> None:
        super().__init__(mode, **options)
        self.alias = alias
        self.plain_only = plain_only

    def dispatch(self, ex: hostile_http.Exchange) -> None:
        req = ex.req
        if req.listener != "main" or (req.path != "/mcp" and req.path != self.alias):
            super().dispatch(ex)
            return
        accept = (req.header("accept") or "").lower()
        if self.plain_only and (req.method != "POST" or "text/event-stream" in accept):
            if req.method == "POST":
                ex.respond_text(406, "Not Acceptable: this server speaks plain JSON only")
            else:
                ex.respond_text(405, "Method Not Allowed", [("Allow", "POST")])
            return
        if req.method == "POST" and "text/event-stream" not in accept:
            # Serve a plain-HTTP POST: a patched copy of the request for the handler, the
            # original (what the client really sent) stays in the recorder.
            headers = [(k, v) for k, v in req.headers if k != "accept"]
            headers.append(("accept", "application/json, text/event-stream"))
            patched = dataclasses.replace(req, headers=headers)
            self._mcp_post(hostile_http.Exchange(ex.conn, patched))
            req.status = patched.status
            return
        if req.method == "POST":
            self._mcp_post(ex)
        elif req.method == "GET":
            self._mcp_get(ex)
        elif req.method == "DELETE":
            self._mcp_delete(ex)
        else:
            ex.respond_text(405, "Method Not Allowed", [("Allow", "GET, POST, DELETE")])


@contextlib.contextmanager
def flex_http_server(
    mode: str = "ok", *, alias: str = "/rpc", plain_only: bool = False, **options: Any
) -> Iterator[Peer]:
    """A :class:`FlexServer` on 127.0.0.1 (in-process); ``peer.url`` is ``base + alias``."""
    server = FlexServer(mode, alias=alias, plain_only=plain_only, **options).start()
    try:
        yield Peer(
            server.url_base,
            url=server.url_base + alias,
            port=server.port,
            kind="hostile",
            mode=mode,
            recorder=server.recorder,
            server=server,
        )
    finally:
        server.stop()
