"""The connection machine drives the OAuth flow (issue 21, ``connection/_oauth.py``): a
401 on the handshake parks the request, the flow's own requests are ``StartExchange``
frames to the authorization server, the browser step is an ``OAuthInteraction`` frame,
and the refused request goes out again once with the token, which every later request
carries (SHTTP-10). Pure: time is a number, the servers are scripted (``_fake.World``)."""

from __future__ import annotations

from typing import Any

from _machine_driver import Harness, body_of, header, init_result, result

from mcp_proto.config import streamable_http_config
from mcp_proto.connection import (
    CallFailed,
    CallSucceeded,
    Connected,
    ConnectFailed,
    OAuthInteraction,
    OpenTransport,
    StartExchange,
)
from mcp_proto.errors import InsufficientScopeError, UnauthorizedError
from mcp_proto.oauth import (
    MAX_AUTHORIZATIONS,
    HttpRequest,
    OAuthDiscoveryError,
    OAuthProvider,
    OpenAuthorization,
)

from ._fake import FakeAS, World, counter_random

URL = "http://127.0.0.1:9/mcp"
AS = "http://127.0.0.1:9/as"


class Driver:
    """A connection to a scripted MCP server behind a scripted authorization server.
    The MCP endpoint answers like ``World.resource`` (401 without a valid token, then
    the handshake); every other URL is the world's."""

    def __init__(self, world: World, *, handler: bool = True, **kw: Any) -> None:
        self.world = world
        self.provider = OAuthProvider(
            URL,
            random_bytes=counter_random(),
            clock=lambda: world.now,
            handler=self._browse if handler else None,
            **kw,
        )
        self.h = Harness(streamable_http_config(URL, oauth_provider=self.provider))
        self.mcp: list[StartExchange] = []  # requests to the MCP server, as sent
        self.interactions = 0

    def _browse(self, effect: Any) -> str:
        assert isinstance(effect, OpenAuthorization)
        self.world.authorize_urls.append(effect.url)
        return self.world.authorize(effect.url)

    def run(self, mcp: Any) -> None:
        """Perform frames until none is left; ``mcp(frame)`` answers the MCP server's
        requests that carry a valid token (the others get the world's 401)."""
        h = self.h
        while True:
            frames = h.take_frames()
            if not frames:
                return
            for f in frames:
                if isinstance(f, OAuthInteraction):
                    self.interactions += 1
                    h.conn.oauth_reply(f.handler(f.effect), h.now)
                elif isinstance(f, StartExchange) and f.url == URL:
                    self.mcp.append(f)
                    req = HttpRequest(f.method, f.url, f.headers, f.body or b"")
                    refused = self.world.resource(req)
                    if refused.status != 200:
                        h.reply_status(f, refused.status, headers=refused.headers)
                    else:
                        mcp(f)
                elif isinstance(f, StartExchange):
                    req = HttpRequest(f.method, f.url, f.headers, f.body or b"", "other")
                    resp = self.world.respond(req)
                    h.conn.exchange_head(f.xid, resp.status, list(resp.headers), h.now)
                    if resp.body:
                        h.conn.exchange_data(f.xid, resp.body, h.now)
                    h.conn.exchange_end(f.xid, h.now)

    def serve(self, f: StartExchange) -> None:
        """A legacy-era MCP server: initialize, 202 for notifications, GET 405, a
        result for anything else."""
        h = self.h
        if f.method == "GET":
            h.reply_status(f, 405)
            return
        msg = body_of(f)
        if "id" not in msg:
            h.reply_status(f, 202)
        elif msg["method"] == "initialize":
            h.reply_json(f, init_result(msg["id"]), headers=[("Mcp-Session-Id", "s1")])
        else:
            h.reply_json(f, result(msg["id"], {"tools": []}))


def connect(d: Driver) -> None:
    d.h.conn.connect(d.h.now)
    assert d.h.take_frames() == [OpenTransport()]
    d.h.conn.transport_opened(d.h.now)
    d.run(d.serve)


