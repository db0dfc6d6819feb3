"""One HTTP exchange as the machine sees it: its role, what its response turned out
to be, and the bounded readers of its body (JSON decoder, SSE parser, error body).

Also the protocol-policy constants of the HTTP strategies (moved here from the shells:
issue 9 item 1).
"""

from __future__ import annotations

import enum
from typing import Final, Protocol

import attrs

from .. import jsonrpc
from ..errors import MCPError, RequestTimeoutError, TransportError
from ..http import SseStream
from ..sse import SSEParser
from .frames import ExchangeFailure, StartExchange

__all__ = [
    "DELETE_TIMEOUT",
    "ERROR_BODY_CAP",
    "GET_MAX_DELAY",
    "GET_MAX_FAILURES",
    "GET_READY_WAIT",
    "GET_READ_TIMEOUT_FLOOR",
    "MAX_RESUMES",
    "Decoder",
    "Exchange",
    "Mode",
    "PostStream",
    "Role",
    "failure_error",
]

#: How many times a broken POST response stream is resumed with GET + Last-Event-ID
#: (2025-11-25 § Resumability) before the call fails with ResponseStreamClosedError.
MAX_RESUMES: Final = 3
#: How much of an error response's body is read (to find a JSON-RPC error in it).
ERROR_BODY_CAP: Final = 64 * 1024
#: How long requests after the handshake wait for the server to answer the Streamable
#: HTTP GET stream (capped by read_timeout): a server sends what is not tied to a
#: request (list_changed caused by the first call, say) on that stream only if it is
#: open by then.
GET_READY_WAIT: Final = 2.0
#: The standalone GET stream gives up after this many failures in a row (5xx, network).
GET_MAX_FAILURES: Final = 10
#: Cap of its reconnect delay (reconnect_delay * 2**min(failures, 5)).
GET_MAX_DELAY: Final = 30.0
#: The GET stream may stay quiet for long: its read timeout is at least this.
GET_READ_TIMEOUT_FLOOR: Final = 300.0
#: Read timeout of the DELETE sent at close.
DELETE_TIMEOUT: Final = 5.0


class Decoder(Protocol):
    """What ``mcp_proto.compression.decoder_for`` returns."""

    def feed(self, data: bytes) -> bytes: ...

    def finish(self) -> bytes: ...


class Role(enum.Enum):
    POST = "post"  # a POST carrying one message (request, notification or response)
    RESUME = "resume"  # a GET resuming a POST's response stream (Last-Event-ID)
    GET = "get"  # the standalone GET stream (Streamable HTTP)
    STREAM = "stream"  # the legacy HTTP+SSE event stream
    LEGACY_POST = "legacy_post"  # a POST to the legacy endpoint (answers come on STREAM)


class Mode(enum.Enum):
    HEAD = "head"  # no head yet
    DRAIN = "drain"  # nothing wanted from the body (202, a legacy POST's 2xx)
    JSON = "json"
    SSE = "sse"
    ERROR = "error"  # a status that is an error: its body is read (capped) for details


@attrs.define(eq=False)
class PostStream:
    """A POST's response stream and its resumptions: one cursor for all of them."""

    rid: jsonrpc.RequestId
    method: str | None
    cursor: SseStream = attrs.Factory(SseStream)
    resumes: int = 0
    resume_at: float | None = None


@attrs.define(eq=False)
class Exchange:
    xid: int
    role: Role
    rid: jsonrpc.RequestId | None = None
    method: str | None = None
    sent_session: bool = False
    is_init: bool = False
    # Carries notifications/initialized of the handshake in progress: the connection is
    # ready only once the server took it (a refusal fails the connect; see _http.py).
    is_init_note: bool = False
    stream: PostStream | None = None
    mode: Mode = Mode.HEAD
    status: int = 0
    www_authenticate: str | None = None
    decoder: Decoder | None = None
    parser: SSEParser | None = None
    cursor: SseStream = attrs.Factory(SseStream)  # used when no stream is resumed
    parts: list[bytes] = attrs.Factory(list)
    size: int = 0
    # The request as sent, until its head arrives: a 307/308 to the same origin sends
    # it again at the new URL (``_http.py``, ``redirect_target``); then dropped, so a
    # large body is not held while the response is read.
    request: StartExchange | None = None
    redirects: int = 0  # followed already for this request
    location: str | None = None  # a redirect's Location (named in its error)
    # OAuth (a server with an oauth_provider; ``_oauth.py``): the request a 401/403
    # refused (sent again once authorized), the resource's DPoP-Nonce, how many
    # authorizations this request caused, and whether a DPoP nonce retry was spent.
    refused: StartExchange | None = None
    dpop_nonce: str | None = None
    authorizations: int = 0
    nonce_retried: bool = False

    @property
    def what(self) -> str:
        return self.method or "a message"


def failure_error(failure: ExchangeFailure, what: str) -> MCPError:
    """The typed error for a failed exchange: a read timeout is a request timeout
    (never retried), anything else a transport error (retryable per the table)."""
    detail = f": {failure.detail}" if failure.detail else ""
    if failure.kind == "read_timeout":
        return RequestTimeoutError(f"{what}: no data within the read timeout{detail}")
    return TransportError(f"{what}: {failure.kind} failure{detail}")
