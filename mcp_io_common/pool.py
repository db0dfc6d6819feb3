"""The policy and bookkeeping of both shells' HTTP/1.1 connection pools, without I/O.

``mcp_io_sync._pool`` and ``mcp_io_trio._pool`` open, send on, read and close
connections and wait for a free slot, each its own way; which connection a request
gets, when an idle one is too old to trust, which ones go back to the idle list and
what closing the pool closes is decided here, once (:class:`PoolState`), and so is what
both pools do with it that does not wait (:class:`PoolFront`: building the pool and the
request, taking a connection for a request). Time is a number the caller passes
(``now``: a monotonic clock in seconds), so the rules are tested without a clock
(``tests/proto/test_pool_state.py``).

The rules:

* at most ``max_connections`` requests hold a connection at a time (the shells wait for
  a slot; since a new connection is only made when no idle one is left, that also
  bounds the open connections);
* a request gets the most recently released idle connection (LIFO: the warmest), or a
  new one when there is none;
* an idle connection is reused only if it can serve the origin, is still available and
  the server has not closed it meanwhile (``has_expired``: one ``poll`` of its socket,
  which the shells call outside their locks), and only if it has been idle less than
  ``keepalive_expiry`` seconds: a server closes idle keep-alive connections on its own
  timer (Node's ``http`` server after 5 s, ``keepAliveTimeout``), and a request written
  while it does so fails, where a new connection would not;
* a connection goes back to the idle list only if its response was read to the end
  (httpcore's HTTP/1.1 state machine is back at idle: ``is_available``) and the pool is
  not closed; anything else (an error, an abandoned body, a ``Connection: close``
  response, which h11 leaves unavailable) is closed;
* closing the pool closes every connection, idle or in use (as httpcore's pool does).
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable
from typing import Any, Final, Generic, Protocol, TypeVar

import httpcore

from .httpcore_glue import RequestTarget

__all__ = [
    "KEEPALIVE_EXPIRY",
    "PoolConnection",
    "PoolFront",
    "PoolRequest",
    "PoolState",
    "PoolStream",
]

#: Seconds an idle connection is kept for reuse: under the 5 s after which a Node server
#: closes it (the npm peers, many MCP servers), so the client is the one that closes.
KEEPALIVE_EXPIRY: Final = 4.0

_MAX_TARGETS: Final = 16  # a handful of URLs per server; the cache never grows past it


class PoolConnection(Protocol):
    """What the pool asks of a connection (httpcore's connections and the shells' plain
    ones answer it)."""

    def can_handle_request(self, origin: httpcore.Origin) -> bool: ...

    def is_available(self) -> bool: ...

    def has_expired(self) -> bool: ...


C = TypeVar("C", bound=PoolConnection)


class PoolState(Generic[C]):
    """A pool's connections and slots; not thread-safe (the blocking shell holds its
    lock around each call, the Trio shell runs it in one task at a time)."""

    __slots__ = ("_all", "_idle", "_targets", "closed", "in_use", "keepalive_expiry", "limit")

    def __init__(
        self, max_connections: int, keepalive_expiry: float | None = KEEPALIVE_EXPIRY
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.limit = max_connections
        self.keepalive_expiry = keepalive_expiry
        self.in_use = 0  # requests holding a slot
        self.closed = False
        self._idle: list[tuple[C, float]] = []  # (connection, idle since); the warmest last
        self._all: set[C] = set()  # every open connection
        self._targets: dict[str, RequestTarget] = {}

    @property
    def connections(self) -> int:
        """How many connections are open (idle or in use)."""
        return len(self._all)

    @property
    def idle(self) -> int:
        return len(self._idle)

    def target(self, url: str) -> RequestTarget:
        """The parsed request target for ``url`` (kept for the next request)."""
        target = self._targets.get(url)
        if target is None:
            target = RequestTarget(url)
            if len(self._targets) < _MAX_TARGETS:
                self._targets[url] = target
        return target

    # ------------------------------------------------------------ slots

    def has_slot(self) -> bool:
        return self.in_use < self.limit

    def take_slot(self) -> None:
        self.in_use += 1

    def give_slot(self) -> None:
        self.in_use -= 1

    # ------------------------------------------------------------ connections

    def pop_idle(self, now: float) -> tuple[C | None, list[C]]:
        """The warmest idle connection (or ``None``: open a new one), and the idle ones
        too old to reuse, which are no longer the pool's: the caller closes them."""
        idle = self._idle
        if not idle:
            return None, []
        conn, since = idle.pop()
        expiry = self.keepalive_expiry
        if expiry is None or now - since < expiry:
            return conn, []
        # The warmest is too old, so is every colder one: the whole list goes.
        stale = [conn, *(c for c, _ in idle)]
        idle.clear()
        self._all.difference_update(stale)
        return None, stale

    @staticmethod
    def reusable(conn: C, origin: httpcore.Origin) -> bool:
        """Whether a popped idle connection may serve a request to ``origin``. A server
        may close an idle keep-alive connection at any time: a readable idle socket
        means it did (``has_expired`` polls it, hence outside the caller's lock)."""
        return conn.can_handle_request(origin) and conn.is_available() and not conn.has_expired()

    def opened(self, conn: C) -> None:
        """A new connection, made for a request holding a slot."""
        self._all.add(conn)

    def forget(self, conn: C) -> None:
        """A connection the caller closes (not reusable, or failed)."""
        self._all.discard(conn)

    def check_in(self, conn: C, now: float) -> bool:
        """The response on ``conn`` is closed: its slot is free again. True if the
        connection went back to the idle list; False if the caller must close it."""
        self.in_use -= 1
        if conn.is_available() and not self.closed:
            self._idle.append((conn, now))
            return True
        self._all.discard(conn)
        return False

    def close(self) -> list[C]:
        """The pool closes: every connection, idle or in use, for the caller to close.
        Requests still running fail on their closed connection; their connections are
        closed when they check in."""
        self.closed = True
        conns = list(self._all)
        self._all.clear()
        self._idle.clear()
        return conns


