"""The part of a shell's ``Client`` that is the same in every shell: accessors that
only read or set the core's state, with no I/O and nothing to wait for.

``mcp_io_sync.Client`` and ``mcp_io_trio.Client`` inherit it (issue 9: pure code both
shells need lives in the core, written once); what waits (requests, connecting,
closing) stays in each shell, blocking or ``async``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..types import Prompt, Resource, Root, Tool
from . import LOG_LEVELS, ClientCore
from .router import ServerSelector

if TYPE_CHECKING:
    from ..effects import Op
    from ..modern.meta import HostMeta
    from ..modern.mrtr import InputRequiredWait

__all__ = ["ClientFacade", "NotificationHandle"]

S = TypeVar("S")
InputRequiredWaitCallback = Callable[["InputRequiredWait"], Any]


class NotificationHandle:
    """What ``on_notification`` returns (NOTIF-1): :meth:`remove` takes the callback
    off again. It calls like the callback, so ``@client.on_notification`` keeps the
    decorated function usable under its name."""

    __slots__ = ("_callbacks", "callback")

    def __init__(self, callback: Callable[..., Any], callbacks: list[Any]) -> None:
        self.callback = callback
        self._callbacks = callbacks

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.callback(*args, **kwargs)

    @property
    def active(self) -> bool:
        """Whether the callback is still registered."""
        return any(c is self.callback for c in self._callbacks)

    def remove(self) -> bool:
        """Stop calling the callback; whether it was registered (idempotent)."""
        for i, registered in enumerate(self._callbacks):
            if registered is self.callback:
                del self._callbacks[i]
                return True
        return False

    def __repr__(self) -> str:
        return f"<NotificationHandle {self.callback!r}{'' if self.active else ' (removed)'}>"


class ClientFacade(Generic[S]):
    """Accessors of a client over ``_core`` (its :class:`ClientCore`) and ``_servers``
    (its server objects ``S`` by name)."""

    _core: ClientCore
    _servers: dict[str, S]
    _callbacks: list[Any]

    @property
    def servers(self) -> list[S]:
        return list(self._servers.values())

    def find_server(self, name: ServerSelector) -> S:
        """The server object ``name`` selects (a name, an index, a transport type or a
        server object, as ``server=``)."""
        return self._servers[self._core.select_server(name)]

    @property
    def tool_cache(self) -> list[Tool]:
        return self._core.tool_cache

    @property
    def prompt_cache(self) -> list[Prompt]:
        return self._core.prompt_cache

    @property
    def resource_cache(self) -> list[Resource]:
        """The resources listed so far, every server's (RES-1), until a
        ``resources/list_changed`` or a reconnect drops them."""
        return self._core.resource_cache

    @property
    def roots(self) -> tuple[Root, ...]:
        """The roots offered to servers (ROOT-1). Assigning replaces them and tells the
        connected servers, as ``set_roots`` does (an async shell tells them in the
        background; await ``set_roots`` to wait for it)."""
        return self._core.roots

    @roots.setter
    def roots(self, roots: Iterable[Root | Mapping[str, Any]]) -> None:
        roots = tuple(Root.coerce(r) for r in roots)  # a bad root raises here, now
        self._core.set_initial_roots(roots)  # read back at once, in every shell
        self._start_op(self._core.set_roots(roots), "setting the roots")

    @property
    def log_level(self) -> str | None:
        """The level the last ``set_log_level`` for every server set, ``None`` before
        (LOG-1). Assigning sets it on every server with logging, as ``set_log_level``
        does (an async shell in the background; await ``set_log_level`` to wait)."""
        return self._core.log_level

    @log_level.setter
    def log_level(self, level: str) -> None:
        if level not in LOG_LEVELS:  # raised here, now, in every shell
            raise ValueError(f"log level must be one of {', '.join(LOG_LEVELS)}")
        self._core.log_level = level  # read back at once, in every shell
        self._start_op(self._core.set_log_level(level), "setting the log level")

    def _start_op(self, op: Op[Any], what: str) -> None:
        """Run ``op`` for a property assignment: the blocking shell runs it now; an
        async one starts it in the background, logging a failure (``what``)."""
        raise NotImplementedError  # pragma: no cover - the shell's

    def on_notification(self, callback: Callable[..., Any]) -> NotificationHandle:
        """Register ``callback(server, method, params)`` (NOTIF-1; any number; usable
        as a decorator). Returns a :class:`NotificationHandle`: ``.remove()`` takes it
        off (``remove_notification_handler`` too)."""
        self._callbacks.append(callback)
        return NotificationHandle(callback, self._callbacks)

    @property
    def request_meta(self) -> HostMeta:
        """The host metadata put in every 2026-07-28 request's ``_meta`` (LIFE-12): a
        mapping (copied when assigned: assign a new one to change it) or a callable
        called once per request."""
        return self._core.request_meta

    @request_meta.setter
    def request_meta(self, value: HostMeta) -> None:
        self._core.request_meta = value

    def on_input_required_wait(
        self, callback: InputRequiredWaitCallback | None
    ) -> InputRequiredWaitCallback | None:
        """Steer ``input_required`` out-of-band waits (MRTR-5): ``callback(wait)``
        returns ``"cancel"`` (stop: ``InputRequiredError``), ``"retry"`` (retry now) or
        anything else (wait the growing delay). Usable as a decorator; ``None`` removes
        it."""
        self._core.on_input_required_wait = callback
        return callback

    def remove_notification_handler(self, callback: Any) -> None:
        """Take a callback (or the handle ``on_notification`` returned) off; a
        ``ValueError`` if it is not registered."""
        if isinstance(callback, NotificationHandle):
            callback = callback.callback
        self._callbacks.remove(callback)

    def clear_cache(self) -> None:
        self._core.clear_cache()

    def _request_meta(self) -> Mapping[str, Any]:
        meta = self._core.request_meta
        if callable(meta):
            meta = meta()
        return {} if meta is None else meta
