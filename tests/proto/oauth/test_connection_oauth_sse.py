"""OAuth over the deprecated HTTP+SSE transport (issue 21; 2024-11-05 § HTTP with SSE,
MCP ``basic/authorization``: the token goes "in every HTTP request from client to
server"). A 401 on the event stream's GET, or on a POST to its endpoint, runs the same
flow as on Streamable HTTP; the stream is opened again, or the POST sent again, with
the token. Pure: time is a number, the servers scripted (``_fake.World``)."""

from __future__ import annotations

from typing import Any

import pytest
from _machine_driver import SSE_HEAD, Harness, body_of, header, init_result, result, sse_event

from mcp_proto import deprecations
from mcp_proto.config import sse_config
from mcp_proto.connection import (
    CallSucceeded,
    Connected,
    ConnectFailed,
    OAuthInteraction,
    OpenTransport,
    StartExchange,
)
from mcp_proto.errors import UnauthorizedError
from mcp_proto.oauth import MAX_AUTHORIZATIONS, HttpRequest, OAuthProvider, OpenAuthorization
from mcp_proto.targets import TargetOptions, plan_targets

from ._fake import FakeAS, World, counter_random

URL = "http://127.0.0.1:9/sse"
ENDPOINT = "http://127.0.0.1:9/messages?sid=1"
AS = "http://127.0.0.1:9/as"


@pytest.fixture(autouse=True)
def _fresh_notices() -> None:
    deprecations.reset()


class SseDriver:
    """A legacy HTTP+SSE server behind a scripted authorization server: the event
    stream (GET ``URL``) announces ``ENDPOINT``; POSTs there get 202 and their answers
    come on the stream. ``protect`` says which of the two need the token."""

    def __init__(self, world: World, *, protect: str = "both", handler: bool = True) -> None:
        self.world = world
        self.protect = protect
        self.provider = OAuthProvider(
            URL,
            random_bytes=counter_random(),
            clock=lambda: world.now,
            handler=self._browse if handler else None,
        )
        self.h = Harness(sse_config(URL, ping=None, oauth_provider=self.provider))
        self.mcp: list[StartExchange] = []  # requests to the MCP server, as sent
        self.stream: StartExchange | None = None
        self.interactions = 0
        self.refuse_stream_always = False  # a server refusing every token (a 401 loop)

    def _browse(self, effect: Any) -> str:
        assert isinstance(effect, OpenAuthorization)
        return self.world.authorize(effect.url)

    def _needs_token(self, f: StartExchange) -> bool:
        if self.protect == "both":
            return True
        return (f.method == "GET") == (self.protect == "stream")

    def run(self) -> None:
        h = self.h
        while True:
            frames = h.take_frames()
            if not frames:
                return
            for f in frames:
                if isinstance(f, OAuthInteraction):
                    self.interactions += 1
                    h.conn.oauth_reply(f.handler(f.effect), h.now)
                elif isinstance(f, StartExchange) and f.url in (URL, ENDPOINT):
                    self.mcp.append(f)
                    refused = self.world.resource(HttpRequest(f.method, f.url, f.headers))
                    if self.refuse_stream_always and f.method == "GET":
                        prm = self.world.prm_url
                        challenge = f'Bearer error="invalid_token", resource_metadata="{prm}"'
                        h.reply_status(f, 401, headers=[("WWW-Authenticate", challenge)])
                    elif refused.status != 200 and self._needs_token(f):
                        h.reply_status(f, refused.status, headers=refused.headers)
                    else:
                        self.serve(f)
                elif isinstance(f, StartExchange):
                    req = HttpRequest(f.method, f.url, f.headers, f.body or b"", "other")
                    resp = self.world.respond(req)
                    h.conn.exchange_head(f.xid, resp.status, list(resp.headers), h.now)
                    if resp.body:
                        h.conn.exchange_data(f.xid, resp.body, h.now)
                    h.conn.exchange_end(f.xid, h.now)

    def serve(self, f: StartExchange) -> None:
        h = self.h
        if f.method == "GET":
            self.stream = f
            h.conn.exchange_head(f.xid, 200, SSE_HEAD, h.now)
            h.conn.exchange_data(f.xid, sse_event("/messages?sid=1", event="endpoint"), h.now)
            return
        h.reply_status(f, 202)
        msg = body_of(f)
        if "id" not in msg:
            return
        assert self.stream is not None
        answer = init_result(msg["id"]) if msg["method"] == "initialize" else None
        if answer is None:
            answer = result(msg["id"], {"tools": []})
        h.conn.exchange_data(self.stream.xid, sse_event(answer), h.now)

    def connect(self) -> list[type]:
        self.h.conn.connect(self.h.now)
        assert self.h.take_frames() == [OpenTransport()]
        self.h.conn.transport_opened(self.h.now)
        self.run()
        return [type(e) for e in self.h.take_events(Connected, ConnectFailed)]


