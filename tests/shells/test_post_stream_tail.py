"""Both shells: a POST's SSE stream that stays open after the result (issue 9, item 6).

A Streamable HTTP server may keep sending on a POST's event stream after the response
it carries (notifications, say) and end the stream only later. The client must

* hand the caller its result as soon as it arrives: the call does not wait for the end
  of the stream;
* keep reading that stream in the background and deliver what comes after the result.

Proven against the scripted h11 server (``hostile_http.py`` mode ``post_tail``): it
answers ``tools/call t`` with the result and one notification, then holds the stream
open until the client calls the tool ``release``, which reports whether the stream was
still open at that moment; then the held stream sends one more notification and ends.
A client that makes the caller read the stream to its end returns from the first call
only once that stream is gone (before the fix the blocking shell did: it returned at its
read timeout, having hung up) and then hears "nothing held".
"""

from __future__ import annotations

from typing import Any

from ._http_support import HTTP_READ_TIMEOUT, hostile_http_server
from .conftest import Shell, text_of


def _tail_notes(seen: list[tuple[str, Any]]) -> list[Any]:
    return [
        params.get("data")
        for method, params in seen
        if method == "notifications/message" and params.get("logger") == "post_tail"
    ]


def test_a_call_returns_while_its_post_stream_stays_open(shell: Shell) -> None:
    seen: list[tuple[str, Any]] = []

    async def scenario(c: Any) -> None:
        c.on_notification(lambda server, method, params: seen.append((method, params)))
        assert text_of(await c.call_tool("t")) == "ok"
        # The first call's stream is still open on the server when this one arrives:
        # the first call returned without waiting for its end.
        assert text_of(await c.call_tool("release")) == "released"
        # What the server sent on that stream after the result, before and after the
        # release, is delivered (bounded wait: it is read in the background).
        assert await shell.wait_for(lambda: len(_tail_notes(seen)) >= 2, timeout=10), _tail_notes(
            seen
        )
        assert await c.ping() == {}

    with hostile_http_server("post_tail") as peer:
        shell.run(scenario, peer.url, read_timeout=HTTP_READ_TIMEOUT)
        notes = peer.recorder.notes
        posts = peer.recorder.posts("tools/call")
    assert _tail_notes(seen) == ["before release", "after release"]
    assert "post_tail: released" in notes
    assert len(posts) == 2  # each call sent once


def test_open_post_streams_end_with_the_client(shell: Shell) -> None:
    """Two calls each leave their stream open; more calls go through meanwhile; closing
    the client closes both held streams' connections (nothing left behind, no hang)."""
    seen: list[tuple[str, Any]] = []

    async def scenario(c: Any) -> None:
        c.on_notification(lambda server, method, params: seen.append((method, params)))
        assert text_of(await c.call_tool("t")) == "ok"
        assert text_of(await c.call_tool("t")) == "ok"
        assert await c.ping() == {}
        assert await shell.wait_for(lambda: len(_tail_notes(seen)) >= 2, timeout=10)

    with hostile_http_server("post_tail") as peer:
        shell.run(scenario, peer.url, read_timeout=HTTP_READ_TIMEOUT)
        assert peer.recorder.wait_for(
            lambda r: r.notes.count("post_tail: client closed") == 2, timeout=10
        ), peer.recorder.notes
    assert _tail_notes(seen) == ["before release", "before release"]
