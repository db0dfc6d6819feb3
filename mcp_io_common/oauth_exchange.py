"""Running the provider's flows outside a connection (issue 21 item 5, issue 22), the
parts both shells share: ``BrowserOAuth.authenticate`` and ``oauth_client``'s
``start_oauth_flow``/``complete_oauth_flow`` have no connection machine to perform a
flow's effects, so each shell drives them itself.

What is here: a flow stepped for a shell's driver (:class:`FlowRun`), a provider flow
narrowed to its exchanges (:func:`exchanges`: its notices logged, any other effect
refused), and one exchange but its sending and reading (:class:`FlowExchange`:
httpcore's arguments, the body kept up to the flow's bound, the response, a failure's
typed error). Each shell's ``_oauth_client`` only sends, reads the body's chunks and
performs the effects, blocking or awaited.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any, Final, Generic, TypedDict, TypeVar

import httpcore

from mcp_proto import deprecations
from mcp_proto.errors import MCPError, RequestTimeoutError, TransportError
from mcp_proto.oauth import Flow, HttpRequest, HttpResponse, Notice, OAuthCallbackError

from .httpcore_glue import HTTPCORE_ERRORS, enc, str_headers
from .notices import write_notice

__all__ = [
    "EXCHANGE_TIMEOUTS",
    "FlowExchange",
    "FlowRun",
    "StreamArgs",
    "exchange_error",
    "exchanges",
    "log_notice",
]

E = TypeVar("E")
T = TypeVar("T")

#: How long each exchange run outside a connection (metadata, registration, token) may
#: take per phase (httpcore's connect/read/write/pool timeouts).
EXCHANGE_TIMEOUTS: Final = dict.fromkeys(("connect", "read", "write", "pool"), 30.0)


class FlowRun(Generic[E, T]):
    """Steps a flow for a shell's driver, which performs each effect (blocking, or
    awaited) and hands the result back: :meth:`send` returns the flow's next effect,
    or ``None`` once it returned (:attr:`result`). Leaving the ``with`` block closes
    the flow, so a failed exchange abandons it (its ``finally`` clauses run)."""

    result: T

    def __init__(self, flow: Generator[E, Any, T]) -> None:
        self._flow = flow

    def send(self, reply: object) -> E | None:
        try:
            return self._flow.send(reply)
        except StopIteration as done:
            self.result = done.value
            return None

    def __enter__(self) -> FlowRun[E, T]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._flow.close()


def exchanges(flow: Flow[T], logger: logging.Logger) -> Generator[HttpRequest, object, T]:
    """``flow`` (``start_authorization_flow``, ``complete_authorization_flow``) as it
    runs outside a connection: its exchanges passed on, its notices logged (a
    deprecation once per process: DEP-7). Any other effect is refused, since these flows
    ask the host for nothing but exchanges there."""
    reply: object = None
    try:
        while True:
            try:
                effect = flow.send(reply)
            except StopIteration as done:
                result: T = done.value
                return result
            reply = None
            if isinstance(effect, HttpRequest):
                reply = yield effect
            elif isinstance(effect, Notice):
                log_notice(logger, effect)
            else:
                raise OAuthCallbackError(
                    f"the OAuth flow asked for {type(effect).__name__} outside a connection",
                    reason="no_handler",
                )
    finally:
        flow.close()


def log_notice(logger: logging.Logger, notice: Notice) -> None:
    """A flow's notice on the host's logger: a deprecation once per process through
    the registry (DEP-7, DEP-11), a migration as a WARNING, the rest at INFO."""
    if notice.kind == "deprecation" and notice.deprecation:
        deprecations.announce(notice.deprecation, lambda text: write_notice(logger, text))
        return
    level = logging.WARNING if notice.kind == "migration" else logging.INFO
    logger.log(level, "OAuth: %s", notice.message)


class StreamArgs(TypedDict):
    """The arguments of httpcore's ``pool.stream`` for one exchange."""

    method: str
    url: str
    headers: list[tuple[bytes, bytes]]
    content: bytes
    extensions: dict[str, dict[str, float]]


class FlowExchange:
    """One exchange of a flow, but its sending and reading (each shell's): the request
    as httpcore's arguments (:meth:`stream_args`), the body kept up to
    ``max_response_bytes + 1`` (:meth:`keep`; the flow refuses a larger one, so an
    endless document costs a bounded read), the :class:`HttpResponse` for the flow,
    and a failure raised as its typed error (:meth:`errors`)."""

    def __init__(self, request: HttpRequest) -> None:
        self.request = request
        self._parts: list[bytes] = []
        self._size = 0

    def stream_args(self) -> StreamArgs:
        request = self.request
        return {
            "method": request.method,
            "url": request.url,
            "headers": enc(list(request.headers)),
            "content": request.body,
            "extensions": {"timeout": EXCHANGE_TIMEOUTS},
        }

    def keep(self, chunk: bytes) -> bool:
        """Keep ``chunk`` of the body; whether to read on (not once past the bound)."""
        self._parts.append(chunk)
        self._size += len(chunk)
        bound = self.request.max_response_bytes
        return bound is None or self._size <= bound

    def response(self, response: httpcore.Response) -> HttpResponse:
        """What the flow is sent: the status, the headers and the body kept."""
        headers = tuple(str_headers(response.headers))
        return HttpResponse(response.status, headers, b"".join(self._parts), time.time())

    @contextmanager
    def errors(self) -> Iterator[None]:
        """httpcore's failures (and the socket's) of this exchange as its typed error."""
        try:
            yield
        except (*HTTPCORE_ERRORS, OSError) as exc:
            raise exchange_error(self.request, exc) from exc


def exchange_error(request: HttpRequest, exc: BaseException) -> MCPError:
    """The typed error of an exchange that failed outside a connection (no connection
    machine to map it): a timeout is a ``RequestTimeoutError``, the rest a
    ``TransportError``; the message names the step and its URL, never a body."""
    what = f"OAuth {request.purpose.replace('_', ' ')} request to {request.url}"
    detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
        return RequestTimeoutError(f"{what}: no answer in time ({detail})")
    return TransportError(f"{what}: failed ({detail})")
