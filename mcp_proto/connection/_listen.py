"""``subscriptions/listen`` inside the connection machine (issue 10 item 7).

Spec: 2026-07-28 ``basic/patterns/subscriptions.mdx``. docs/requirements.md SUB-3..5,
SUB-14..17, SUB-19, SUB-21..25, SUB-29, SUB-31, NOTIF-3.

A *subscription* (a sub id, stable for its whole life) is carried by one long-lived
``subscriptions/listen`` request at a time:

* it is sent once the connection is ready on a modern server (a handshake-era server
  has no listen: ``CapabilityError``, also when a restarted process turns out to speak
  the handshake era, SUB-25);
* the acknowledgment (``notifications/subscriptions/acknowledged``, judged by
  :func:`judge_acknowledgment`, SUB-3) must come within ``ack_timeout`` for *every*
  listen request of the subscription (first, re-open, re-send); expiry cancels the
  request and ends the subscription with ``RequestTimeoutError`` (SUB-5). The
  acknowledged stream itself has no deadline. Every later acknowledgment is checked
  again: one that no longer names a URI an earlier one granted ends the subscription
  with ``ResourceReadError`` (RES-10);
* notifications are demultiplexed by ``_meta["io.modelcontextprotocol/subscriptionId"]``
  = the listen request's id (:class:`Demux`, SUB-31);
* a response to the listen request ends it: gracefully when recognised, else with an
  error (:func:`classify_closing`, SUB-15);
* Streamable HTTP: each listen request is its own POST whose SSE stream stays open
  (``streaming``); a stream that drops (5xx, transport failure, read timeout, the
  stream ending without a response) is re-opened after a backoff; a 4xx, an
  authorization challenge or a JSON-RPC error ends the subscription (SUB-4, SUB-17).
  Closing the stream (``AbortExchange``) is the cancellation: no
  ``notifications/cancelled`` (SUB-16);
* stdio: all streams share the pipe. A process that exits on its own is restarted at
  once and the subscriptions re-sent (SUB-19), unless the process they were last sent
  to died less than ``RestartPolicy.min_interval`` after receiving them (a crash loop:
  they end with the loss, SUB-21..24) or the replacement cannot be started (they end
  with that error). Closing sends ``notifications/cancelled`` for every listen id
  written to the live process; ids written to a dead one are forgotten (SUB-29).

The queue between the stream and the listeners (SUB-6..12) and the dispatcher are the
shells'; the machine only emits :class:`ListenAcknowledged`, :class:`ListenNotification`,
:class:`ListenInterrupted` and :class:`ListenEnded`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

import attrs

from .. import jsonrpc
from .._util import check_seconds
from ..errors import (
    CapabilityError,
    ConnectionError,
    IncompatibleServerError,
    LocalProtocolError,
    MCPError,
    RemoteProtocolError,
    RequestTimeoutError,
    ResourceReadError,
    ServerError,
    TransientServerError,
    TransportError,
    UnauthorizedError,
    UnknownResultTypeError,
    ValidationError,
)
from ..events import NotificationReceived
from ..http import backoff_delay
from ..modern.notify_queue import (
    Acknowledgment,
    Demux,
    ListenFilter,
    ProcessRecord,
    RestartPolicy,
    classify_closing,
    judge_acknowledgment,
    subscription_id,
)
from ._exchange import GET_MAX_DELAY
from .events import ListenAcknowledged, ListenEnded, ListenInterrupted, ListenNotification
from .events import MessageDiscarded as _Discarded

if TYPE_CHECKING:
    from ..config import ServerConfig
    from ..versions import Era
    from .events import Event

__all__ = ["LISTEN", "ListenManager", "ListenPort", "SubState", "Subscription"]

LISTEN: Final = "subscriptions/listen"
ACKNOWLEDGED: Final = "notifications/subscriptions/acknowledged"

#: ``ack_timeout=`` of ``start_listen``: ``None`` is the transport's read timeout,
#: ``False`` waits for ever (SUB-5).
AckTimeout = float | Literal[False] | None


class ListenPort(Protocol):
    """What the subscriptions' manager may read of its connection and ask of it."""

    @property
    def config(self) -> ServerConfig: ...

    @property
    def name(self) -> str: ...

    @property
    def era(self) -> Era | None: ...

    @property
    def is_connected(self) -> bool: ...

    @property
    def session_live(self) -> bool:
        """Whether a session is open (something to cancel requests on)."""

    def build_modern(
        self, method: str, params: dict[str, Any] | None
    ) -> tuple[str, dict[str, Any], tuple[tuple[str, str], ...] | None]:
        """A 2026-07-28 request's method, params (with ``_meta``) and HTTP headers."""

    def send_request(
        self,
        method: str,
        params: dict[str, Any] | None,
        headers: tuple[tuple[str, str], ...] | None,
        *,
        now: float,
        timeout: float | None,
        cancel_on_timeout: bool = True,
    ) -> jsonrpc.RequestId:
        """Send a request of the machine's own on the current session; its id."""

    def cancel_request(self, rid: jsonrpc.RequestId, reason: str, *, notify: bool = True) -> bool:
        """Abandon request ``rid`` of the live session; whether it was pending."""

    def send_notification(self, method: str, params: dict[str, Any] | None) -> None: ...

    def attempt_ended(self, rid: jsonrpc.RequestId, ok: bool, now: float | None = None) -> None:
        """Tell the transport the listen request ``rid`` ended (HTTP: close its stream)."""

    def event(self, event: Event) -> None:
        """An event for the host (in order with the connection's own)."""

    def diagnostic(self, level: str, message: str) -> None: ...

    def deliver(self, message: bytes | str) -> None: ...

    def drain(self, now: float) -> None:
        """Route what was delivered so far (notifications to their subscriptions)."""


