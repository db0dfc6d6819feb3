"""A scripted peer for the connection machine (pure: time is a number, no sockets).

``Harness`` wraps a :class:`~mcp_proto.connection.Connection`: it collects the frames
and events the machine hands out, advances a numeric clock (``advance``) and parses
what was written (stdio ``Write`` frames, HTTP ``StartExchange`` bodies). The tests
play the server by feeding bytes (stdio) or exchange heads/bodies (HTTP) back.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
from _proto_support import ALL_CAPS, notification, request, result, wire

from mcp_proto import NEED_DATA
from mcp_proto.config import ServerConfig
from mcp_proto.connection import (
    AbortExchange,
    Connection,
    OpenTransport,
    StartExchange,
    Write,
)
from mcp_proto.connection.events import Connected
from mcp_proto.limits import Limits
from mcp_proto.types import Implementation

__all__ = [
    "ALL_CAPS",
    "JITTER_R",
    "Harness",
    "init_result",
    "notification",
    "request",
    "result",
    "wire",
]

CLIENT = Implementation(name="machine-test", version="1.0")
#: The fixed value the tests' jitter source returns.
JITTER_R = 0.5


def init_result(
    rid: Any, *, version: str = "2025-11-25", caps: dict[str, Any] | None = None
) -> bytes:
    return result(
        rid,
        {
            "protocolVersion": version,
            "capabilities": ALL_CAPS if caps is None else caps,
            "serverInfo": {"name": "scripted", "version": "1"},
        },
    )


class Harness:
    def __init__(
        self,
        config: ServerConfig,
        *,
        capabilities: dict[str, Any] | None = None,
        limits: Limits | None = None,
        jitter: float = JITTER_R,
        probe: bool = False,
        **options: Any,
    ) -> None:
        if config.protocol == "auto" and not probe:
            # The handshake-era suites script a legacy server from its first message:
            # no server/discover probe (issue 10; the probe has its own suites,
            # test_connection_modern*.py).
            config = attrs.evolve(config, protocol="legacy")
        self.now = 0.0
        self.draws = 0
        self._jitter = jitter
        self.conn = Connection(
            config,
            name="srv",
            client_info=CLIENT,
            capabilities=lambda: dict(capabilities or {}),
            limits=limits,
            random=self._random,
            **options,
        )
        self.frames: list[Any] = []
        self.events: list[Any] = []

    def _random(self) -> float:
        self.draws += 1
        return self._jitter

    # -------------------------------------------------------------- collecting

    def pump(self) -> None:
        self.frames += self.conn.frames_to_send()
        while True:
            event = self.conn.next_event()
            if event is NEED_DATA:
                return
            self.events.append(event)

    def take_frames(self) -> list[Any]:
        self.pump()
        out, self.frames = self.frames, []
        return out

    def take_events(self, *kinds: type) -> list[Any]:
        """Drain the events; with ``kinds``, only those types are returned (the rest
        are dropped too)."""
        self.pump()
        out, self.events = self.events, []
        if kinds:
            out = [e for e in out if isinstance(e, kinds)]
        return out

    def advance(self, to: float) -> None:
        """Move the clock to ``to`` and fire every deadline up to it, in order."""
        assert to >= self.now
        while True:
            deadline = self.conn.next_deadline()
            if deadline is None or deadline > to:
                break
            self.now = max(self.now, deadline)
            self.conn.handle_timeout(self.now)
        self.now = to

    # -------------------------------------------------------------- stdio peer

    def written(self) -> list[dict[str, Any]]:
        """Messages of the Write frames handed out since the last call (other frames
        are kept in ``self.frames``)."""
        self.pump()
        out: list[dict[str, Any]] = []
        keep: list[Any] = []
        for frame in self.frames:
            if isinstance(frame, Write):
                for data in frame.messages:
                    assert b"\n" not in data
                    out.append(json.loads(data))
            else:
                keep.append(frame)
        self.frames = keep
        return out

    def feed(self, *lines: bytes) -> None:
        self.conn.receive_data(b"".join(line + b"\n" for line in lines), self.now)

    def connect_stdio(self, *, caps: dict[str, Any] | None = None) -> None:
        """Open and complete the handshake; leaves frames and events empty."""
        self.conn.connect(self.now)
        assert self.take_frames() == [OpenTransport()]
        self.conn.transport_opened(self.now)
        (init,) = self.written()
        assert init["method"] == "initialize"
        self.feed(init_result(init["id"], caps=caps))
        assert [m["method"] for m in self.written()] == ["notifications/initialized"]
        assert [type(e) for e in self.take_events()] == [Connected]
        assert self.take_frames() == []

    # -------------------------------------------------------------- HTTP peer

    def exchanges(self) -> list[StartExchange]:
        """StartExchange frames handed out since the last call (others kept)."""
        self.pump()
        out = [f for f in self.frames if isinstance(f, StartExchange)]
        self.frames = [f for f in self.frames if not isinstance(f, StartExchange)]
        return out

    def reply_json(self, x: StartExchange, body: bytes, *, headers: Any = ()) -> None:
        conn = self.conn
        conn.exchange_head(x.xid, 200, [("Content-Type", "application/json"), *headers], self.now)
        conn.exchange_data(x.xid, body, self.now)
        conn.exchange_end(x.xid, self.now)

    def reply_status(
        self, x: StartExchange, status: int, body: bytes = b"", *, headers: Any = ()
    ) -> None:
        conn = self.conn
        conn.exchange_head(x.xid, status, list(headers), self.now)
        if body:
            conn.exchange_data(x.xid, body, self.now)
        conn.exchange_end(x.xid, self.now)


def body_of(x: StartExchange) -> dict[str, Any]:
    assert x.body is not None
    msg: dict[str, Any] = json.loads(x.body)
    return msg


def header(x: StartExchange, name: str) -> str | None:
    for key, value in x.headers:
        if key.lower() == name.lower():
            return value
    return None


SSE_HEAD = [("Content-Type", "text/event-stream")]


def sse_event(
    data: bytes | str | None = None,
    *,
    id: str | None = None,
    event: str | None = None,
    retry: int | None = None,
) -> bytes:
    """One SSE event's bytes."""
    lines = []
    if event is not None:
        lines.append(f"event: {event}")
    if id is not None:
        lines.append(f"id: {id}")
    if retry is not None:
        lines.append(f"retry: {retry}")
    if data is not None:
        text = data.decode() if isinstance(data, bytes) else data
        lines.append(f"data: {text}")
    return ("\n".join(lines) + "\n\n").encode()