def test_a_401_on_the_handshake_authorizes_and_sends_initialize_again_with_the_token() -> None:
    world = World(URL, [FakeAS(AS)])
    d = Driver(world)
    connect(d)
    assert [type(e) for e in d.h.take_events(Connected, ConnectFailed)] == [Connected]
    first, again, *rest = d.mcp
    assert header(first, "Authorization") is None
    assert body_of(again) == body_of(first)  # the same initialize, sent once more
    assert header(again, "Authorization") == "Bearer at-1@" + AS
    # Every later request carries it (SHTTP-10): notifications/initialized, the GET.
    assert rest and all(header(f, "Authorization") == "Bearer at-1@" + AS for f in rest)
    assert d.interactions == 1
    # The flow's own requests went to the authorization server, with their own URLs.
    assert [r.url for r in world.wire if r.url.startswith(AS)] == [
        AS + "/register",
        AS + "/token",
    ]
    assert d.provider.current_token() is not None


def test_later_calls_use_the_token_without_a_new_flow() -> None:
    world = World(URL, [FakeAS(AS)])
    d = Driver(world)
    connect(d)
    d.h.take_events()
    before = len(world.wire)
    d.h.conn.start_call("tools/list", now=d.h.now)
    d.run(d.serve)
    (ok,) = d.h.take_events(CallSucceeded)
    assert ok.result == {"tools": []}
    assert header(d.mcp[-1], "Authorization") == "Bearer at-1@" + AS
    assert d.interactions == 1
    assert all(r.purpose == "resource" or not r.url.startswith(AS) for r in world.wire[before:])


def test_the_closing_delete_carries_the_token() -> None:
    # SHTTP-10: the session's DELETE on close is a request to the MCP server too.
    world = World(URL, [FakeAS(AS)])
    d = Driver(world)
    connect(d)
    d.h.take_events()
    d.h.conn.close(d.h.now)
    (delete,) = [
        f for f in d.h.take_frames() if isinstance(f, StartExchange) and f.method == "DELETE"
    ]
    assert header(delete, "Mcp-Session-Id") == "s1"
    assert header(delete, "Authorization") == "Bearer at-1@" + AS


def test_without_a_handler_the_connect_fails_with_unauthorized_saying_why() -> None:
    world = World(URL, [FakeAS(AS)])
    d = Driver(world, handler=False)
    connect(d)
    (failed,) = d.h.take_events(ConnectFailed)
    assert isinstance(failed.error, UnauthorizedError)
    assert "handler" in str(failed.error)
    assert d.interactions == 0


def test_a_refused_discovery_fails_the_connect_with_the_oauth_error_chained() -> None:
    world = World(URL, [FakeAS(AS)], prm_resource="http://127.0.0.1:9/other")
    d = Driver(world)
    connect(d)
    (failed,) = d.h.take_events(ConnectFailed)
    assert isinstance(failed.error, OAuthDiscoveryError)
    assert failed.error.reason == "resource_mismatch"
    assert failed.error.http_status == 401
    assert isinstance(failed.error.__cause__, UnauthorizedError)
    assert d.interactions == 0
    # Nothing reached the authorization server.
    assert not [r for r in world.wire if r.url.startswith(AS)]


def test_a_resource_that_refuses_every_token_is_given_up_after_the_bound() -> None:
    world = World(URL, [FakeAS(AS)])
    d = Driver(world)
    d.h.conn.connect(d.h.now)
    d.h.take_frames()
    d.h.conn.transport_opened(d.h.now)

    def insufficient(f: StartExchange) -> None:
        d.h.reply_status(
            f,
            403,
            headers=[("WWW-Authenticate", 'Bearer error="insufficient_scope", scope="more"')],
        )

    d.run(insufficient)
    (failed,) = d.h.take_events(ConnectFailed)
    assert isinstance(failed.error, InsufficientScopeError)
    # MAX_AUTHORIZATIONS authorizations (the 401's, then step-ups), each followed by
    # one resend; the last refusal is the error.
    assert d.interactions == MAX_AUTHORIZATIONS
    assert len(d.mcp) == 1 + MAX_AUTHORIZATIONS


