"""``subscribe_resource`` on a 2026-07-28 server when its listen stream does not stay
as it was acknowledged (RES-10, RES-11, RES-12), in both shells, over Streamable HTTP
against the scripted peer ``tests/servers/hostile_modern.py`` (no real server drops a
stream and grants the re-open more narrowly, or refuses it, on cue).

The peer cuts the held listen streams (``drop_listens``, as a restart would) and counts
the ones the client closed itself (``closed_by_client``: the HTTP cancellation).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mcp_proto.errors import ResourceReadError

from .conftest import SERVERS, Shell

if str(SERVERS) not in sys.path:
    sys.path.insert(0, str(SERVERS))
import hostile_modern

URI = "demo://r"
KEY = ("hostile-modern", URI)


@pytest.fixture
def start_peer() -> Iterator[Callable[[str], tuple[str, hostile_modern.Peer]]]:
    stops: list[Callable[[], None]] = []

    def start(modes: str) -> tuple[str, hostile_modern.Peer]:
        url, stop, peer = hostile_modern.start_http(modes)
        stops.append(stop)
        return url, peer

    yield start
    for stop in stops:
        stop()


def listens(peer: hostile_modern.Peer) -> int:
    return peer.counts.get("subscriptions/listen", 0)


def assigned(c: Any) -> Any:
    """The listen subscription the client holds for URI (or ``None``)."""
    return c._core._resource_subs.get((c.servers[0].name, URI))


def test_res10_a_reopened_stream_that_no_longer_names_the_uri_is_closed(
    shell: Shell, start_peer: Any
) -> None:
    url, peer = start_peer("reack_without")

    async def scenario(c: Any) -> None:
        assert await c.subscribe_resource(URI) is True
        assert await shell.wait_for(lambda: peer.held != [])
        assert peer.drop_listens() == 1
        # The client re-opens; the server acknowledges the re-open without the URI:
        # the subscription is closed (the client ends the stream) and unassigned.
        assert await shell.wait_for(lambda: peer.closed_by_client == 1, timeout=30)
        assert listens(peer) == 2
        assert await shell.wait_for(lambda: assigned(c) is None)
        # A later subscribe is a new listen, judged on its own acknowledgment.
        with pytest.raises(ResourceReadError, match="does not name it"):
            await c.subscribe_resource(URI)
        assert listens(peer) == 3

    shell.run(scenario, url, retry_backoff=0.2)


def test_res11_a_dropped_stream_is_waited_for_not_reported_live(
    shell: Shell, start_peer: Any
) -> None:
    """The stream dropped: a second subscribe_resource returns only once the server
    has acknowledged the replacement (naming the URI)."""
    url, peer = start_peer("baseline")

    async def scenario(c: Any) -> None:
        assert await c.subscribe_resource(URI) is True
        sub = assigned(c)
        assert await shell.wait_for(lambda: peer.held != [])
        peer.drop_listens()
        assert await shell.wait_for(lambda: not sub.active)
        assert await c.subscribe_resource(URI) is True
        # It waited through the re-open backoff for the replacement's acknowledgment.
        assert listens(peer) == 2
        assert sub.active and assigned(c) is sub
        assert await c.unsubscribe_resource(URI) is True
        assert await shell.wait_for(lambda: peer.closed_by_client == 1)

    shell.run(scenario, url, retry_backoff=2.0)


def test_res11_a_replacement_acknowledged_without_the_uri_is_no_confirmation(
    shell: Shell, start_peer: Any
) -> None:
    url, peer = start_peer("reack_without")

    async def scenario(c: Any) -> None:
        assert await c.subscribe_resource(URI) is True
        sub = assigned(c)
        assert await shell.wait_for(lambda: peer.held != [])
        peer.drop_listens()
        assert await shell.wait_for(lambda: not sub.active)
        with pytest.raises(ResourceReadError):
            await c.subscribe_resource(URI)
        assert sub.closed and assigned(c) is None

    shell.run(scenario, url, retry_backoff=2.0)


def test_res12_a_refused_replacement_is_closed_and_unassigned(
    shell: Shell, start_peer: Any
) -> None:
    """The re-open is refused (HTTP 403): the subscription ends and is unassigned, so
    the next subscribe_resource opens a new listen instead of reporting the dead one."""
    url, peer = start_peer("reject_relisten")

    async def scenario(c: Any) -> None:
        assert await c.subscribe_resource(URI) is True
        sub = assigned(c)
        assert await shell.wait_for(lambda: peer.held != [])
        peer.drop_listens()
        assert await shell.wait_for(lambda: sub.closed, timeout=30)
        assert listens(peer) == 2
        assert assigned(c) is None
        assert await c.subscribe_resource(URI) is True
        assert listens(peer) == 3
        assert assigned(c) is not sub
        assert await c.unsubscribe_resource(URI) is True
        assert await shell.wait_for(lambda: peer.closed_by_client == 1)

    shell.run(scenario, url, retry_backoff=0.2)
