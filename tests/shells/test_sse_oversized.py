"""Both shells: complete SSE events before an oversized one are delivered (issue 9,
item 6).

A POST's event stream carries, in one piece, a notification, the call's response and
then an event larger than the client's bound (``Limits.max_line_size``). The oversized
event fails that stream (bounded memory), but what came complete before it is not lost
with it: the call returns its result and the notification reaches the host. Before the
machine (issue 9) the Trio shell lost both (the SSE parser raised before its queued
events were taken: the call failed with ``ResponseTooLargeError``).

Scripted peer: ``hostile_http.py`` mode ``oversized_tail`` (a real server does not send
events past a client's bound on purpose).
"""

from __future__ import annotations

from typing import Any

from mcp_proto.limits import Limits

from ._http_support import HTTP_READ_TIMEOUT, hostile_http_server
from .conftest import Shell, text_of

MIB = 1 << 20


def test_events_before_an_oversized_event_are_delivered(shell: Shell) -> None:
    seen: list[Any] = []

    async def scenario(c: Any) -> None:
        c.on_notification(
            lambda server, method, params: (
                seen.append(params.get("data"))
                if params.get("logger") == "oversized_tail"
                else None
            )
        )
        assert text_of(await c.call_tool("t")) == "ok"
        assert await shell.wait_for(lambda: seen == ["before"], timeout=10), seen
        assert await c.ping() == {}  # the connection is still usable

    with hostile_http_server("oversized_tail", size=2 * MIB) as peer:
        shell.run(
            scenario, peer.url, read_timeout=HTTP_READ_TIMEOUT, limits=Limits(max_line_size=MIB)
        )
        assert len(peer.recorder.posts("tools/call")) == 1  # answered: never re-sent
