"""What the connection machine asks its driver to do (its output), and the one typed
input that describes a failed HTTP exchange.

Frames are plain frozen values (:class:`~mcp_proto._record.Record`), drained in order
with ``Connection.frames_to_send()``.
The driver performs each one and feeds back what happened (``transport_opened``,
``receive_data``, ``exchange_head`` ...). A driver decides nothing about the protocol:
method names, headers, retries and session ids are all the machine's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Union

from .._record import Record

_set = object.__setattr__  # (frozen: Record refuses setattr)

__all__ = [
    "AbortExchange",
    "CloseTransport",
    "ExchangeFailure",
    "FailureKind",
    "Frame",
    "OAuthInteraction",
    "OpenTransport",
    "StartExchange",
    "Write",
]


class OpenTransport(Record):
    """Spawn the server process (stdio: argv, env and cwd come from the config) or
    prepare the HTTP connection pool. Answer with ``transport_opened(now)`` or
    ``transport_failed(error, now)``."""

    __slots__ = ()


class Write(Record):
    """stdio only: write each message followed by ``b"\\n"`` to the process's stdin, in
    order (a writev of ``[m1, b"\\n", m2, b"\\n", ...]`` does it in one call). A failed
    write is the transport dying: report what the process did with ``receive_eof``."""

    __slots__ = ("messages",)
    messages: list[bytes]

    def __init__(self, messages: list[bytes]) -> None:
        _set(self, "messages", messages)


class StartExchange(Record):
    """Perform one HTTP request and feed back ``exchange_head``, ``exchange_data``
    (raw, still-compressed body bytes), ``exchange_end`` or ``exchange_failed``, all
    tagged with ``xid``.

    ``read_timeout`` is the socket read timeout to use (``None``: none). ``streaming``
    is True for GET event streams that may stay open indefinitely (the driver reads
    those in the background); everything else may be read by whoever the driver picks.
    """

    __slots__ = ("body", "headers", "method", "read_timeout", "streaming", "url", "xid")
    xid: int
    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes | None
    read_timeout: float | None
    streaming: bool

    def __init__(
        self,
        xid: int,
        method: str,
        url: str,
        headers: tuple[tuple[str, str], ...],
        body: bytes | None,
        read_timeout: float | None,
        streaming: bool,
    ) -> None:
        _set(self, "xid", xid)
        _set(self, "method", method)
        _set(self, "url", url)
        _set(self, "headers", headers)
        _set(self, "body", body)
        _set(self, "read_timeout", read_timeout)
        _set(self, "streaming", streaming)


class AbortExchange(Record):
    """Stop reading exchange ``xid`` and release its connection. Nothing more about
    it is wanted (anything fed for it afterwards is ignored)."""

    __slots__ = ("xid",)
    xid: int

    def __init__(self, xid: int) -> None:
        _set(self, "xid", xid)


class CloseTransport(Record):
    """Close the transport. stdio: close stdin, wait, SIGTERM, then SIGKILL the
    process group. HTTP: close the pool once the exchanges already started (a
    ``DELETE`` included) have finished. ``graceful`` is False when the transport
    already failed (no point waiting for a clean exit). Call
    ``transport_closed(now)`` when done. After this frame the driver feeds nothing
    more from that transport (a later ``OpenTransport`` starts a new one)."""

    __slots__ = ("graceful",)
    graceful: bool

    def __init__(self, graceful: bool = True) -> None:
        _set(self, "graceful", graceful)


class OAuthInteraction(Record):
    """An OAuth flow needs the host (issue 21): ``effect`` is a
    :class:`mcp_proto.oauth.OpenAuthorization` (send the user to its URL, wait for the
    redirect) or an :class:`mcp_proto.oauth.ObtainAssertion` (a JWT for the JWT bearer
    grant). The driver calls ``handler(effect)`` (the provider's ``handler``) away
    from the machine's lock or event loop (it may wait for a browser) and answers with
    ``Connection.oauth_reply(reply, now)``: the handler's result, or the exception it
    raised."""

    __slots__ = ("effect", "handler")
    effect: object
    handler: Callable[[Any], Any]

    def __init__(self, effect: object, handler: Callable[[Any], Any]) -> None:
        _set(self, "effect", effect)
        _set(self, "handler", handler)


Frame = Union[OpenTransport, Write, StartExchange, AbortExchange, CloseTransport, OAuthInteraction]

FailureKind = Literal["read_timeout", "timeout", "network", "protocol"]


class ExchangeFailure(Record):
    """Why an HTTP exchange failed, as the driver's HTTP library reported it.

    ``kind``: ``"read_timeout"`` (no bytes within the read timeout), ``"timeout"``
    (connect, write or pool timeout), ``"network"`` (refused, reset, DNS ...) or
    ``"protocol"`` (malformed HTTP, unsupported URL). ``detail`` is shown in errors.
    """

    __slots__ = ("detail", "kind")
    kind: FailureKind
    detail: str

    def __init__(self, kind: FailureKind, detail: str = "") -> None:
        _set(self, "kind", kind)
        _set(self, "detail", detail)
