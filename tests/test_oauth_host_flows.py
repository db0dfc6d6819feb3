"""The host side of OAuth written once (issue 22), without a socket: ``BrowserOAuth``'s
steps as flows (``mcp_io_common.oauth_callback.BrowserOAuthBase``), the callback
request's bounded head (``RequestHead``) and a flow's exchange but its I/O
(``mcp_io_common.oauth_exchange``). The flows run against the scripted authorization
server of ``tests/proto/oauth/_fake.py``; the shells' sockets, browsers and a real
authorization server are ``tests/shells/test_oauth_authenticate.py``'s."""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpcore
import pytest

from mcp_io_common.oauth_callback import (
    MAX_REQUEST_HEAD,
    NOT_FOUND,
    RECEIVED,
    AwaitRedirect,
    BrowserFlow,
    BrowserOAuthBase,
    OpenBrowser,
    RequestHead,
)
from mcp_io_common.oauth_exchange import EXCHANGE_TIMEOUTS, FlowExchange, FlowRun, exchanges
from mcp_proto.errors import RequestTimeoutError, TransportError
from mcp_proto.oauth import (
    AuthorizationResponse,
    HttpRequest,
    HttpResponse,
    Notice,
    OAuthCallbackError,
    OAuthCallbackTimeoutError,
    OAuthProvider,
    ObtainAssertion,
    OpenAuthorization,
    Token,
)
from tests.proto.oauth._fake import FakeAS, World, counter_random

SERVER = "https://mcp.example.com/mcp"
AS = "https://auth.example.com"
REDIRECT = "http://127.0.0.1:8765/callback"


# ---------------------------------------------------------------- the callback's head

CALLBACK = b"GET /callback?code=c1&state=s1&code=c2 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@pytest.mark.parametrize("size", [1, 7, len(CALLBACK)])
def test_the_head_is_read_to_its_blank_line_in_any_chunks(size: int) -> None:
    head = RequestHead()
    chunks = [CALLBACK[i : i + size] for i in range(0, len(CALLBACK), size)]
    wanted = [head.feed(chunk) for chunk in chunks]
    # More is wanted until the blank line arrived, then not.
    assert wanted == [True] * (len(chunks) - 1) + [False]
    # The query verbatim, repeated parameters kept for the core to refuse (AUTH-29).
    assert head.answer("/callback") == ("code=c1&state=s1&code=c2", RECEIVED)


@pytest.mark.parametrize(
    "data",
    [
        b"GET /favicon.ico HTTP/1.1\r\n\r\n",
        b"GET /callback HTTP/1.1\r\n\r\n",  # no query
        b"POST /callback?code=c HTTP/1.1\r\n\r\n",
        b"GET /callback?code=c",  # the peer closed mid-line
    ],
)
def test_anything_but_the_callback_is_answered_404(data: bytes) -> None:
    head = RequestHead()
    head.feed(data)
    assert head.feed(b"") is False  # the connection's end: read no more
    assert head.answer("/callback") == (None, NOT_FOUND)


def test_a_head_past_the_bound_is_refused_unread() -> None:
    head = RequestHead()
    line = b"GET /callback?code=c&state=s HTTP/1.1\r\n"
    assert head.feed(line) is True
    filler = b"X-Pad: " + b"a" * 1000 + b"\r\n"
    fed = len(line)
    while head.feed(filler):
        fed += len(filler)
        assert fed <= MAX_REQUEST_HEAD
    # The request line alone names the callback, but a head this long is no
    # browser's redirect.
    assert head.answer("/callback") == (None, NOT_FOUND)


# ---------------------------------------------------------------- one exchange


def request(bound: int | None = 10, **kw: Any) -> HttpRequest:
    return HttpRequest(
        "POST",
        f"{AS}/token",
        (("Content-Type", "application/x-www-form-urlencoded"),),
        b"code=secret",
        purpose="token",
        max_response_bytes=bound,
        **kw,
    )


def test_the_body_is_kept_up_to_the_bound_plus_one_chunk() -> None:
    exchange = FlowExchange(request(bound=10))
    assert exchange.keep(b"0123") is True
    assert exchange.keep(b"456789") is True  # exactly the bound: read on
    assert exchange.keep(b"ab") is False  # past it: the flow refuses the document
    got = exchange.response(httpcore.Response(200, headers=[(b"Content-Type", b"x/y")]))
    assert got.status == 200 and got.headers == (("Content-Type", "x/y"),)
    assert got.body == b"0123456789ab" and got.now is not None


def test_without_a_bound_the_whole_body_is_kept() -> None:
    exchange = FlowExchange(request(bound=None))
    assert all(exchange.keep(b"x" * 4096) for _ in range(100))
    assert len(exchange.response(httpcore.Response(200)).body) == 409600


