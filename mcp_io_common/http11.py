"""The client side of one plain HTTP/1.1 keep-alive connection, without I/O: h11's
state machine, with httpcore's exceptions and httpcore's HTTP/1.1 rules.

Both shells' pools drive it over their plain TCP streams (``_pool._PlainConnection``):
they write what :meth:`Http11.request` returns and feed what they read until
:meth:`Http11.head` and :meth:`Http11.chunk` give something. TLS and proxies stay
httpcore's own connections. Why not httpcore's ``HTTP11Connection`` here too: it wraps
every step of a request (a ``Trace`` context and a ``map_exceptions`` context manager
per phase, ``Request``/``Response`` model checks, a connection wrapper around the HTTP/1.1
one) at about 150 Python calls per request, a fifth of a whole 2026-07-28 Trio
``tools/call`` over HTTP. HTTP itself stays h11's.

The rules kept from httpcore (``_async/http11.py``):

* 1xx informational responses before the response are skipped;
* a server that closes before sending a response: ``RemoteProtocolError("Server
  disconnected without sending a response.")``;
* h11's own protocol errors become httpcore's ``RemoteProtocolError`` /
  ``LocalProtocolError`` (the shells map httpcore's exceptions to the machine's failure
  kinds: ``httpcore_glue.exchange_failure``);
* the connection is reused only when both sides finished their message (h11 ``DONE``);
  anything else closes it;
* a head larger than 100 KiB is refused (h11's ``max_incomplete_event_size``).
"""

from __future__ import annotations

import enum
from typing import Any, Final

import h11
import httpcore

__all__ = ["END", "READ_SIZE", "Http11", "PlainConnectionBase", "PlainResponseBase"]

#: Bytes asked of the socket per read (httpcore's ``READ_NUM_BYTES``).
READ_SIZE: Final = 64 * 1024
#: Largest response head accepted (httpcore's ``MAX_INCOMPLETE_EVENT_SIZE``).
MAX_HEAD: Final = 100 * 1024


class _End:
    __slots__ = ()

    def __repr__(self) -> str:
        return "END"


#: :meth:`Http11.chunk`: the response body ended.
END: Final = _End()

_Headers = list[tuple[bytes, bytes]]


class Http11:
    """One connection's HTTP/1.1 state: a request out, its response in, then (when both
    messages ended cleanly) the next request."""

    __slots__ = ("_h11",)

    def __init__(self) -> None:
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)

    def request(self, method: bytes, target: bytes, headers: _Headers, body: bytes | None) -> bytes:
        """The bytes of a whole request (``headers`` hold ``Host``, and
        ``Content-Length`` when there is a body)."""
        h = self._h11
        try:
            head = h.send(h11.Request(method=method, target=target, headers=headers))
            framed = h.send(h11.Data(data=body)) if body else b""
            end = h.send(h11.EndOfMessage())
        except h11.LocalProtocolError as exc:
            raise httpcore.LocalProtocolError(str(exc)) from exc
        # (send gives None only for ConnectionClosed.) One join: a large body is copied
        # once.
        assert head is not None and framed is not None and end is not None
        return b"".join((head, framed, end))

    def receive(self, data: bytes) -> None:
        """What the socket gave (``b""``: the server closed it)."""
        h = self._h11
        if not data and h.their_state is h11.SEND_RESPONSE:
            raise httpcore.RemoteProtocolError("Server disconnected without sending a response.")
        h.receive_data(data)

    def head(self) -> tuple[int, _Headers] | None:
        """The response's status and headers (as sent: ``raw_items``), or ``None``
        when more bytes are needed."""
        while True:
            event = self._next()
            if event is h11.NEED_DATA:
                return None
            if type(event) is h11.Response:
                return event.status_code, event.headers.raw_items()
            if type(event) is h11.InformationalResponse and event.status_code != 101:
                continue  # 1xx: the response follows
            # (101 or a pause: this client never asks to switch protocols)
            raise httpcore.RemoteProtocolError(f"unexpected {event!r} before the response")

    def chunk(self) -> bytes | _End | None:
        """The next piece of the body, :data:`END` when it ended, or ``None`` when more
        bytes are needed."""
        event = self._next()
        if type(event) is h11.Data:
            return bytes(event.data)
        if event is h11.NEED_DATA:
            return None
        if type(event) is h11.EndOfMessage or event is h11.PAUSED:
            return END
        raise httpcore.RemoteProtocolError(f"unexpected {event!r} in the response body")

    def held(self) -> bytes:
        """Bytes received and not parsed yet (h11's ``trailing_data``)."""
        return bytes(self._h11.trailing_data[0])

    def reuse(self) -> bool:
        """After the body ended: whether the connection can carry another request (it
        is then ready for one); ``False`` means it must be closed."""
        h = self._h11
        if h.our_state is h11.DONE and h.their_state is h11.DONE:
            h.start_next_cycle()
            return True
        return False

    def _next(self) -> h11.Event | type[h11.NEED_DATA] | type[h11.PAUSED]:
        try:
            return self._h11.next_event()
        except h11.RemoteProtocolError as exc:
            raise httpcore.RemoteProtocolError(str(exc)) from exc