class SubState(enum.Enum):
    WAITING = "waiting"  # not on the wire: waiting for the connection (or a restart)
    BACKOFF = "backoff"  # HTTP: the stream dropped; re-opened at ``reopen_at``
    OPENING = "opening"  # a listen request is out, not acknowledged yet
    ACTIVE = "active"  # acknowledged: notifications flow
    ENDED = "ended"


@attrs.define(eq=False)
class Subscription:
    sub_id: int
    filter: ListenFilter
    ack_timeout: float | None  # None: wait for ever
    state: SubState = SubState.WAITING
    rid: jsonrpc.RequestId | None = None
    #: stdio: listen ids written to the live process (SUB-29); cleared when it dies.
    written: list[jsonrpc.RequestId] = attrs.Factory(list)
    ack_deadline: float | None = None
    reopen_at: float | None = None
    drops: int = 0  # drops in a row (HTTP backoff); reset by an acknowledgment
    #: stdio: dropped by a process loss, so re-sending it is a restart hand-over.
    resend: bool = False
    lost: MCPError | None = None  # the loss that made it wait
    acknowledgment: Acknowledgment | None = None


class ListenManager:
    """The subscriptions of one connection (owned by ``Connection``)."""

    def __init__(self, port: ListenPort, random: Callable[[], float]) -> None:
        self.port = port
        self._random = random
        self.subs: dict[int, Subscription] = {}
        self._by_rid: dict[jsonrpc.RequestId, Subscription] = {}
        self.demux = Demux()
        self.policy = RestartPolicy()
        self._process: ProcessRecord | None = None  # stdio: the live process
        # HTTP: the listen request whose POST stream is being read (see deliver_on).
        self._stream_rid: jsonrpc.RequestId | None = None
        self._next_id = 1
        #: ``close(keep_subscriptions=True)`` is under way: the subscriptions are kept,
        #: waiting, instead of ended (a host's cleanup-then-reconnect, SUB-22).
        self.keeping = False
        #: Kept subscriptions wait for the host's next connect, not for a restart of
        #: their own (the host asked for the teardown).
        self.held = False

    @property
    def stdio(self) -> bool:
        return self.port.config.type == "stdio"

    # ------------------------------------------------------------ operations

    def start(
        self, notifications: ListenFilter | Mapping[str, Any], ack_timeout: AckTimeout, now: float
    ) -> int:
        try:
            flt = ListenFilter.coerce(notifications)
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"bad notification filter: {exc}") from None
        if not flt.to_params():
            raise ValidationError("the notification filter requests no notification")
        if ack_timeout is None:
            timeout: float | None = self.port.config.read_timeout
        elif ack_timeout is False:
            timeout = None
        else:
            timeout = check_seconds(ack_timeout, "ack_timeout")
        if self.port.is_connected and self.port.era != "modern":
            raise self._legacy_error()
        sub = Subscription(self._next_id, flt, timeout)
        self._next_id += 1
        self.subs[sub.sub_id] = sub
        self.held = False  # the host listens again: connect, and send the kept ones too
        return sub.sub_id

    def close(self, sub_id: int, now: float) -> bool:
        """``close_listen``: True if ``sub_id`` was open (``ListenEnded(None)`` queued)."""
        sub = self.subs.get(sub_id)
        if sub is None:
            return False
        self._cancel_wire(sub, "the client closed the subscription")
        self._end(sub, None)
        return True

    def end_all(self, error: MCPError, now: float, *, cancel: bool) -> None:
        """The connection closes: every subscription ends (``cancel``: the transport is
        still there to tell the server), or, while :attr:`keeping`, waits for the next
        connection, where it is sent again without a restart-bound judgement (SUB-22:
        the teardown was the client's)."""
        if self._process is not None:
            self.policy.exited(self._process, now, requested=True)  # never a crash (SUB-22)
            self._process = None
        for sub in list(self.subs.values()):
            if cancel:
                self._cancel_wire(sub, "the client is closing")
            else:
                self._forget_wire(sub)
            if self.keeping:
                self._suspend(sub, error)
            else:
                self._end(sub, error)
        if self.keeping and self.subs:
            self.held = True

    def _suspend(self, sub: Subscription, error: MCPError) -> None:
        if sub.state is SubState.WAITING:
            return  # already kept (the close fails everything twice: once is news)
        sub.state = SubState.WAITING
        sub.resend = False  # a client-requested teardown is never a crash (SUB-22)
        sub.lost = None
        sub.reopen_at = None
        sub.ack_deadline = None
        self.port.event(ListenInterrupted(sub.sub_id, error))

    def resume(self) -> None:
        """The host connects again: kept subscriptions go out once it is ready."""
        self.keeping = False
        self.held = False

    def connect_failed(self, error: MCPError, now: float) -> None:
        """The connection (or a restart) failed while subscriptions wait for it: stdio
        ends them with that error (the process cannot be restarted, SUB-21); HTTP
        re-opens later, unless the failure is a refusal (SUB-17)."""
        for sub in list(self.subs.values()):
            if sub.state is not SubState.WAITING:
                continue
            if self.stdio or not _reopens(error):
                self._end(sub, error)
            else:
                self._backoff(sub, error, now)

    def state_of(self, sub_id: int) -> SubState:
        sub = self.subs.get(sub_id)
        return sub.state if sub is not None else SubState.ENDED

    # ------------------------------------------------------------ sending

    @property
    def wants_connection(self) -> bool:
        """A subscription waits for a connection to be sent on (kept ones wait for
        the host to connect: :attr:`held`)."""
        return not self.held and any(s.state is SubState.WAITING for s in self.subs.values())

    def hand_over(self, now: float) -> None:
        """Ready: send every waiting subscription (the single hand-over point, SUB-24)."""
        waiting = [s for s in self.subs.values() if s.state is SubState.WAITING]
        if not waiting:
            return
        port = self.port
        if port.era != "modern":
            # SUB-25: a (restarted) server that speaks the handshake era has no listen.
            for sub in waiting:
                self._end(sub, self._legacy_error())
            return
        if self.stdio:
            if any(s.resend for s in waiting) and not self.policy.may_hand_over():
                # SUB-21: the process they were last sent to crashed soon after
                # receiving them: a crash loop; they end instead of being re-sent.
                for sub in waiting:
                    if sub.resend:
                        error = ConnectionError(
                            f"server {port.name!r} exited less than "
                            f"{self.policy.min_interval:g}s after receiving the "
                            "subscriptions; they are not re-sent again"
                        )
                        error.__cause__ = sub.lost
                        self._end(sub, error)
                waiting = [s for s in waiting if s.state is SubState.WAITING]
            if self._process is None:
                self._process = self.policy.new_process()
        for sub in waiting:
            self._send(sub, now)
        if self.stdio and self._process is not None:
            self.policy.handed_over(self._process, now)

    def _send(self, sub: Subscription, now: float) -> None:
        port = self.port
        try:
            # A fresh filter object each time: the frozen filter is what every re-open
            # asks for (SUB-13). _meta and HTTP headers as for every modern request.
            method, params, headers = port.build_modern(
                LISTEN, {"notifications": sub.filter.to_params()}
            )
        except Exception as exc:  # host request_meta, bad metadata
            failed = LocalProtocolError(f"{LISTEN} cannot be sent: {exc!r}")
            failed.__cause__ = exc
            self._end(sub, failed)
            return
        try:
            # No session deadline: the acknowledgment has its own (SUB-5) and the
            # acknowledged stream none.
            rid = port.send_request(method, params, headers, now=now, timeout=None)
        except LocalProtocolError as exc:
            # Every request slot of the session is taken (limits.max_pending_requests):
            # the subscription ends with that error, as a call beyond the bound fails
            # (found by fuzz/fuzz_connection.py: it escaped start_listen, or a driver
            # input, with the subscription left registered).
            self._end(sub, exc)
            return
        sub.rid = rid
        sub.state = SubState.OPENING
        sub.resend = False
        sub.lost = None
        sub.reopen_at = None
        sub.ack_deadline = None if sub.ack_timeout is None else now + sub.ack_timeout
        if self.stdio:
            sub.written.append(rid)
        self._by_rid[rid] = sub
        self.demux.open(rid)

    # ------------------------------------------------------------ wire bookkeeping

    def _detach(self, sub: Subscription) -> jsonrpc.RequestId | None:
        rid, sub.rid = sub.rid, None
        if rid is not None:
            self._by_rid.pop(rid, None)
            self.demux.close(rid)
        sub.ack_deadline = None
        return rid

    def _cancel_wire(self, sub: Subscription, reason: str) -> None:
        """Stop the listen request(s) of ``sub`` on the live transport: stdio sends
        ``notifications/cancelled`` for every id written to this process (SUB-29);
        HTTP closes the stream, which is the cancellation (SUB-16)."""
        port = self.port
        rid = self._detach(sub)
        live = port.session_live
        if self.stdio:
            for written in sub.written:
                if not live:
                    break
                if not port.cancel_request(written, reason):
                    port.send_notification(
                        "notifications/cancelled", {"requestId": written, "reason": reason}
                    )
        elif rid is not None:
            if live:
                port.cancel_request(rid, reason, notify=False)
            port.attempt_ended(rid, False)  # AbortExchange
        sub.written.clear()

    def _forget_wire(self, sub: Subscription) -> None:
        rid = self._detach(sub)
        port = self.port
        if rid is not None and port.session_live:
            port.cancel_request(rid, "closed", notify=False)
        sub.written.clear()

    def _end(self, sub: Subscription, error: MCPError | None) -> None:
        if sub.state is SubState.ENDED:
            return
        self._detach(sub)
        sub.state = SubState.ENDED
        sub.written.clear()
        self.subs.pop(sub.sub_id, None)
        self.port.event(ListenEnded(sub.sub_id, error))

    def _refused(self, error: MCPError) -> MCPError:
        """The error a refused listen ends its subscription with: a server that answers
        -32601 (method not found) has no subscriptions at all, which is a capability
        it lacks (a typed ``CapabilityError`` naming it), not a failure of this one."""
        if isinstance(error, ServerError) and error.code == jsonrpc.METHOD_NOT_FOUND:
            refused = CapabilityError(
                f"server {self.port.name!r} does not offer {LISTEN} "
                "(it answered -32601, method not found)"
            )
            refused.__cause__ = error
            return refused
        return error

    def _legacy_error(self) -> CapabilityError:
        return CapabilityError(
            f"server {self.port.name!r} speaks the handshake era, which has no "
            f"{LISTEN} (2026-07-28); use subscribe_resource there"
        )

    # ------------------------------------------------------------ inputs

    def owns(self, rid: jsonrpc.RequestId) -> bool:
        return rid in self._by_rid

    def on_response(self, rid: jsonrpc.RequestId, result: Any, now: float) -> bool:
        """A response to a listen request: the server ended the subscription (SUB-15)."""
        sub = self._by_rid.get(rid)
        if sub is None:
            return False
        self.port.attempt_ended(rid, True, now)
        closing = classify_closing(result)
        if closing.graceful:
            self._end(sub, None)
        else:
            message = f"server {self.port.name!r} ended the subscription: {closing.reason}"
            unknown = (
                isinstance(result, Mapping)
                and closing.reason is not None
                and ("resultType" in closing.reason)
            )
            self._end(
                sub,
                UnknownResultTypeError(message, method=LISTEN)
                if unknown
                else RemoteProtocolError(message),
            )
        return True

    def on_failed(self, rid: jsonrpc.RequestId, error: MCPError, now: float) -> bool:
        """A listen request ended without a response (error, transport, process loss)."""
        sub = self._by_rid.get(rid)
        if sub is None:
            return False
        port = self.port
        port.attempt_ended(rid, False)
        self._detach(sub)
        if self.stdio:
            if port.is_connected:
                self._end(sub, self._refused(error))  # the server refused it (JSON-RPC)
                return True
            # The process is gone: ids written to it are forgotten (SUB-29) and the
            # subscription is re-sent to the next one (SUB-19, SUB-26).
            if self._process is not None:
                self.policy.exited(self._process, now, requested=False)
                self._process = None
            sub.written.clear()
            sub.state = SubState.WAITING
            sub.resend = True
            sub.lost = error
            port.event(ListenInterrupted(sub.sub_id, error))
            return True
        if not _reopens(error):
            # 4xx, an authorization challenge, a JSON-RPC error
            self._end(sub, self._refused(error))
            return True
        self._backoff(sub, error, now)
        return True

    def _backoff(self, sub: Subscription, error: MCPError, now: float) -> None:
        """HTTP: re-open after ``backoff_delay`` (capped like the GET stream's)."""
        port = self.port
        sub.drops += 1
        delay = min(
            GET_MAX_DELAY,
            backoff_delay(sub.drops, port.config.retry_backoff, jitter=self._random() * 0.25),
        )
        sub.state = SubState.BACKOFF
        sub.reopen_at = now + delay
        port.event(ListenInterrupted(sub.sub_id, error))
        port.diagnostic(
            "info",
            f"server {port.name!r}: subscription {sub.sub_id} dropped ({error}); "
            f"re-opened in {delay:.2f}s",
        )

    def deliver_on(self, rid: jsonrpc.RequestId, data: bytes, now: float) -> None:
        """HTTP: a message read from the POST stream of listen request ``rid``. The
        stream is the subscription's own, so a notification on it that does not name
        its subscription is still that subscription's (SUB-31 makes the ``_meta`` id
        the only correlation on stdio, where streams share the pipe)."""
        port = self.port
        port.drain(now)  # what arrived before belongs to no stream
        self._stream_rid = rid
        try:
            port.deliver(data)
            port.drain(now)
        finally:
            self._stream_rid = None

    def on_notification(self, event: NotificationReceived, now: float) -> bool:
        """Route a notification: True when it belonged to a listen stream (or to one
        already closed, then discarded: it is delivered to no subscription)."""
        params = event.params
        if event.method == "notifications/cancelled" and self._server_cancel(params, now):
            return True
        sid = subscription_id(params)
        if sid is None:
            sid = self._stream_rid
            if sid is None:
                return False
            sub = self._by_rid.get(sid)
        else:
            rid = self.demux.route(params)
            sub = self._by_rid.get(rid) if rid is not None else None
        if sub is None:
            self.port.event(
                _Discarded(f"{event.method} for subscription {sid!r}, which is not open")
            )
            return True
        if event.method == ACKNOWLEDGED:
            if sub.state in (SubState.OPENING, SubState.ACTIVE):
                ack = judge_acknowledgment(sub.filter, params)
                withdrawn = _withdrawn(sub.acknowledgment, ack)
                if withdrawn:
                    # RES-10: every later acknowledgment is re-checked. A re-opened
                    # stream is a new listen the server may grant more narrowly (no
                    # server-side subscription survives between listens, 2026-07-28
                    # basic/patterns/subscriptions.mdx); one that no longer names a URI
                    # it granted before closes the subscription instead of leaving the
                    # resource reported as watched while nothing watches it.
                    self._cancel_wire(sub, "the acknowledgment no longer names the resource")
                    self._end(
                        sub,
                        ResourceReadError(
                            f"server {self.port.name!r} no longer acknowledges the "
                            f"subscription to {', '.join(map(repr, withdrawn))} "
                            f"(subscription {sub.sub_id})"
                        ),
                    )
                    return True
                if sub.state is SubState.ACTIVE:
                    return True  # a repeated acknowledgment granting as much: no news
                sub.acknowledgment = ack
                sub.state = SubState.ACTIVE
                sub.ack_deadline = None
                sub.drops = 0
                self.port.event(ListenAcknowledged(sub.sub_id, ack))
            return True
        self.port.event(ListenNotification(sub.sub_id, event.method, params))
        return True

    def _server_cancel(self, params: Mapping[str, Any], now: float) -> bool:
        """stdio: the server ends a subscription by cancelling its listen request
        (2026-07-28 schema, ``CancelledNotification``: "solely to terminate a
        subscriptions/listen stream"). Server teardown is bookkeeping (NOTIF-3)."""
        rid = params.get("requestId")
        if isinstance(rid, bool) or not isinstance(rid, (int, str)):
            return False
        sub = self._by_rid.get(rid)
        if sub is None:
            return False
        self._forget_wire(sub)
        self._end(sub, None)
        return True

    # ------------------------------------------------------------ time

    def next_deadline(self) -> float | None:
        times = [
            t for s in self.subs.values() for t in (s.ack_deadline, s.reopen_at) if t is not None
        ]
        return min(times) if times else None

    def handle_timeout(self, now: float) -> None:
        for sub in list(self.subs.values()):
            if sub.ack_deadline is not None and now >= sub.ack_deadline:
                timeout = sub.ack_timeout
                self._cancel_wire(sub, "no acknowledgment within the ack timeout")
                self._end(
                    sub,
                    RequestTimeoutError(
                        f"{LISTEN} was not acknowledged within {timeout:g}s "
                        f"(subscription {sub.sub_id})",
                        method=LISTEN,
                    ),
                )
            elif sub.reopen_at is not None and now >= sub.reopen_at:
                sub.reopen_at = None
                sub.state = SubState.WAITING  # sent by the next hand-over


def _withdrawn(before: Acknowledgment | None, now: Acknowledgment) -> tuple[str, ...]:
    """The requested URIs an earlier acknowledgment granted and ``now`` does not
    (``Acknowledgment.missing_uris``: what each one left out)."""
    if before is None:
        return ()
    return tuple(u for u in now.missing_uris if u not in before.missing_uris)


def _reopens(error: MCPError) -> bool:
    """HTTP: does this failure drop the stream (re-open) or end it (SUB-17)?"""
    if isinstance(error, (UnauthorizedError, IncompatibleServerError)):
        return False
    if isinstance(error, TransientServerError):  # 5xx
        return True
    return isinstance(error, (TransportError, ConnectionError))