def test_a_401_on_the_event_stream_authorizes_and_opens_it_again_with_the_token() -> None:
    world = World(URL, [FakeAS(AS)])
    d = SseDriver(world)
    assert d.connect() == [Connected]
    first, again, *posts = d.mcp
    assert (first.method, again.method) == ("GET", "GET")
    assert header(first, "Authorization") is None
    assert header(again, "Authorization") == "Bearer at-1@" + AS
    # Every POST to the endpoint carries it too (SHTTP-10's rule, on this transport).
    assert [body_of(p)["method"] for p in posts] == ["initialize", "notifications/initialized"]
    assert all(header(p, "Authorization") == "Bearer at-1@" + AS for p in posts)
    assert d.interactions == 1
    assert [r.url for r in world.wire if r.url.startswith(AS)] == [
        AS + "/register",
        AS + "/token",
    ]
    d.h.conn.start_call("tools/list", now=d.h.now)
    d.run()
    assert len(d.h.take_events(CallSucceeded)) == 1
    assert header(d.mcp[-1], "Authorization") == "Bearer at-1@" + AS


def test_a_401_on_a_post_to_the_endpoint_authorizes_and_sends_it_again() -> None:
    world = World(URL, [FakeAS(AS)])
    d = SseDriver(world, protect="posts")
    assert d.connect() == [Connected]
    stream, refused, again, initialized = d.mcp
    assert stream.method == "GET" and header(stream, "Authorization") is None
    assert body_of(refused)["method"] == "initialize"
    assert header(refused, "Authorization") is None
    assert body_of(again) == body_of(refused)  # the same initialize, once more
    assert header(again, "Authorization") == "Bearer at-1@" + AS
    assert header(initialized, "Authorization") == "Bearer at-1@" + AS
    assert d.interactions == 1


def test_without_a_handler_the_refused_stream_fails_the_connect_saying_so() -> None:
    world = World(URL, [FakeAS(AS)])
    d = SseDriver(world, handler=False)
    d.h.conn.connect(d.h.now)
    d.h.take_frames()
    d.h.conn.transport_opened(d.h.now)
    d.run()
    (failed,) = d.h.take_events(ConnectFailed)
    assert isinstance(failed.error, UnauthorizedError)
    assert "handler" in str(failed.error)
    assert d.interactions == 0
    assert [f.method for f in d.mcp] == ["GET"]  # opened once, not again


def test_connect_hands_the_provider_to_an_sse_target() -> None:
    provider = OAuthProvider(URL, random_bytes=counter_random())
    (plan,) = plan_targets(URL, transport="sse", options=TargetOptions(oauth_provider=provider))
    assert [c.type for c in plan.configs] == ["sse"]
    assert plan.configs[0].oauth_provider is provider
    # The fallback chain of an ambiguous URL hands it to every attempt.
    (auto,) = plan_targets("http://127.0.0.1:9/api", options=TargetOptions(oauth_provider=provider))
    assert [c.type for c in auto.configs] == ["streamable_http", "sse", "http"]
    assert all(c.oauth_provider is provider for c in auto.configs)


def test_an_event_stream_refused_for_ever_is_bounded_and_typed() -> None:
    world = World(URL, [FakeAS(AS)])
    d = SseDriver(world)
    d.refuse_stream_always = True
    d.h.conn.connect(d.h.now)
    d.h.take_frames()
    d.h.conn.transport_opened(d.h.now)
    d.run()
    (failed,) = d.h.take_events(ConnectFailed)
    assert isinstance(failed.error, UnauthorizedError)
    gets = [f for f in d.mcp if f.method == "GET"]
    # The first GET, then one more per authorization, MAX_AUTHORIZATIONS in a row.
    assert len(gets) == MAX_AUTHORIZATIONS + 1