# ---------------------------------------------------------------- the pools' objects


class _State(enum.Enum):
    NEW = 0
    ACTIVE = 1
    IDLE = 2
    CLOSED = 3


class PlainConnectionBase:
    """What both shells' plain connections (``_plain.PlainConnection``) share: the part
    of httpcore's connection interface a pool asks about, and the connection's state.
    One TCP connection to ``origin``, opened on its first request (as httpcore's
    connections are), one request at a time (the pool hands it to one request).
    A shell adds the I/O: connecting, sending a request and reading its head, closing.
    ``stream`` is the shell's network stream (``None`` until the first request)."""

    __slots__ = ("_backend", "_origin", "_state", "http", "stream")

    def __init__(self, origin: httpcore.Origin, backend: Any) -> None:
        self._origin = origin
        self._backend = backend
        self._state = _State.NEW
        self.http = Http11()
        self.stream: Any = None

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return origin == self._origin

    def is_available(self) -> bool:
        return self._state is _State.IDLE

    def has_expired(self) -> bool:
        # An idle keep-alive socket that is readable was closed by the server.
        stream = self.stream
        return self._state is _State.IDLE and (
            stream is None or bool(stream.get_extra_info("is_readable"))
        )

    def _begin(self) -> tuple[str, int] | None:
        """A request starts: the host and port to connect to first (``None``: the
        connection is open already).

        Raises:
            httpcore.ConnectionNotAvailable: a request is running, or it was closed.
        """
        if self._state not in (_State.NEW, _State.IDLE):
            raise httpcore.ConnectionNotAvailable()
        self._state = _State.ACTIVE
        if self.stream is not None:
            return None
        return self._origin.host.decode("ascii"), self._origin.port

    def _detach(self) -> Any:
        """Closing: the stream to close (``None``: none is open)."""
        self._state = _State.CLOSED
        stream, self.stream = self.stream, None
        return stream

    def _finished(self, whole: bool) -> bool:
        """The response was closed (``whole``: read to its end): whether the connection
        stays open for the next request."""
        if whole and self._state is _State.ACTIVE and self.http.reuse():
            self._state = _State.IDLE
            return True
        return False


class PlainResponseBase:
    """What both shells' plain responses share: ``status``, ``headers``, ``content``
    and ``extensions`` as httpcore's ``Response`` has them, and the body's pieces as the
    connection's :class:`Http11` gives them, read on demand. A shell adds the reads
    and the close."""

    __slots__ = ("_closed", "_conn", "_content", "_done", "_timeout", "headers", "status")

    def __init__(
        self,
        conn: PlainConnectionBase,
        head: tuple[int, list[tuple[bytes, bytes]]],
        timeout: float | None,
    ) -> None:
        self._conn = conn
        self.status, self.headers = head
        self._timeout = timeout
        self._done = False
        self._closed = False
        self._content: bytes | None = None

    @property
    def content(self) -> bytes:
        """The whole body, once read (as httpcore's ``Response``)."""
        if self._content is None:
            raise RuntimeError("the response body was not read yet")
        return self._content

    @property
    def extensions(self) -> dict[str, Any]:
        """httpcore's ``Response.extensions`` keys that apply."""
        return {"http_version": b"HTTP/1.1", "network_stream": self._conn.stream}

    def held(self) -> bytes:
        """Bytes of the body received and not yet handed out."""
        return self._conn.http.held()

    def _chunk(self) -> bytes | _End | None:
        """The next piece of the body, :data:`END`, or ``None``: read first.

        Raises:
            httpcore.ReadError: the response was closed meanwhile.
        """
        chunk = self._conn.http.chunk()
        if chunk is None and (self._closed or self._conn.stream is None):
            raise httpcore.ReadError("the response was closed")
        if chunk is END:
            self._done = True
        return chunk

    def _close(self) -> bool:
        """Closing: whether the connection must be closed too (the body was not read to
        its end, or the server will not take another request on it)."""
        if self._closed:
            return False
        self._closed = True
        return not self._conn._finished(self._done)
