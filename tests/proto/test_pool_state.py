"""The rules of both shells' HTTP/1.1 connection pools (``mcp_io_common.pool``), with
fake connections and time as a number: the warmest idle connection first, idle
expiry, what goes back to the idle list, the slots, closing."""

from __future__ import annotations

import httpcore
import pytest

from mcp_io_common.pool import KEEPALIVE_EXPIRY, PoolFront, PoolRequest, PoolState

ORIGIN = httpcore.Origin(b"http", b"127.0.0.1", 8000)
OTHER = httpcore.Origin(b"http", b"127.0.0.1", 8001)


class Conn:
    """A connection as the pool sees it: which origin, available, closed by the server."""

    def __init__(self, name: str, origin: httpcore.Origin = ORIGIN) -> None:
        self.name = name
        self.origin = origin
        self.available = True
        self.expired = False

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return origin == self.origin

    def is_available(self) -> bool:
        return self.available

    def has_expired(self) -> bool:
        return self.expired

    def __repr__(self) -> str:
        return self.name


def _opened(state: PoolState[Conn], *conns: Conn) -> None:
    for conn in conns:
        state.take_slot()
        state.opened(conn)


def test_the_warmest_idle_connection_is_reused_first() -> None:
    state: PoolState[Conn] = PoolState(4)
    a, b = Conn("a"), Conn("b")
    _opened(state, a, b)
    assert state.check_in(a, now=10.0) and state.check_in(b, now=11.0)
    assert (state.connections, state.idle, state.in_use) == (2, 2, 0)
    assert state.pop_idle(now=12.0) == (b, [])
    assert state.pop_idle(now=12.0) == (a, [])
    assert state.pop_idle(now=12.0) == (None, [])


def test_idle_connections_past_the_keepalive_expiry_are_handed_back_to_close() -> None:
    state: PoolState[Conn] = PoolState(4, keepalive_expiry=4.0)
    a, b, c = Conn("a"), Conn("b"), Conn("c")
    _opened(state, a, b, c)
    state.check_in(a, now=0.0)
    state.check_in(b, now=1.0)
    state.check_in(c, now=5.0)
    assert state.pop_idle(now=8.9) == (c, [])  # idle 3.9 s: kept
    # b (idle since 1.0) is past 4 s at 5.0, and so is every colder one.
    assert state.pop_idle(now=5.0) == (None, [b, a])
    assert (state.idle, state.connections) == (0, 1)  # c is in use again


def test_the_expiry_bound_is_exclusive_and_none_keeps_forever() -> None:
    state: PoolState[Conn] = PoolState(2, keepalive_expiry=4.0)
    a = Conn("a")
    _opened(state, a)
    state.check_in(a, now=0.0)
    assert state.pop_idle(now=4.0) == (None, [a])
    forever: PoolState[Conn] = PoolState(2, keepalive_expiry=None)
    _opened(forever, a)
    forever.check_in(a, now=0.0)
    assert forever.pop_idle(now=1e9) == (a, [])
    assert PoolState[Conn](1).keepalive_expiry == KEEPALIVE_EXPIRY < 5.0  # under Node's 5 s


def test_only_an_available_connection_of_an_open_pool_goes_back_to_idle() -> None:
    state: PoolState[Conn] = PoolState(4)
    done, abandoned = Conn("done"), Conn("abandoned")
    _opened(state, done, abandoned)
    abandoned.available = False  # body not read to its end, an error, Connection: close
    assert state.check_in(done, now=0.0) is True
    assert state.check_in(abandoned, now=0.0) is False
    assert (state.idle, state.connections, state.in_use) == (1, 1, 0)


def test_reusable_asks_origin_availability_and_the_server() -> None:
    a = Conn("a")
    assert PoolState.reusable(a, ORIGIN)
    assert not PoolState.reusable(a, OTHER)
    a.expired = True  # the server closed it while idle
    assert not PoolState.reusable(a, ORIGIN)
    b = Conn("b")
    b.available = False
    assert not PoolState.reusable(b, ORIGIN)


def test_slots_bound_the_requests_in_flight() -> None:
    state: PoolState[Conn] = PoolState(2)
    assert state.has_slot()
    state.take_slot()
    state.take_slot()
    assert not state.has_slot()
    state.give_slot()  # a request that failed before it had a connection
    assert state.has_slot()
    with pytest.raises(ValueError, match="at least 1"):
        PoolState(0)


def test_closing_hands_back_every_connection_and_nothing_returns_to_idle() -> None:
    state: PoolState[Conn] = PoolState(4)
    idle, busy = Conn("idle"), Conn("busy")
    _opened(state, idle, busy)
    state.check_in(idle, now=0.0)
    assert sorted(state.close(), key=repr) == [busy, idle]
    assert (state.connections, state.idle) == (0, 0)
    assert state.check_in(busy, now=1.0) is False  # a request that was still running
    assert state.pop_idle(now=1.0) == (None, [])