def connect_http(
    h: Harness,
    *,
    session_id: str | None = "sess-1",
    caps: dict[str, Any] | None = None,
    get_status: int | None = 200,
) -> StartExchange | None:
    """Open, handshake and (Streamable HTTP) answer the GET stream with ``get_status``
    (200: an open SSE stream, returned). Leaves frames and events empty."""
    conn = h.conn
    conn.connect(h.now)
    assert h.take_frames() == [OpenTransport()]
    conn.transport_opened(h.now)
    (post,) = h.exchanges()
    init = body_of(post)
    assert init["method"] == "initialize"
    headers = [("Mcp-Session-Id", session_id)] if session_id else []
    h.reply_json(post, init_result(init["id"], caps=caps), headers=headers)
    xs = h.exchanges()
    assert body_of(xs[0])["method"] == "notifications/initialized"
    h.reply_status(xs[0], 202)
    get = None
    if conn.config.type == "streamable_http":
        (get,) = xs[1:]
        assert get.method == "GET" and get.streaming
        if get_status == 200:
            conn.exchange_head(get.xid, 200, SSE_HEAD, h.now)
        elif get_status is not None:
            h.reply_status(get, get_status)
    else:
        assert xs[1:] == []
    expected = [] if get_status is None and get is not None else [Connected]
    assert [type(e) for e in h.take_events()] == expected
    assert [f for f in h.take_frames() if not isinstance(f, AbortExchange)] == []
    return get