class PoolRequest:
    """One request's arguments as a pool's ``stream()`` keeps them (each shell's
    ``_Stream`` adds the connection and the response, and how it waits for them)."""

    __slots__ = ("content", "extensions", "head", "method", "target", "timeouts")

    def __init__(
        self,
        target: RequestTarget,
        method: bytes,
        headers: list[tuple[bytes, bytes]],
        content: bytes | None,
        extensions: dict[str, Any],
    ) -> None:
        self.target = target
        self.method = method
        self.head = target.head(headers, content)
        self.content = content
        self.extensions = extensions
        self.timeouts: dict[str, float | None] = extensions.get("timeout", {})

    def httpcore_request(self, content: Any) -> httpcore.Request:
        """This request as httpcore's connections (``https``) take it; ``content``: the
        body as the shell's connection reads it (bytes, or an async iterator)."""
        return httpcore.Request(
            self.method,
            self.target.url,
            headers=self.head,
            content=content,
            extensions=self.extensions,
        )


S = TypeVar("S")
R = TypeVar("R")
B = TypeVar("B")
Pool = TypeVar("Pool")


class PoolStream(Generic[Pool, C, R]):
    """What both shells' ``_Stream`` (``pool.stream(...)``'s context manager: a class,
    not a generator, since it runs once per request) keep: the request, then the
    connection and the response it got, handed back once by :meth:`_taken` on exit."""

    __slots__ = ("_conn", "_pool", "_request", "_response")

    def __init__(self, pool: Pool, request: PoolRequest) -> None:
        self._pool = pool
        self._request = request
        self._conn: C | None = None
        self._response: R | None = None

    def _taken(self) -> tuple[C, R] | None:
        """The connection and the response to close and release (None: nothing got)."""
        conn, response = self._conn, self._response
        self._conn = self._response = None
        if conn is None or response is None:
            return None
        return conn, response


