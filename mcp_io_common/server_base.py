"""What both shells' server objects hold and do alike, without waiting: the machine
they drive (``mcp_proto.connection.Connection``, built from the client's arguments),
the settings a caller changes on it, and the table of open listen subscriptions.

Each shell's ``BaseServer`` derives from :class:`ServerBase` first and adds what waits
(feeding the machine, performing its frames, waking callers): threads and locks in
``mcp_io_sync/_base.py``, parked tasks in ``mcp_io_trio/_base.py``.
"""

from __future__ import annotations

import importlib
import logging
import random
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from mcp_proto.config import ServerConfig
from mcp_proto.connection import Connection
from mcp_proto.connection.events import ListenEnded
from mcp_proto.errors import ValidationError
from mcp_proto.limits import Limits

if TYPE_CHECKING:
    from mcp_proto.modern.notify_queue import ListenFilter

    from .subscription import Listener, SubscriptionBase

__all__ = ["ServerBase"]

Sub = TypeVar("Sub", bound="SubscriptionBase")
Lock = TypeVar("Lock", bound=AbstractContextManager[Any])


class ServerBase(Generic[Sub, Lock]):
    """A server object's machine and the state around it that does not wait. ``Sub``:
    the shell's subscription handle; ``Lock``: the type of its ``_lock``."""

    #: The transport type (``config.type``) a server class serves.
    type = "base"
    #: The shell's package (``mcp_io_sync``...): that of the class deriving from this one.
    _shell_package: str

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if ServerBase in cls.__bases__:
            cls._shell_package = cls.__module__.rpartition(".")[0]

    #: Held around a change of the machine's settings: the blocking shell's machine
    #: lock (any thread may call); a no-op in a single-threaded shell.
    _lock: Lock
    _conn: Connection
    #: The shell's monotonic clock (the "now" handed to the machine).
    _clock: Callable[[], float]
    #: The callers waiting for each call's outcome, by call id, and the progress
    #: callbacks of the calls that have one (the shell's dispatch wakes and calls them).
    _waiters: dict[int, Any]
    _progress: dict[int, Callable[..., Any]]

    def __init__(
        self,
        config: ServerConfig,
        *,
        name: str,
        limits: Limits,
        logger: logging.Logger,
        on_event: Callable[[Any, object], None],
        **machine: Any,
    ) -> None:
        """``machine``: the rest of :class:`~mcp_proto.connection.Connection`'s
        arguments, as the client gives them (client info, capabilities, the 2026-07-28
        request ``_meta``, extensions and era cache)."""
        self.config = config
        self.name = name
        self._limits = limits
        self._logger = logger
        #: ``on_event(server, event)``: hands the client what this server dispatched.
        self._on_event = on_event
        # The shell owns randomness: the machine draws its retry jitter from here.
        self._random = random.Random()
        self._conn: Connection = Connection(
            config, name=name, limits=limits, random=self._random.random, **machine
        )
        # Open subscriptions/listen handles by sub id (their events come from the
        # machine like every other; the client routes them: NOTIF-3).
        self._subscriptions: dict[int, Sub] = {}

    # ------------------------------------------------------------ settings

    @property
    def log_level(self) -> str | None:
        """The level a 2026-07-28 connection carries as ``_meta`` (LIFE-15)."""
        return self._conn.log_level

    def set_era_log_level(self, level: str | None) -> None:
        """Carry ``level`` as ``_meta`` on this server's next 2026-07-28 requests."""
        with self._lock:
            self._conn.log_level = level

    def set_header(self, name: str, value: str | None) -> None:
        """Replace (``None``: remove) one configured HTTP header from the next request
        on (``client.set_authorization``; the machine refuses a stdio server)."""
        with self._lock:
            self._conn.set_header(name, value)

    # ------------------------------------------------------------ calls

    def _start_call(
        self,
        waiter: Any,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        progress: Callable[..., Any] | None,
        tool: Any = None,
        cancel_on_timeout: bool = True,
        token: Any = None,
    ) -> int:
        """Start a call on the machine for ``waiter`` (the blocking shell: under
        ``_lock``); its id. ``token``: the blocking shell's cancellation handle
        (:meth:`_bind_token`). Every request goes through here: nothing is called that
        the call does not need."""
        cid = self._conn.start_call(
            method,
            params,
            now=self._clock(),
            timeout=timeout,
            progress=progress is not None,
            tool=tool,
            cancel_on_timeout=cancel_on_timeout,
        )
        self._waiters[cid] = waiter
        if token is not None:
            self._bind_token(token, cid)
        if progress is not None:
            self._progress[cid] = progress
        logger = self._logger
        if logger.isEnabledFor(logging.DEBUG):  # (one call, not two, when it is not)
            logger.debug("-> %s %s (call %s)", self.name, method, cid)
        return cid

    def _bind_token(self, token: Any, cid: int) -> None:
        """The blocking shell's: ``token`` now names call ``cid``."""
        raise NotImplementedError  # pragma: no cover - never given a token elsewhere

    # ------------------------------------------------------------ subscriptions

    @staticmethod
    def _listen_filter(notifications: ListenFilter | Mapping[str, object]) -> ListenFilter:
        """What ``listen`` asks for, checked and frozen (``ValidationError`` if bad)."""
        # Subscriptions (2026-07-28) load with the first ``listen``, not with the shell.
        from mcp_proto.modern.notify_queue import ListenFilter

        try:
            return ListenFilter.coerce(notifications)
        except (TypeError, ValueError) as exc:
            raise ValidationError(f"bad notification filter: {exc}") from None

    def listen(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
        """Open a ``subscriptions/listen`` subscription (2026-07-28 servers; a
        handshake-era server raises ``CapabilityError``); returns its handle (a
        ``Subscription`` of the shell) once the request is on its way, not yet
        acknowledged. ``callback(method, params)``, a first listener, runs off the
        transport's reader: on the subscription's own thread in the blocking shell, in
        its own task under Trio (where it may be ``async def``). ``ack_timeout``:
        ``None`` is the server's ``read_timeout``, ``False`` waits for ever (SUB-5).

        (Each shell's method, with its own signature, overrides this one.)"""
        raise NotImplementedError

    def _open_listen(
        self,
        flt: ListenFilter,
        callback: Listener | None,
        ack_timeout: float | Literal[False] | None,
        now: float,
    ) -> Sub:
        """``listen`` on a connected server (under ``_lock``): the machine starts the
        subscription; its handle (the shell's ``Subscription``, with ``callback`` as its
        first listener) is registered for the machine's events."""
        # The shell's _listen module loads with the first listen, as the revision does.
        module = importlib.import_module(f"{self._shell_package}._listen")
        sub_id = self._conn.start_listen(flt, now=now, ack_timeout=ack_timeout)
        sub: Sub = module.Subscription(self, sub_id, flt, logger=self._logger)
        if callback is not None:
            sub.on_notification(callback)
        self._subscriptions[sub_id] = sub
        return sub

    def _listen_event(self, event: Any) -> Sub | None:
        """The handle an event of a subscription is for (forgotten at its end)."""
        if type(event) is ListenEnded:
            return self._subscriptions.pop(event.sub_id, None)
        return self._subscriptions.get(event.sub_id)
