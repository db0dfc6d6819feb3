"""Multi round-trip requests (2026-07-28 ``input_required``) as a sans-IO operation.

Spec: ``basic/patterns/mrtr.mdx``. docs/requirements.md MRTR-1..7, MRTR-9.

:func:`input_required_op` is a generator in the style of :mod:`mcp_proto.effects`: it
yields ``Call`` (each retry is a new request, so the shell gives it a new JSON-RPC id),
``CallHost`` (the host's elicitation / sampling / roots handlers through
:func:`mcp_proto.handlers.serve_request`, the wait callback, and the shell's own
``clock`` and ``sleep``, so no clock lives here) and ``Log``. Both shells drive it
unchanged; the Trio shell awaits what an ``async`` callable returns.

Every failure is an :class:`InputRequiredFailure` (an ``InputRequiredError``) carrying a
:class:`Continuation`; :func:`resume_op` continues from it, keeping the answers already
produced (MRTR-6, MRTR-8).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

import attrs

from ..effects import Call, CallHost, Log, Op
from ..errors import InputRequiredError, MCPError, RemoteProtocolError
from ..handlers import Handlers, serve_request
from .meta import result_type

__all__ = [
    "INPUT_REQUIRED_METHODS",
    "MAX_ROUNDS",
    "Continuation",
    "FailureReason",
    "InputRequiredFailure",
    "InputRequiredWait",
    "Pace",
    "input_required_op",
    "result_kind",
    "result_view",
    "resume_op",
    "retry_params",
]

#: More input rounds than this fail the exchange (MRTR-3).
MAX_ROUNDS: Final = 10
#: The only requests a server may answer with ``input_required`` (spec: MRTR
#: § Supported Requests).
INPUT_REQUIRED_METHODS: Final = frozenset({"tools/call", "resources/read", "prompts/get"})
#: Input request method → the client capability it needs (spec: MRTR § Server
#: Requirements 7: servers MUST NOT send one the client has not declared).
_CAPABILITY_OF: Final[Mapping[str, str]] = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
_RETRY_KEYS: Final = ("inputResponses", "requestState")
#: "No result yet: send the request" (a result may itself be JSON null).
_SEND: Final[Any] = object()

FailureReason = Literal[
    "rounds", "malformed", "unanswerable", "handler", "cancelled", "timeout", "request"
]


@attrs.frozen
class Pace:
    """The growing pause between retries of an out-of-band wait (MRTR-4), seconds."""

    initial: float = 0.5
    factor: float = 2.0
    maximum: float = 8.0

    def next(self, delay: float) -> float:
        return min(delay * self.factor, self.maximum)


@attrs.frozen
class InputRequiredWait:
    """What the host's ``on_input_required_wait`` callback is shown (MRTR-5, §E4).

    ``round_trip`` counts the requests sent so far in this exchange; ``delay`` is the
    pause the client will take unless told otherwise; ``elapsed`` is the time since the
    wait began (seconds, the shell's clock)."""

    rpc_method: str
    round_trip: int
    delay: float
    request_state: str | None
    result: Mapping[str, Any]
    elapsed: float


@attrs.frozen
class Continuation:
    """Where an interrupted exchange stands, enough to resume it (MRTR-6).

    ``params`` are the original request's (without ``inputResponses`` /
    ``requestState``); ``request_state`` and ``input_requests`` are the last valid
    ``input_required`` result's; ``answered`` holds the responses already produced for
    those requests, which are never put back to a handler (MRTR-8)."""

    method: str
    params: Mapping[str, Any] | None
    request_state: str | None = None
    input_requests: Mapping[str, Any] | None = None
    answered: Mapping[str, Any] = attrs.field(factory=dict)


# TODO(merge): the modern error classes land in mcp_proto.errors with issue 10's error
# work; if InputRequiredError grows a continuation and a reason there, this subclass
# folds into it.
class InputRequiredFailure(InputRequiredError):
    """An ``input_required`` exchange that could not complete (MRTR-3, MRTR-6).

    Always resumable: ``continuation`` is where it stands, ``reason`` why it stopped
    (``rounds``, ``malformed``, ``unanswerable``, ``handler``, ``cancelled``,
    ``timeout``, ``request``: a retry's request failed, see ``__cause__``)."""

    def __init__(self, message: str, *, reason: FailureReason, continuation: Continuation) -> None:
        super().__init__(
            message,
            input_requests=continuation.input_requests,
            request_state=continuation.request_state,
            request_method=continuation.method,
            request_params=continuation.params,
            # HYG-4 / MRTR-8: the answers already produced are on the public error too,
            # so a host that rebuilds the error from its fields keeps them.
            input_responses=dict(continuation.answered),
        )
        self.reason: FailureReason = reason
        self.continuation = continuation

    @property
    def answered(self) -> Mapping[str, Any]:
        return self.continuation.answered


def result_kind(result: Any) -> Literal["complete", "input_required"]:
    """A 2026-07-28 result's ``resultType``: absent means complete; an unknown one (or
    a result that is not an object) is an
    :class:`~mcp_proto.errors.UnknownResultTypeError` (a ``RemoteProtocolError``). The
    one check is :func:`mcp_proto.modern.meta.result_type` (LIFE-19)."""
    kind = result_type(result)
    if kind == "input_required":
        return "input_required"
    if kind != "complete":  # pragma: no cover - result_type knows no other value here
        raise RemoteProtocolError("the server's result has an unrecognised resultType")
    return "complete"


def retry_params(
    params: Mapping[str, Any] | None,
    input_responses: Mapping[str, Any] | None,
    request_state: str | None,
) -> dict[str, Any]:
    """The retry's params: the original ones plus ``inputResponses`` (when there were
    input requests) and ``requestState`` exactly as received — never parsed, never
    re-encoded, omitted when the server sent none (MRTR-2; spec: MRTR § Client
    Requirements 2). The decoder keeps a JSON string as the same ``str`` and the
    encoder writes that ``str`` back as the same JSON value, so the echo is exact."""
    out = {k: v for k, v in (params or {}).items() if k not in _RETRY_KEYS}
    if input_responses:
        out["inputResponses"] = dict(input_responses)
    if request_state is not None:
        out["requestState"] = request_state
    return out


def _name(key: str) -> str:
    """An input request's key for a message: peer text, so quoted and cut short."""
    return repr(key if len(key) <= 64 else key[:64] + "…")


def _parse(result: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str | None] | str:
    """``(input_requests, request_state)`` of an ``input_required`` result, or what is
    wrong with it."""
    requests = result.get("inputRequests")
    state = result.get("requestState")
    if state is not None and not isinstance(state, str):
        return "requestState is not a string"
    if requests is not None:
        if not isinstance(requests, dict):
            return "inputRequests is not an object"
        for value in requests.values():
            if not isinstance(value, dict) or not isinstance(value.get("method"), str):
                return "an input request has no method"
            if value.get("params") is not None and not isinstance(value["params"], dict):
                return "an input request's params are not an object"
    if not requests and state is None:
        # Spec: MRTR § Server Requirements 6: at least one of the two.
        return "neither inputRequests nor requestState"
    return (requests or None), state


def input_required_op(
    server: str,
    method: str,
    params: dict[str, Any] | None,
    *,
    handlers: Handlers,
    clock: Callable[[], float],
    sleep: Callable[[float], Any],
    timeout: float | None = None,
    wait_limit: float | None = None,
    capabilities: Mapping[str, Any] | None = None,
    on_wait: Callable[[InputRequiredWait], Any] | None = None,
    first_result: Any = _SEND,
    continuation: Continuation | None = None,
    pace: Pace = Pace(),
    on_input: Callable[[Mapping[str, Any]], Any] | None = None,
) -> Op[Any]:
    """Send ``method`` (or take its ``first_result`` already received) and see the
    ``input_required`` rounds through to the complete result (MRTR-1).

    - Input requests are answered with the host's handlers (``serve_request``); one that
      is unknown, needs a capability missing from ``capabilities`` (when given), or whose
      handler fails, fails the exchange locally: nothing of the host's error reaches the
      server (MRTR-3, MRTR-9). More than :data:`MAX_ROUNDS` rounds fail it too.
    - A result with only a ``requestState`` is an out-of-band wait (MRTR-4): retried
      after a growing pause (``pace``). ``on_wait`` steers it (MRTR-5): ``"cancel"``
      stops, ``"retry"`` retries now, anything else waits the pause. Pauses and the
      callback's own time count against ``wait_limit`` seconds from the start of the
      wait (the call's timeout, else the transport's read timeout: MRTR-7).
    - ``timeout`` is passed on to each ``Call``.
    - ``continuation`` resumes an interrupted exchange (see :func:`resume_op`).
    - ``on_input(requests)`` (host code) is shown each round's input requests before
      they are answered (``call_tool_streaming``'s ``InputChunk``).
    """
    base = {k: v for k, v in (params or {}).items() if k not in _RETRY_KEYS}
    state: str | None = None
    requests: dict[str, Any] | None = None
    answered: dict[str, Any] = {}
    rounds = 0
    sent = 0
    wait_started: float | None = None
    delay = pace.initial

    def failure(
        reason: FailureReason, message: str, cause: BaseException | None = None
    ) -> InputRequiredFailure:
        cont = Continuation(method, dict(base), state, requests, dict(answered))
        err = InputRequiredFailure(
            f"{method} on {server!r}: {message}", reason=reason, continuation=cont
        )
        err.__cause__ = cause
        return err

    def answer() -> Op[None]:
        assert requests is not None
        for key, request in requests.items():
            if key in answered:
                continue  # produced before an interruption: never asked again (MRTR-8)
            req_method: str = request["method"]
            req_params: dict[str, Any] = dict(request.get("params") or {})
            capability = _CAPABILITY_OF.get(req_method)
            if capability is None:
                raise failure("unanswerable", f"input request {_name(key)} has an unknown method")
            if (capability == "elicitation" and handlers.elicitation is None) or (
                capability == "sampling" and handlers.sampling is None
            ):
                raise failure("unanswerable", f"input request {_name(key)} has no handler")
            if capabilities is not None and capability not in capabilities:
                raise failure(
                    "unanswerable",
                    f"input request {_name(key)} needs the undeclared {capability!r}",
                )
            if req_method == "elicitation/create" and "elicitationId" in req_params:
                # ELIC-8: 2026-07-28 removed elicitationId; the host never sees one.
                del req_params["elicitationId"]
                yield Log("WARNING", f"server {server!r} sent an elicitationId; dropped")
            reply = yield from serve_request(handlers, req_method, req_params, server=server)
            if reply.is_error:
                # inputResponses has no per-request error channel: fail locally (MRTR-9).
                raise failure("handler", f"input request {_name(key)} could not be answered")
            answered[key] = reply.result

    if continuation is not None:
        base = {k: v for k, v in (continuation.params or {}).items() if k not in _RETRY_KEYS}
        state = continuation.request_state
        requests = dict(continuation.input_requests) if continuation.input_requests else None
        answered = dict(continuation.answered)
        if requests:
            yield from answer()
        result: Any = _SEND
    elif first_result is _SEND:
        result = yield Call(server, method, params, timeout)  # its errors are its own
        sent = 1
    else:
        result, sent = first_result, 1

    while True:
        if result is _SEND:
            out = retry_params(base, answered if requests else None, state)
            try:
                result = yield Call(server, method, out, timeout)
            except MCPError as exc:
                raise failure("request", f"the retry failed ({type(exc).__name__})", exc) from exc
            sent += 1
        try:
            kind = result_kind(result)
        except RemoteProtocolError as exc:
            raise failure("malformed", str(exc), exc) from exc
        if kind == "complete":
            return result
        if method not in INPUT_REQUIRED_METHODS:
            raise failure("malformed", "input_required is not allowed on this method")
        parsed = _parse(result)
        if isinstance(parsed, str):
            raise failure("malformed", f"malformed input_required result: {parsed}")
        new_requests, new_state = parsed
        requests, state, answered = new_requests, new_state, {}
        result = _SEND
        if requests:
            wait_started, delay = None, pace.initial  # in-band progress ends a wait
            rounds += 1
            if rounds > MAX_ROUNDS:
                raise failure("rounds", f"more than {MAX_ROUNDS} input_required rounds")
            if on_input is not None:
                yield CallHost(on_input, (dict(requests),))
            yield from answer()
            continue
        # Only a requestState: an out-of-band wait (MRTR-4).
        now = yield CallHost(clock)
        if wait_started is None:
            wait_started = now
        if wait_limit is not None and now >= wait_started + wait_limit:
            raise failure("timeout", f"the wait exceeded {wait_limit:g} s")
        decision: Any = None
        if on_wait is not None:
            wait = InputRequiredWait(
                method, sent, delay, state, result_view(parsed), now - wait_started
            )
            try:
                decision = yield CallHost(on_wait, (wait,))
            except Exception as exc:
                yield Log("ERROR", f"on_input_required_wait failed for {server!r}: {exc!r}")
                raise failure("handler", "the wait callback failed", exc) from exc
            now = yield CallHost(clock)  # the callback's time counts (MRTR-7)
        if decision == "cancel":
            raise failure("cancelled", "the host cancelled the wait")
        remaining = None if wait_limit is None else wait_started + wait_limit - now
        if remaining is not None and remaining <= 0:
            raise failure("timeout", f"the wait exceeded {wait_limit:g} s")
        if decision == "retry":
            continue
        yield CallHost(sleep, (delay if remaining is None else min(delay, remaining),))
        delay = pace.next(delay)


def result_view(parsed: tuple[dict[str, Any] | None, str | None]) -> Mapping[str, Any]:
    """The wait's ``result`` as shown to the host: the interim result's fields."""
    requests, state = parsed
    out: dict[str, Any] = {"resultType": "input_required"}
    if requests:
        out["inputRequests"] = requests
    if state is not None:
        out["requestState"] = state
    return out


def _kept_answers(error: InputRequiredError) -> dict[str, Any]:
    """The answers an error says were produced (MRTR-8), kept only for input requests
    it still lists: anything else cannot be re-sent as an ``inputResponses`` key."""
    given, requests = error.input_responses, error.input_requests
    if not isinstance(given, Mapping) or not isinstance(requests, Mapping):
        return {}
    return {k: v for k, v in given.items() if isinstance(k, str) and k in requests}


def resume_op(
    server: str,
    error: InputRequiredError,
    *,
    handlers: Handlers,
    clock: Callable[[], float],
    sleep: Callable[[float], Any],
    timeout: float | None = None,
    wait_limit: float | None = None,
    capabilities: Mapping[str, Any] | None = None,
    on_wait: Callable[[InputRequiredWait], Any] | None = None,
    pace: Pace = Pace(),
) -> Op[Any]:
    """``resume_input_required(error)`` (MRTR-6): continue an interrupted exchange with
    a fresh round budget and wait. Unanswered input requests are answered first (those
    already answered are kept), then the request is retried with the state."""
    if isinstance(error, InputRequiredFailure):
        cont = error.continuation
    elif error.request_method is not None:
        cont = Continuation(
            error.request_method,
            error.request_params if isinstance(error.request_params, Mapping) else None,
            error.request_state,
            error.input_requests if isinstance(error.input_requests, Mapping) else None,
            _kept_answers(error),
        )
    else:
        raise ValueError("this InputRequiredError is not resumable")
    return (
        yield from input_required_op(
            server,
            cont.method,
            dict(cont.params) if cont.params is not None else None,
            handlers=handlers,
            clock=clock,
            sleep=sleep,
            timeout=timeout,
            wait_limit=wait_limit,
            capabilities=capabilities,
            on_wait=on_wait,
            continuation=cont,
            pace=pace,
        )
    )
