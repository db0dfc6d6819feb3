"""The per-server protocol machine (issue 9): :class:`Connection`.

In the style of h11's ``Connection`` and aioquic's ``QuicConnection``: no I/O, no
clock, no randomness, no logging, no threads. Every input that can start a timer takes
``now`` (seconds on the driver's monotonic clock); jitter comes from the ``random``
callable given to the constructor. It composes :class:`mcp_proto.session.Session`
(JSON-RPC ids, pending table, deadlines, progress routing, handshake tables) and adds
the transport and the request pipeline.

Construction::

    conn = Connection(config, name="srv", client_info=Implementation("me", "1"),
                      capabilities=lambda: {...}, limits=Limits(), random=rng.random,
                      request_meta=None, extensions=(), era_cache=None)

``request_meta`` (a mapping, or a callable called once per request and copied then),
``extensions`` (identifiers or identifier → settings) and ``era_cache`` (an
:class:`~mcp_proto.modern.discover.EraCache`, one per client) serve the 2026-07-28 era
(issue 10); a bad ``extensions`` or ``request_meta`` type is a ``ValueError`` here.

``config.type`` picks the strategy: ``"stdio"``, ``"streamable_http"``, ``"http"``
(plain: no capability needing a server→client channel is declared, HTTP-4) or
``"sse"`` (legacy HTTP+SSE).

Operations (synchronous, never block):

* ``connect(now)``: begin open + era decision + handshake (idempotent while
  connecting/connected). Completion: ``Connected(info)`` or ``ConnectFailed(error)``.
  The era (``config.protocol``; see "The 2026-07-28 era" below) is decided first.
* ``start_call(method, params=None, *, now, timeout=None, progress=False, tool=None,
  flush=True) -> int``: a
  call id (stable across retries and re-sends). ``timeout=None`` is
  ``config.read_timeout``; the timeout applies per attempt. Connects implicitly.
  Raises synchronously, starting nothing: ``ValueError`` (bad timeout, params not a
  dict or not JSON-encodable, ``_meta`` not an object, a progress token in use),
  ``CapabilityError`` (known once connected), ``LocalProtocolError`` (closing, or
  ``limits.max_pending_requests`` calls open; in a modern session also
  ``ValidationError``/``HeaderAnnotationError`` for metadata or headers that cannot be
  built, or what the host's ``request_meta`` callable raised). ``tool``: the called
  tool's definition for ``tools/call`` (``Mcp-Param-*`` headers over modern HTTP).
  Exactly one ``CallSucceeded`` /
  ``CallFailed`` is emitted for every call id, always. ``flush=False`` (keyword) keeps
  the request in the machine's outbox instead of emitting its frame now: a driver
  starting a round of calls then calls ``flush(now)`` once, and the round goes out as
  one ``Write`` (stdio) instead of one per call.
* ``flush(now)``: emit what ``start_call(..., flush=False)`` held back.
* ``notify(method, params=None, *, now, only_if_connected=False)``: sent once ready
  (connecting if needed), or dropped when ``only_if_connected`` and not connected.
* ``cancel_call(call_id, reason, *, now, error=None)``: ``CallFailed`` with ``error``
  (default :class:`CallCancelledError`) and ``notifications/cancelled`` for the attempt
  in flight (Session rules: never for ``initialize``). Unknown/ended ids: ignored.
* ``answer(request_id, result, *, now=0.0)`` / ``refuse(request_id, code, message,
  data=None, *, now=0.0)``: answer a ``ServerRequest``. Dropped after close, for a
  request of an earlier session (after a reconnect or a session expiry), and when the
  request was already answered or refused (once each). ``now`` is optional: an answer
  starts no timer.
* ``start_listen(notifications, *, now, ack_timeout=None) -> int``: a subscription
  (``subscriptions/listen``, 2026-07-28 servers) with a sub id stable across re-opens;
  ``close_listen(sub_id, *, now)``; ``listen_state(sub_id)``. Events
  ``ListenAcknowledged``, ``ListenNotification``, ``ListenInterrupted``, then exactly
  one ``ListenEnded``. Rules: :mod:`._listen`.
* ``close(now)``: handlers still answering server requests get ``CLOSE_ANSWER_WAIT``
  (0.5 s, a deadline); what is left is refused (-32000); HTTP (Streamable or plain) with
  a session sends DELETE; then ``CloseTransport(graceful=True)``; every open call fails with a
  ``ConnectionError``; ``Closed`` comes after the driver's ``transport_closed(now)``
  (at once when nothing was open). A later ``start_call``/``connect`` opens anew.
* Introspection: ``state`` (:class:`ConnectionState`: IDLE, OPENING, HANDSHAKING,
  READY, CLOSING, CLOSED), ``server`` (``ServerInfo | None``), ``is_connected``,
  ``first_unusable``, ``era`` (:data:`mcp_proto.versions.Era`: ``"legacy"`` |
  ``"modern"``, or ``None`` while undecided; fixed from the start by
  ``protocol="legacy"``/``"modern"``),
  ``modern_http``, ``log_level`` (settable: carried as ``_meta`` on modern requests;
  the machine sends no ``logging/setLevel``), ``pending_count`` (open calls),
  ``unanswered_server_requests``, ``config``, ``name``, ``limits``.

Inputs from the driver:

* ``transport_opened(now, *, pid=None)`` / ``transport_failed(error, now)`` after
  ``OpenTransport`` (``pid``: the stdio server's process id, the era cache key);
  ``transport_closed(now)`` after ``CloseTransport``.
* stdio: ``receive_data(data, now)``, ``receive_eof(now, detail="")`` (``detail`` e.g.
  ``"exit status 1"``, shown in the error), or zero-copy ``get_buffer(n)`` +
  ``buffer_updated(n, now)`` (``n == 0`` is end of input, like ``LineFramer``).
* HTTP: ``exchange_head(xid, status, headers, now)``, ``exchange_data(xid, data, now)``
  (raw, still-compressed bytes), ``exchange_end(xid, now)``,
  ``exchange_failed(xid, ExchangeFailure(kind, detail), now)``; after data, check
  ``wants_exchange(xid)``: False means abandon (close) that response.
* ``handle_timeout(now)`` when ``now >= next_deadline()`` (calling it early is harmless).

Nothing fed by the driver raises on peer input: a server's garbage becomes a
``MessageDiscarded`` event, a typed ``CallFailed``/``ConnectFailed``/``Disconnected``,
or is ignored (input for an exchange the machine no longer wants).

Outputs:

* ``next_deadline() -> float | None``.
* ``frames_to_send() -> list[Frame]`` (:mod:`.frames`): ``OpenTransport``,
  ``Write(messages)``, ``StartExchange(xid, method, url, headers, body, read_timeout,
  streaming)``, ``AbortExchange(xid)``, ``CloseTransport(graceful)``. Perform them in
  order. ``AbortExchange`` may name an exchange the driver already finished reading
  (make it a no-op then); ``wants_exchange(xid)`` may be asked at any time. After
  ``CloseTransport`` feed nothing more from that transport; an ``OpenTransport`` after
  it starts a new one (a reconnect). ``OAuthInteraction(effect)`` (a server with an
  ``oauth_provider``: the flow needs the host) is answered with ``oauth_reply(reply,
  now)``; the OAuth flow's own requests are ordinary ``StartExchange`` frames to other
  origins (``mcp_proto.connection._oauth``).
* ``next_event() -> Event | NEED_DATA`` (:mod:`.events`): ``Connected``,
  ``ConnectFailed``, ``CallSucceeded``, ``CallFailed``, ``CallProgress``, ``CallLog``
  (a call's own log message, for a call started with ``progress=True``),
  ``ServerRequest``, ``NotificationReceived``, ``LogMessage``, ``MessageDiscarded``,
  ``Disconnected``, ``Closed``, ``Diagnostic(level, message)``. ``Connected`` comes
  after every completed handshake (a reconnect, or a new session after an expiry).

The 2026-07-28 era (issue 10; :mod:`._era`):

* ``protocol="auto"`` (default) / ``"modern"``: the first request on a new transport
  is ``server/discover`` (stdio and HTTP), bounded by ``discover_timeout`` (default
  ``DISCOVER_TIMEOUT``, 5 s, capped by ``read_timeout``) and classified by
  ``classify_probe``: a ``DiscoverResult`` → ``Connected`` with a modern ``ServerInfo``
  (no ``initialize``); -32022 listing a version we speak → probed once more with it;
  -32020/-32021 or no version in common → ``ConnectFailed`` (typed); any other error,
  an HTTP 4xx without a modern error body, or silence → ``initialize`` on the same
  transport (``protocol="modern"``: ``ConnectFailed(IncompatibleServerError)``); HTTP
  401/403 (``UnauthorizedError``), 5xx and transport failures → ``ConnectFailed``.
  ``protocol="legacy"`` and HTTP+SSE never probe.
* Era cache: a cached legacy era starts with ``initialize``; a cached modern one still
  sends discover (the capabilities gate requests) with ``read_timeout``, and a legacy
  answer then forgets the entry and probes afresh (LIFE-18).
* Modern requests: ``_meta`` from ``meta.with_meta`` on every request; ``ping`` is
  ``server/discover`` (its caller still gets ``{}``); ``logging/setLevel`` sets
  ``log_level`` and succeeds at once; over HTTP ``headers.request_headers`` per
  request, no session id, no GET stream, no resumption, no DELETE; a response stream
  that breaks before
  the result is re-issued once with a new id (``tools/call`` included), a second break
  fails with ``ResponseStreamClosedError``; a timeout or cancel closes the stream
  (``AbortExchange``) and posts no ``notifications/cancelled`` (stdio still sends it).
  A server request is dropped (``MessageDiscarded``), never answered.

Protocol-policy constants (exported here; the shells keep only OS mechanics such as
their process ``SHUTDOWN_GRACE`` and pool sizes): ``CLOSE_ANSWER_WAIT`` (0.5 s),
``MAX_RESUMES`` (3), ``ERROR_BODY_CAP`` (64 KiB), ``GET_READY_WAIT`` (2 s),
``GET_MAX_FAILURES`` (10), ``GET_MAX_DELAY`` (30 s), ``GET_READ_TIMEOUT_FLOOR``
(300 s), ``DELETE_TIMEOUT`` (5 s), ``KEEPALIVE_MISSES`` (3), ``PING_TIMEOUT_FACTOR``
(2.5 ping intervals), ``DISCOVER_TIMEOUT`` (5 s).

Ordering: a ``CallProgress`` (or ``CallLog``) is always emitted before its call's
result event; drivers run the progress callbacks emitted before a result before
returning that result (a ``CallLog`` goes along the same channel).

After every operation or input the driver drains ``frames_to_send()`` and performs
them in order, drains ``next_event()``, and re-arms its one timer at
``next_deadline()``.

Inside (issue 22 item 3): :class:`Connection` is one owner class in one module
(:mod:`._machine`): its state and every step that writes it. The helpers own their own
state only and hold a narrow port, never the connection: a transport strategy
(:class:`~._transport.Transport`: :mod:`._stdio`, :mod:`._http`, :mod:`._legacy_sse`)
holds a :class:`~._transport.TransportPort` (the facts it may read, the frames and
messages it hands over, what it learnt: usable, ready, lost, session expired, attempt
failed); the era steps (:mod:`._era`) an ``EraPort``, and their steps return an
``EraDecision`` the connection applies; the subscriptions (:mod:`._listen`) a
``ListenPort``. A new strategy (WebSocket, say) subclasses ``Transport``, implements
``open``, ``transmit`` and the inputs of its kind (``receive_data``/``receive_eof`` or
``exchange_*``), and is added to ``_make_transport`` in :mod:`._machine`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._calls import CLOSE_ANSWER_WAIT
from ._era import DISCOVER_TIMEOUT
from ._machine import Connection, ConnectionState
from .events import (
    CallCancelledError,
    CallFailed,
    CallLog,
    CallProgress,
    CallSucceeded,
    Closed,
    Connected,
    ConnectFailed,
    Diagnostic,
    Disconnected,
    Event,
    ListenAcknowledged,
    ListenEnded,
    ListenInterrupted,
    ListenNotification,
    LogMessage,
    MessageDiscarded,
    NotificationReceived,
    ServerRequest,
)
from .frames import (
    AbortExchange,
    CloseTransport,
    ExchangeFailure,
    Frame,
    OAuthInteraction,
    OpenTransport,
    StartExchange,
    Write,
)

__all__ = [
    "CLOSE_ANSWER_WAIT",
    "DELETE_TIMEOUT",
    "DISCOVER_TIMEOUT",
    "ERROR_BODY_CAP",
    "GET_MAX_DELAY",
    "GET_MAX_FAILURES",
    "GET_READY_WAIT",
    "GET_READ_TIMEOUT_FLOOR",
    "KEEPALIVE_MISSES",
    "MAX_RESUMES",
    "PING_TIMEOUT_FACTOR",
    "AbortExchange",
    "CallCancelledError",
    "CallFailed",
    "CallLog",
    "CallProgress",
    "CallSucceeded",
    "CloseTransport",
    "Closed",
    "ConnectFailed",
    "Connected",
    "Connection",
    "ConnectionState",
    "Diagnostic",
    "Disconnected",
    "Event",
    "ExchangeFailure",
    "Frame",
    "ListenAcknowledged",
    "ListenEnded",
    "ListenInterrupted",
    "ListenNotification",
    "LogMessage",
    "MessageDiscarded",
    "NotificationReceived",
    "OAuthInteraction",
    "OpenTransport",
    "ServerRequest",
    "StartExchange",
    "Write",
]


if TYPE_CHECKING:
    from ._exchange import (
        DELETE_TIMEOUT,
        ERROR_BODY_CAP,
        GET_MAX_DELAY,
        GET_MAX_FAILURES,
        GET_READ_TIMEOUT_FLOOR,
        GET_READY_WAIT,
        MAX_RESUMES,
    )
    from ._legacy_sse import KEEPALIVE_MISSES, PING_TIMEOUT_FACTOR

_EXCHANGE_CONSTANTS = frozenset(
    {
        "DELETE_TIMEOUT",
        "ERROR_BODY_CAP",
        "GET_MAX_DELAY",
        "GET_MAX_FAILURES",
        "GET_READ_TIMEOUT_FLOOR",
        "GET_READY_WAIT",
        "MAX_RESUMES",
    }
)


if not TYPE_CHECKING:  # (for mypy, the names are the imports above)

    def __getattr__(name: str) -> Any:
        # PEP 562: the HTTP strategies' constants come from modules a stdio-only program
        # never loads (``import mcp_io_sync`` stays light).
        if name in _EXCHANGE_CONSTANTS:
            from . import _exchange

            return getattr(_exchange, name)
        if name in ("KEEPALIVE_MISSES", "PING_TIMEOUT_FACTOR"):
            from . import _legacy_sse

            return getattr(_legacy_sse, name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