def test_the_request_as_httpcore_arguments() -> None:
    args = FlowExchange(request()).stream_args()
    assert args == {
        "method": "POST",
        "url": f"{AS}/token",
        "headers": [(b"Content-Type", b"application/x-www-form-urlencoded")],
        "content": b"code=secret",
        "extensions": {"timeout": EXCHANGE_TIMEOUTS},
    }


@pytest.mark.parametrize(
    ("raised", "typed"),
    [
        (httpcore.ReadTimeout("read timed out"), RequestTimeoutError),
        (httpcore.ConnectTimeout(""), RequestTimeoutError),
        (httpcore.ConnectError("refused"), TransportError),
        (httpcore.RemoteProtocolError("bad"), TransportError),
        (ConnectionResetError(104, "reset"), TransportError),
    ],
)
def test_a_failed_exchange_is_a_typed_error_naming_the_step(
    raised: Exception, typed: type[Exception]
) -> None:
    exchange = FlowExchange(request())
    with pytest.raises(typed) as info, exchange.errors():
        raise raised
    message = str(info.value)
    assert f"OAuth token request to {AS}/token" in message
    assert "secret" not in message and info.value.__cause__ is raised


def test_other_failures_pass_through() -> None:
    with pytest.raises(KeyError), FlowExchange(request()).errors():
        raise KeyError("a bug, not the network")


# ---------------------------------------------------------------- stepping a flow


class Recorded:
    """A provider flow written by hand, its end recorded."""

    def __init__(self, effects: list[Any]) -> None:
        self.effects = effects
        self.replies: list[Any] = []
        self.closed = False

    def flow(self) -> Generator[Any, Any, str]:
        try:
            for effect in self.effects:
                self.replies.append((yield effect))
            return "done"
        finally:
            self.closed = True


@pytest.fixture
def records() -> Iterator[tuple[logging.Logger, list[logging.LogRecord]]]:
    logger = logging.getLogger("test.oauth.host_flows")
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign, assignment]
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield logger, seen
    finally:
        logger.removeHandler(handler)


def test_exchanges_pass_requests_on_and_log_notices(
    records: tuple[logging.Logger, list[logging.LogRecord]],
) -> None:
    logger, seen = records
    first, second = request(), request(bound=5)
    script = Recorded(
        [
            first,
            Notice("migration", "the server moved"),
            second,
            Notice("token_discarded", "an expired token"),
        ]
    )
    run = FlowRun(exchanges(script.flow(), logger))
    reply = HttpResponse(200)
    with run:
        assert run.send(None) is first
        assert run.send(reply) is second
        assert run.send(reply) is None
    assert run.result == "done" and script.closed
    # The notices were answered None; each exchange its response.
    assert script.replies == [reply, None, reply, None]
    assert [(r.levelno, r.getMessage()) for r in seen] == [
        (logging.WARNING, "OAuth: the server moved"),
        (logging.INFO, "OAuth: an expired token"),
    ]


@pytest.mark.parametrize(
    "effect",
    [OpenAuthorization("https://as/authorize", REDIRECT), ObtainAssertion("aud", "res")],
)
def test_exchanges_refuse_any_other_effect_and_close_the_flow(
    effect: Any, records: tuple[logging.Logger, list[logging.LogRecord]]
) -> None:
    script = Recorded([request(), effect, request()])
    run = FlowRun(exchanges(script.flow(), records[0]))
    with pytest.raises(OAuthCallbackError) as info, run:
        run.send(None)
        run.send(HttpResponse(200))
    assert info.value.reason == "no_handler"
    assert type(effect).__name__ in str(info.value) and script.closed


def test_leaving_a_run_early_closes_the_flow(
    records: tuple[logging.Logger, list[logging.LogRecord]],
) -> None:
    script = Recorded([request(), request()])
    with pytest.raises(TransportError), FlowRun(exchanges(script.flow(), records[0])) as run:
        run.send(None)
        raise TransportError("the exchange failed")  # as a shell's fetch raises
    assert script.closed and script.replies == []


# ---------------------------------------------------------------- BrowserOAuth's steps


class Browser(BrowserOAuthBase):
    """The shared part alone: the flows are driven here, not by a shell."""

    def handle(self, effect: Any) -> Any:  # pragma: no cover - the shells' (never called)
        raise AssertionError(effect)


def browser(**kw: Any) -> tuple[Browser, World, OAuthProvider]:
    world = World(SERVER, [FakeAS(AS)])
    provider = OAuthProvider(SERVER, random_bytes=counter_random(), redirect_uri=REDIRECT)
    return Browser(provider, **kw), world, provider