def test_forget_drops_a_connection_the_caller_closes() -> None:
    state: PoolState[Conn] = PoolState(4)
    a = Conn("a")
    _opened(state, a)
    state.forget(a)
    assert state.connections == 0


def test_targets_are_parsed_once_and_the_cache_is_bounded() -> None:
    state: PoolState[Conn] = PoolState(1)
    url = "http://127.0.0.1:8000/mcp"
    assert state.target(url) is state.target(url)
    for i in range(40):
        state.target(f"http://127.0.0.1:8000/{i}")
    assert len(state._targets) == 16


def test_a_request_gets_host_first_and_a_content_length() -> None:
    state: PoolState[Conn] = PoolState(1)
    request = PoolRequest(
        state.target("http://example.com/mcp"),
        b"POST",
        [(b"Accept", b"*/*")],
        b"{}",
        {"timeout": {"read": 1.0}},
    )
    assert request.head == [
        (b"Host", b"example.com"),
        (b"Accept", b"*/*"),
        (b"Content-Length", b"2"),
    ]
    assert request.timeouts == {"read": 1.0}
    assert PoolRequest(state.target("http://example.com:81/"), b"GET", [], None, {}).head == [
        (b"Host", b"example.com:81")
    ]


# ---------------------------------------------------------------- PoolFront._checkout


class _Made(Conn):
    """A new connection as a pool makes it: which kind (plain or TLS) and with what."""

    def __init__(self, origin: httpcore.Origin, kind: str, **options: object) -> None:
        super().__init__(f"new-{kind}", origin)
        self.kind = kind
        self.options = options


class _Front(PoolFront[Conn, object, object, str]):
    """A pool front with the shell's parts faked: no I/O, no waiting."""

    def _lean_backend(self) -> str:
        return "lean"

    def _httpcore_backend(self) -> str:
        return "httpcore"

    def _make_slots(self, limit: int) -> None:
        self.limit = limit

    @staticmethod
    def _plain_class(origin: httpcore.Origin, backend: str) -> Conn:
        return _Made(origin, "plain", backend=backend)

    @staticmethod
    def _tls_class(**options: object) -> Conn:
        origin = options.pop("origin")
        assert isinstance(origin, httpcore.Origin)
        return _Made(origin, "tls", **options)


def _idle(front: _Front, *conns: Conn, now: float = 0.0) -> None:
    state = front._state
    for conn in conns:
        state.take_slot()
        state.opened(conn)
    for conn in conns:
        state.check_in(conn, now)


def test_checkout_reuses_the_warmest_idle_connection_and_closes_nothing() -> None:
    front = _Front(max_connections=4)
    a, b = Conn("a"), Conn("b")
    _idle(front, a, b)
    assert front._checkout(ORIGIN, 1.0, front._state.pop_idle(1.0)) == (b, [])
    assert (front.connections, front.idle) == (2, 1)


def test_checkout_hands_back_every_unusable_idle_connection_to_close() -> None:
    """Closed by the server, another origin, too old: each is forgotten and handed back
    (the shell closes them), the next idle one is tried, then a new one is made."""
    front = _Front(max_connections=8, keepalive_expiry=4.0)
    old, good, other, closed = Conn("old"), Conn("good"), Conn("other", OTHER), Conn("closed")
    _idle(front, old, now=0.0)
    _idle(front, good, other, closed, now=3.0)
    closed.expired = True
    assert front._checkout(ORIGIN, 5.0, front._state.pop_idle(5.0)) == (good, [closed, other])
    assert front.connections == 2  # good (in use) and old (still idle)
    conn, closing = front._checkout(ORIGIN, 5.0, front._state.pop_idle(5.0))
    assert closing == [old]  # idle for 5 s: past the keepalive expiry
    assert isinstance(conn, _Made) and conn.kind == "plain"
    assert (front.connections, front.idle) == (2, 0)


def test_checkout_makes_a_plain_or_tls_connection_on_the_shells_backends() -> None:
    front = _Front(max_connections=2, ssl_context=None)
    assert front.limit == 2
    plain, _ = front._checkout(ORIGIN, 0.0, front._state.pop_idle(0.0))
    assert isinstance(plain, _Made) and plain.kind == "plain"
    assert plain.options == {"backend": "lean"}
    secure = httpcore.Origin(b"https", b"example.com", 443)
    tls, _ = front._checkout(secure, 0.0, front._state.pop_idle(0.0))
    assert isinstance(tls, _Made) and tls.kind == "tls"
    assert tls.options == {"ssl_context": None, "network_backend": "httpcore"}
    # A backend the caller gives is used for both kinds.
    given = _Front(network_backend="given")
    made, _ = given._checkout(ORIGIN, 0.0, given._state.pop_idle(0.0))
    assert isinstance(made, _Made) and made.options == {"backend": "given"}
