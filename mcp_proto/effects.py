"""Effects: what a core operation asks its shell to do.

Multi-step operations (connect, paginated lists, ``tools/call`` with its checks, serving
a server's request) are generators in the core. They ``yield`` an effect, the shell's
driver performs it and sends back the outcome (or throws the error into the
generator). The logic exists once; each shell only knows how to perform these effects
(``SetLogLevel`` only for a 2026-07-28 server).

:class:`~mcp_proto.client.base.BaseClient` holds the one table saying which method
performs each effect and whether it waits (docs/embedding.md, "Driving the whole
client"): the effects that only set or read a connection's state (``Log``,
``SetLogLevel``, ``SetHeader``, ``PeekEra``) are performed there; a shell provides the
ones that wait.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, TypeVar, Union

from ._record import Record, builder

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from .errors import MCPError
    from .server_config import ServerConfig
    from .session import ServerInfo

__all__ = [
    "Attempt",
    "AwaitAcknowledged",
    "AwaitLive",
    "Call",
    "CallHost",
    "CloseListen",
    "Connect",
    "Effect",
    "Listen",
    "Log",
    "Notify",
    "Op",
    "PeekEra",
    "ProgressCallback",
    "RunAll",
    "SetHeader",
    "SetLogLevel",
    "TryConnect",
]

T = TypeVar("T")
_set = object.__setattr__  # (frozen: Record refuses setattr)
_new = object.__new__

#: ``progress(progress, total, message)`` (PROG-1).
ProgressCallback = Callable[[float, Union[float, None], Union[str, None]], Any]


class Connect(Record):
    """Make sure ``server`` is connected (spawn + handshake if needed); returns its
    :class:`~mcp_proto.session.ServerInfo`."""

    __slots__ = ("server",)
    server: str

    def __init__(self, server: str) -> None:
        _set(self, "server", server)


class TryConnect(Record):
    """One try of ``connect``'s transport chain (CONN-6): connect ``server`` and report
    how it went as an :class:`Attempt`; an :class:`~mcp_proto.errors.MCPError` is
    returned in it, never raised, together with the fact the core decides fallback on.

    ``config`` ``None``: the server's current configuration. Otherwise the server (not
    connected yet) is first rebuilt on ``config``, the next transport to try."""

    __slots__ = ("config", "server")
    server: str
    config: ServerConfig | None

    def __init__(self, server: str, config: ServerConfig | None = None) -> None:
        _set(self, "server", server)
        _set(self, "config", config)


class Attempt(Record):
    """What a :class:`TryConnect` met: the handshake's ``info``, or the ``error``, and
    whether the server answered ``initialize`` before it (``server_answered``: proof
    that an MCP server is there, so no other transport is tried, issue 9)."""

    __slots__ = ("error", "info", "server_answered")
    info: ServerInfo | None
    error: MCPError | None
    server_answered: bool

    def __init__(
        self,
        info: ServerInfo | None = None,
        error: MCPError | None = None,
        server_answered: bool = False,
    ) -> None:
        _set(self, "info", info)
        _set(self, "error", error)
        _set(self, "server_answered", server_answered)


class Call(Record):
    """Send a request to ``server`` and return its result (or raise its error).

    ``timeout`` is in seconds; ``None`` means the server's ``read_timeout``.

    ``tool`` is the definition of the tool a ``tools/call`` calls (a
    :class:`~mcp_proto.types.Tool` or its dict), for the driver to hand to the
    connection: on a 2026-07-28 HTTP server its ``x-mcp-header`` annotations become
    ``Mcp-Param-*`` headers (HDR-1). Drivers that do not know it ignore it.

    ``cancel_on_timeout`` ``False``: a timeout of this request sends no
    ``notifications/cancelled`` (TASK-19, PROG-5: a task-augmented request is cancelled
    with ``tasks/cancel``, by the operation). The shells hand it to the connection's
    ``start_call(cancel_on_timeout=)``."""

    __slots__ = ("cancel_on_timeout", "method", "params", "progress", "server", "timeout", "tool")
    server: str
    method: str
    params: dict[str, Any] | None
    timeout: float | None
    progress: ProgressCallback | None
    tool: Any
    cancel_on_timeout: bool

    def __init__(
        self,
        server: str,
        method: str,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        tool: Any = None,
        cancel_on_timeout: bool = True,
    ) -> None:
        _set(self, "server", server)
        _set(self, "method", method)
        _set(self, "params", params)
        _set(self, "timeout", timeout)
        _set(self, "progress", progress)
        _set(self, "tool", tool)
        _set(self, "cancel_on_timeout", cancel_on_timeout)


_CallBuilder = builder(Call)


def _new_call(
    server: str,
    method: str,
    params: dict[str, Any] | None,
    timeout: float | None,
    progress: ProgressCallback | None,
    tool: Any,
) -> Call:
    """``Call(server, method, params, timeout, progress, tool)``, built for the hot path
    (``call_tool`` makes one per call): plain stores on a :func:`builder` instance and
    one ``__class__`` assignment instead of seven ``object.__setattr__`` calls
    (mcp_proto/_record.py). The same frozen ``Call``."""
    call = _new(_CallBuilder)
    call.server = server
    call.method = method
    call.params = params
    call.timeout = timeout
    call.progress = progress
    call.tool = tool
    call.cancel_on_timeout = True
    _set(call, "__class__", Call)
    return call


class SetLogLevel(Record):
    """Set the log level a 2026-07-28 server's connection carries as ``_meta`` on
    every request (LIFE-15: the revision has no ``logging/setLevel``). ``level`` is
    one of ``LOG_LEVELS``, or ``None`` to stop sending one."""

    __slots__ = ("level", "server")
    server: str
    level: str | None

    def __init__(self, server: str, level: str | None) -> None:
        _set(self, "server", server)
        _set(self, "level", level)


class Notify(Record):
    """Send a notification. With ``only_if_connected`` a server that is not connected is
    skipped rather than started just to be told something."""

    __slots__ = ("method", "only_if_connected", "params", "server")
    server: str
    method: str
    params: dict[str, Any] | None
    only_if_connected: bool

    def __init__(
        self,
        server: str,
        method: str,
        params: dict[str, Any] | None = None,
        only_if_connected: bool = False,
    ) -> None:
        _set(self, "server", server)
        _set(self, "method", method)
        _set(self, "params", params)
        _set(self, "only_if_connected", only_if_connected)


class CallHost(Record):
    """Run host code (a handler the user registered) and return what it returned.

    The Trio shell awaits the result when the handler is an ``async`` function. Any
    exception the handler raises is thrown back into the operation."""

    __slots__ = ("args", "fn")
    fn: Callable[..., Any]
    args: tuple[Any, ...]

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...] = ()) -> None:
        _set(self, "fn", fn)
        _set(self, "args", args)


class Log(Record):
    """Log ``message`` at ``level`` (a ``logging`` level name). The core never logs."""

    __slots__ = ("level", "message")
    level: str
    message: str

    def __init__(self, level: str, message: str) -> None:
        _set(self, "level", level)
        _set(self, "message", message)


class SetHeader(Record):
    """Replace (``value`` ``None``: remove) one configured HTTP header of ``server``'s
    connection from its next request on (a rotated token: ``Authorization``). The
    connection refuses a stdio server or a value with CR or LF (``ValueError``)."""

    __slots__ = ("name", "server", "value")
    server: str
    name: str
    value: str | None

    def __init__(self, server: str, name: str, value: str | None) -> None:
        _set(self, "server", server)
        _set(self, "name", name)
        _set(self, "value", value)


class PeekEra(Record):
    """The era of ``server``'s connection as it stands (``"modern"``, ``"legacy"``, or
    ``None`` before one is known), without connecting: for an operation that only
    concerns a server already connected (telling it something, undoing a
    subscription)."""

    __slots__ = ("server",)
    server: str

    def __init__(self, server: str) -> None:
        _set(self, "server", server)


class Listen(Record):
    """Open a ``subscriptions/listen`` subscription on ``server`` (2026-07-28) for
    ``notifications`` (a ``ListenFilter`` or its mapping); returns the shell's
    subscription handle, not acknowledged yet."""

    __slots__ = ("notifications", "server")
    server: str
    notifications: Mapping[str, Any]

    def __init__(self, server: str, notifications: Mapping[str, Any]) -> None:
        _set(self, "server", server)
        _set(self, "notifications", notifications)


class AwaitAcknowledged(Record):
    """Wait until ``subscription`` (a :class:`Listen` outcome) is acknowledged; returns
    the granted filter, or raises why it ended first (its ``ack_timeout`` included)."""

    __slots__ = ("subscription",)
    subscription: Any

    def __init__(self, subscription: Any) -> None:
        _set(self, "subscription", subscription)


class AwaitLive(Record):
    """Wait until ``subscription`` is live *now*: acknowledged on its current stream,
    not dropped (a dropped stream is waited for through its re-open, RES-11). Returns
    the granted filter of the stream the server honours; raises why it ended first, or
    ``RequestTimeoutError`` after ``timeout`` seconds (``None``: no bound of its own)."""

    __slots__ = ("subscription", "timeout")
    subscription: Any
    timeout: float | None

    def __init__(self, subscription: Any, timeout: float | None) -> None:
        _set(self, "subscription", subscription)
        _set(self, "timeout", timeout)


class CloseListen(Record):
    """End ``subscription`` (the server is told, per its transport)."""

    __slots__ = ("subscription",)
    subscription: Any

    def __init__(self, subscription: Any) -> None:
        _set(self, "subscription", subscription)


class RunAll(Record):
    """Run ``ops`` (operations) side by side, each to its end; returns their results
    in order. If some fail, the first failure in ``ops`` order is raised once every
    one has finished (``call_tools(..., concurrent=True)``, TOOL-6). How they run side
    by side is the shell's (pipelined on one thread, a task each); a driver without
    concurrency may run them in turn."""

    __slots__ = ("ops",)
    ops: Sequence[Op[Any]]

    def __init__(self, ops: Sequence[Op[Any]]) -> None:
        _set(self, "ops", ops)


Effect = Union[
    Connect,
    TryConnect,
    Call,
    Notify,
    CallHost,
    Log,
    SetLogLevel,
    SetHeader,
    PeekEra,
    Listen,
    AwaitAcknowledged,
    AwaitLive,
    CloseListen,
    RunAll,
]
Op = Generator[Effect, Any, T]
