"""SSE-5 in both shells: an HTTP+SSE server that stops sending (its keep-alive pings go
unanswered) and then comes back is reconnected in the background, with no request of
the host's; against the scripted legacy server of tests/servers/hostile_http.py
(``legacy_sse_ok`` with its ``silent`` switch: no real server stops on cue).

The policy (the backoff, the 5 attempts) is proven pure in tests/proto/test_sse_reconnect.py;
here the shells only have to wait for the machine's deadline and perform what it asks.
"""

from __future__ import annotations

import logging
from typing import Any

from ._http_support import HTTP_READ_TIMEOUT, hostile_http_server
from .conftest import Shell, text_of


def test_a_server_that_stops_sending_is_reconnected_once_back(shell: Shell) -> None:
    with hostile_http_server("legacy_sse_ok") as peer:
        rec, server = peer.recorder, peer.server

        def streams_opened() -> int:
            return len([r for r in rec.gets() if r.status == 200])

        def refused_streams() -> int:
            return len([r for r in rec.gets() if r.status == 503])

        async def scenario(c: Any) -> None:
            assert text_of(await c.call_tool("t")) == "ok"
            assert streams_opened() == 1
            server.silent.set()  # it stops answering: pings go unanswered
            # Three missed pings: the connection is dropped, and the background tries
            # again (the server refuses new streams while silent).
            assert await shell.wait_for(lambda: refused_streams() >= 1, timeout=30)
            server.silent.clear()  # back
            # No request of ours: the client reconnects and initializes by itself.
            assert await shell.wait_for(
                lambda: streams_opened() == 2 and len(rec.posts("notifications/initialized")) == 2,
                timeout=30,
            )
            assert text_of(await c.call_tool("t")) == "ok"
            # The call went to the new session's endpoint.
            assert rec.posts("tools/call")[-1].target.endswith("session=abc-2")

        shell.run(
            scenario,
            peer.url,
            transport="sse",
            ping=0.3,
            retry_backoff=0.2,
            read_timeout=HTTP_READ_TIMEOUT,
        )
        messages = shell.log.messages(logging.INFO)
        assert any("reconnected" in m for m in messages), messages