class PoolFront(Generic[C, S, R, B]):
    """What both pools do alike: their construction, ``stream()`` and ``request()``
    with httpcore's pool's arguments (``headers`` as a list of byte pairs, without
    ``Host``/``Content-Length``: they are added here, as httpcore does), the counts,
    and which connection a request gets (:meth:`_checkout`). A shell adds how it waits
    for a slot, closes connections and runs a request on one (its ``_Stream``).

    ``S`` is the shell's ``_Stream``; ``R`` what its ``request()`` returns (the
    response, or a coroutine of it); ``B`` its network backend type (httpcore's
    ``NetworkBackend`` or ``AsyncNetworkBackend``)."""

    #: The shell's classes: its ``_Stream``, its plain-HTTP connection (``_plain``) and
    #: httpcore's connection for ``https`` (``HTTPConnection`` / ``AsyncHTTPConnection``).
    _stream_class: Callable[[Any, PoolRequest], S]
    _plain_class: Callable[[httpcore.Origin, B], C]
    _tls_class: Callable[..., C]

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None = None,
        max_connections: int = 32,
        network_backend: B | None = None,
        keepalive_expiry: float | None = KEEPALIVE_EXPIRY,
    ) -> None:
        self._state: PoolState[C] = PoolState(max_connections, keepalive_expiry)
        self._ssl_context = ssl_context
        # Guards _state against the blocking shell's threads. In the Trio shell (one
        # task at a time, and never held across a wait) it is never contended: a
        # C-level acquire, no scheduler pass.
        self._lock = threading.Lock()
        # Plain TCP gets the shell's lean stream; TLS stays entirely httpcore's.
        self._backend: B = network_backend or self._lean_backend()
        self._tls_backend: B = network_backend or self._httpcore_backend()
        self._make_slots(max_connections)

    def _lean_backend(self) -> B:
        """The backend plain connections connect with (the shell's ``FastBackend``)."""
        raise NotImplementedError

    def _httpcore_backend(self) -> B:
        """httpcore's own backend, for ``https`` connections."""
        raise NotImplementedError

    def _make_slots(self, limit: int) -> None:
        """Set up what the shell waits on for one of ``limit`` slots."""
        raise NotImplementedError

    @property
    def connections(self) -> int:
        """How many connections are open (idle or in use)."""
        return self._state.connections

    @property
    def idle(self) -> int:
        return self._state.idle

    def stream(
        self,
        method: bytes,
        url: str,
        *,
        headers: list[tuple[bytes, bytes]],
        content: bytes | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> S:
        """A context manager (``with`` in the blocking shell, ``async with`` in Trio's)
        yielding the response; leaving it closes the response and gives the connection
        back (kept only if the body was read to its end)."""
        request = PoolRequest(self._state.target(url), method, headers, content, extensions or {})
        return self._stream_class(self, request)

    def request(
        self,
        method: bytes,
        url: str,
        *,
        headers: list[tuple[bytes, bytes]],
        content: bytes | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> R:
        """Send a request and read its whole body (awaited in Trio)."""
        request = PoolRequest(self._state.target(url), method, headers, content, extensions or {})
        return self._read_all(self._stream_class(self, request))

    def _read_all(self, stream: S) -> R:
        raise NotImplementedError

    # ------------------------------------------------------------ connections

    def _checkout(
        self, origin: httpcore.Origin, now: float, popped: tuple[C | None, list[C]]
    ) -> tuple[C, list[C]]:
        """The connection a request to ``origin`` gets (it holds a slot), and the idle
        ones found unusable on the way, no longer the pool's: the caller closes them
        (closing may wait, so it is the shell's, outside the lock).

        The warmest idle connection ``PoolState.reusable`` accepts, else a new one,
        which connects on its first request (as httpcore's connections do), so making
        it here does no I/O. ``popped``: ``PoolState.pop_idle(now)``, which the shell
        calls under the same hold of the lock as it takes its slot (one round trip of
        the lock per request in the blocking shell). ``now``: the shell's monotonic
        clock."""
        state, lock = self._state, self._lock
        conn, closing = popped
        while conn is not None:
            # Outside the lock: reusable() polls the socket (a system call, which
            # lets other threads run while this one would hold the lock).
            if state.reusable(conn, origin):
                return conn, closing
            closing.append(conn)
            with lock:
                state.forget(conn)
                conn, stale = state.pop_idle(now)
            closing += stale
        new = self._new_connection(origin)
        with lock:
            state.opened(new)
        return new, closing

    def _new_connection(self, origin: httpcore.Origin) -> C:
        if origin.scheme == b"http":
            # Plain HTTP: h11 driven directly (mcp_io_common/http11.py); TLS stays
            # httpcore's.
            return self._plain_class(origin, self._backend)
        return self._tls_class(
            origin=origin, ssl_context=self._ssl_context, network_backend=self._tls_backend
        )