def test_an_expired_token_is_refreshed_on_the_401_without_a_browser_step() -> None:
    world = World(URL, [FakeAS(AS)])
    d = Driver(world)
    connect(d)
    d.h.take_events()
    # An hour later (wall time): the token expired, so the call goes without it; the
    # 401 is answered with the stored refresh token and the call sent again.
    world.now += 4000
    d.h.conn.start_call("tools/list", now=d.h.now)
    d.run(d.serve)
    events = d.h.take_events(CallSucceeded, CallFailed)
    assert [type(e) for e in events] == [CallSucceeded]
    refreshes = [r for r in world.wire if r.url == AS + "/token" and b"refresh_token" in r.body]
    assert refreshes  # the stored refresh token answered the 401, no new browser step
    assert d.interactions == 1
    call, again = d.mcp[-2:]
    assert header(call, "Authorization") is None  # an expired token is not presented
    assert header(again, "Authorization") == "Bearer at-2@" + AS


def test_the_authorization_bound_holds_for_the_connection_not_each_request() -> None:
    # initialize succeeds; every tools/list is refused with insufficient_scope. The first
    # call spends the bound; the next one does not start over (consecutive
    # authorizations without any success are bounded for the whole connection).
    world = World(URL, [FakeAS(AS)])
    d = Driver(world)
    connect(d)
    d.h.take_events()
    before = d.interactions

    def insufficient(f: StartExchange) -> None:
        if f.method == "POST" and body_of(f).get("method") == "tools/list":
            d.h.reply_status(
                f,
                403,
                headers=[("WWW-Authenticate", 'Bearer error="insufficient_scope", scope="x"')],
            )
        else:
            d.serve(f)

    for _ in range(2):
        d.h.conn.start_call("tools/list", now=d.h.now)
        d.run(insufficient)
        (failed,) = d.h.take_events(CallFailed)
        assert isinstance(failed.error, InsufficientScopeError)
    assert d.interactions - before == MAX_AUTHORIZATIONS


# ---------------------------------------------------------------- the GET stream


def _get_stream_server(d: Driver, refusals: int) -> Any:
    """``Driver.serve``, but the GET stream is refused (401 ``invalid_token``, as for a
    token revoked while the session lives) ``refusals`` times, then opened (an SSE head
    and nothing more: the stream stays open)."""
    gets: list[StartExchange] = []

    def serve(f: StartExchange) -> None:
        if f.method != "GET":
            d.serve(f)
            return
        gets.append(f)
        if len(gets) <= refusals:
            challenge = f'Bearer error="invalid_token", resource_metadata="{d.world.prm_url}"'
            d.h.reply_status(f, 401, headers=[("WWW-Authenticate", challenge)])
            return
        d.h.conn.exchange_head(f.xid, 200, [("Content-Type", "text/event-stream")], d.h.now)

    serve.gets = gets  # type: ignore[attr-defined]
    return serve


def test_a_401_on_the_get_stream_authorizes_and_opens_it_again_with_the_new_token() -> None:
    world = World(URL, [FakeAS(AS)])
    d = Driver(world)
    serve = _get_stream_server(d, refusals=1)
    d.h.conn.connect(d.h.now)
    assert d.h.take_frames() == [OpenTransport()]
    d.h.conn.transport_opened(d.h.now)
    d.run(serve)
    assert [type(e) for e in d.h.take_events(Connected, ConnectFailed)] == [Connected]
    first, again = serve.gets
    assert header(first, "Authorization") == "Bearer at-1@" + AS
    # The refused token had a refresh token: refreshed, no second browser trip.
    assert header(again, "Authorization") == "Bearer at-2@" + AS
    assert d.interactions == 1
    assert [r.url for r in world.wire if r.url.startswith(AS)] == [
        AS + "/register",
        AS + "/token",
        AS + "/token",
    ]
    # Requests keep flowing with the new token.
    d.h.conn.start_call("tools/list", now=d.h.now)
    d.run(serve)
    assert len(d.h.take_events(CallSucceeded)) == 1
    assert header(d.mcp[-1], "Authorization") == "Bearer at-2@" + AS


