"""The part of a shell's ``Client`` that is the same in every shell: accessors that
only read or set the core's state, with no I/O and nothing to wait for.

``mcp_io_sync.Client`` and ``mcp_io_trio.Client`` inherit it (issue 9: pure code both
shells need lives in the core, written once); what waits (requests, connecting,
closing) stays in each shell, blocking or ``async``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..types import Prompt, Root, Tool
from . import ClientCore
from .router import ServerSelector

if TYPE_CHECKING:
    from ..modern.meta import HostMeta
    from ..modern.mrtr import InputRequiredWait

__all__ = ["ClientFacade"]

S = TypeVar("S")
InputRequiredWaitCallback = Callable[["InputRequiredWait"], Any]


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
    def roots(self) -> tuple[Root, ...]:
        return self._core.roots

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
        self._callbacks.remove(callback)

    def clear_cache(self) -> None:
        self._core.clear_cache()

    def _request_meta(self) -> Mapping[str, Any]:
        meta = self._core.request_meta
        if callable(meta):
            meta = meta()
        return {} if meta is None else meta