def play(flow: BrowserFlow[Any], world: World, *, arrives: bool = True) -> tuple[Any, list[Any]]:
    """Drive a flow as a shell would, the world answering: exchanges from the fake
    servers, the browser following the URL to the redirect, which arrives (or not)."""
    seen: list[Any] = []
    redirect: list[str] = []
    with FlowRun(flow) as run:
        effect = run.send(None)
        while effect is not None:
            seen.append(effect)
            reply: Any = None
            if isinstance(effect, HttpRequest):
                reply = world.respond(effect)
            elif isinstance(effect, OpenBrowser):
                redirect.append(world.authorize(effect.url))
            elif isinstance(effect, AwaitRedirect):
                reply = urlsplit(redirect[-1]).query if arrives else None
            effect = run.send(reply)
    return run.result, seen


def test_authenticate_discovers_opens_waits_and_exchanges_the_code() -> None:
    auth, world, provider = browser(timeout=60)
    token, seen = play(auth._authenticate_flow(None, None), world)
    assert isinstance(token, Token) and provider.current_token() == token
    kinds = [type(e).__name__ if not isinstance(e, HttpRequest) else e.purpose for e in seen]
    # Discovery and registration, then the browser and the wait, then the token.
    at = kinds.index("OpenBrowser")
    assert {"resource_metadata", "server_metadata", "registration"} <= set(kinds[:at])
    assert kinds[at:] == ["OpenBrowser", "AwaitRedirect", "token"]
    opened, waited = seen[at], seen[at + 1]
    assert opened.url.startswith(f"{AS}/authorize?") and "code_challenge=" in opened.url
    assert dict(parse_qsl(urlsplit(opened.url).query))["redirect_uri"] == REDIRECT
    assert waited == AwaitRedirect(60)
    assert opened.url not in repr(opened)  # it carries state: kept out of a repr


def test_authenticate_without_a_browser_logs_the_url(
    records: tuple[logging.Logger, list[logging.LogRecord]],
) -> None:
    logger, seen_logs = records
    auth, world, _provider = browser(logger=logger, auto_open_browser=True)
    flow = auth._authenticate_flow(5, False)  # the call's arguments win
    run = FlowRun(flow)
    with run:
        effect = run.send(None)
        while isinstance(effect, HttpRequest):
            effect = run.send(world.respond(effect))
        assert effect == AwaitRedirect(5)  # no OpenBrowser
        assert seen_logs[-1].levelno == logging.WARNING
        assert "open this URL to authorize" in seen_logs[-1].getMessage()
        logged = seen_logs[-1].args
        assert isinstance(logged, tuple) and isinstance(logged[0], str)
        redirect = world.authorize(logged[0])  # the user opened it
        effect = run.send(urlsplit(redirect).query)
        assert isinstance(effect, HttpRequest) and effect.purpose == "token"
        assert run.send(world.respond(effect)) is None
    assert isinstance(run.result, Token)


def test_a_redirect_that_never_comes_times_out() -> None:
    auth, world, provider = browser(timeout=300)
    with pytest.raises(OAuthCallbackTimeoutError) as info:
        play(auth._authenticate_flow(0.5, None), world, arrives=False)
    error = info.value
    assert error.reason == "timeout" and isinstance(error, TimeoutError)
    assert str(error) == f"no authorization response reached {REDIRECT} within 0.5 s"
    assert provider.current_token() is None


def test_authenticate_is_the_authorization_code_flow_checked_before_anything() -> None:
    from mcp_proto.oauth import ClientInfo

    provider = OAuthProvider(
        SERVER,
        random_bytes=counter_random(),
        redirect_uri=REDIRECT,
        grant="client_credentials",
        client_info=ClientInfo("app", "secret", issuer=AS),
    )
    auth = Browser(provider)
    # Raised by the call itself: the shell has not opened its listener yet.
    with pytest.raises(ValueError, match="client_credentials"):
        auth._authenticate_flow(None, None)


def test_the_handler_opens_the_browser_step_and_returns_what_arrived() -> None:
    auth, _world, _provider = browser(timeout=42)
    step = OpenAuthorization(f"{AS}/authorize?state=s", REDIRECT)
    flow = auth._handler_flow(step)
    assert flow.send(None) == OpenBrowser(step.url)
    assert flow.send(None) == AwaitRedirect(42)
    with pytest.raises(StopIteration) as done:
        flow.send("code=c&state=s")
    answer = done.value.value
    assert isinstance(answer, AuthorizationResponse)
    assert answer.redirect == f"{REDIRECT}?code=c&state=s" and answer.now is not None


def test_the_handler_answers_the_browser_step_only() -> None:
    auth, _world, _provider = browser()
    with pytest.raises(OAuthCallbackError) as info:
        auth._handler_flow(ObtainAssertion(AS, SERVER))  # before any listener opens
    assert info.value.reason == "no_handler"


def test_the_handler_times_out_with_the_constructors_timeout() -> None:
    auth, _world, _provider = browser(timeout=7, auto_open_browser=False)
    flow = auth._authorize_flow(f"{AS}/authorize?state=s", REDIRECT)
    assert flow.send(None) == AwaitRedirect(7)
    with pytest.raises(OAuthCallbackTimeoutError, match="within 7 s"):
        flow.send(None)