def test_a_get_stream_refused_for_ever_stops_at_the_authorization_bound() -> None:
    world = World(URL, [FakeAS(AS)])
    d = Driver(world)
    serve = _get_stream_server(d, refusals=1000)
    d.h.conn.connect(d.h.now)
    d.h.take_frames()
    d.h.conn.transport_opened(d.h.now)
    d.run(serve)
    assert [type(e) for e in d.h.take_events(Connected, ConnectFailed)] == [Connected]
    # One GET, then one more per authorization, then the stream stays closed: the
    # connection is not taken down by its optional stream.
    assert 1 < len(serve.gets) <= MAX_AUTHORIZATIONS + 1
    d.h.conn.start_call("tools/list", now=d.h.now)
    d.run(serve)
    assert d.h.take_events(CallSucceeded)


# ---------------------------------------------------------------- DEP-7


def test_the_dcr_notice_goes_through_the_deprecation_registry_once() -> None:
    from mcp_proto import deprecations
    from mcp_proto.connection import Diagnostic

    deprecations.reset()
    try:
        world = World(URL, [FakeAS(AS)])
        d = Driver(world)
        connect(d)
        notices = [e for e in d.h.take_events(Diagnostic) if e.deprecation]
        # The registry's text and key: the driver announces it with the host's logger
        # (DEP-11), spent once written (DEP-12).
        assert [(n.level, n.deprecation) for n in notices] == [("warning", "oauth_dcr")]
        assert notices[0].message == deprecations.REGISTRY["oauth_dcr"].notice
        deprecations.announce("oauth_dcr", lambda text: None)  # (what a driver does)
        assert deprecations.state("oauth_dcr") == "announced"

        # Another server registering dynamically in the same process: not again.
        other = Driver(World(URL, [FakeAS(AS)]))
        connect(other)
        assert any(r.url == AS + "/register" for r in other.world.wire)
        assert [e for e in other.h.take_events(Diagnostic) if e.deprecation] == []
    finally:
        deprecations.reset()


def test_a_get_stream_refused_now_and_then_is_authorized_each_time() -> None:
    # A token revoked again and again over a long session: each refusal of the GET
    # stream is answered, as the reopened stream's 2xx proves the authorization worked
    # (the bound counts authorizations in a row that proved nothing, not all of them).
    world = World(URL, [FakeAS(AS)])
    d = Driver(world)
    gets: list[StartExchange] = []

    def serve(f: StartExchange) -> None:
        if f.method != "GET":
            d.serve(f)
            return
        gets.append(f)
        if len(gets) % 2:
            challenge = f'Bearer error="invalid_token", resource_metadata="{world.prm_url}"'
            d.h.reply_status(f, 401, headers=[("WWW-Authenticate", challenge)])
        else:
            d.h.conn.exchange_head(f.xid, 200, [("Content-Type", "text/event-stream")], d.h.now)

    d.h.conn.connect(d.h.now)
    d.h.take_frames()
    d.h.conn.transport_opened(d.h.now)
    d.run(serve)
    assert [type(e) for e in d.h.take_events(Connected, ConnectFailed)] == [Connected]
    rounds = MAX_AUTHORIZATIONS + 2
    for _ in range(rounds - 1):
        assert len(gets) % 2 == 0  # the stream is open
        d.h.conn.exchange_end(gets[-1].xid, d.h.now)  # the server closes it
        d.h.advance(d.h.now + 120)  # its reconnect delay
        d.run(serve)
    assert len(gets) == 2 * rounds
    tokens = [header(g, "Authorization") for g in gets]
    # Each reopened stream carries a token newer than the one refused just before.
    assert all(tokens[i] != tokens[i + 1] for i in range(0, len(tokens), 2))
