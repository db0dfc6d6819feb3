"""Per-server objects (REQUIREMENTS §E3): ``client.servers[i]`` and
``client.find_server(...)`` offer the client's methods scoped to that server.

:class:`ServerMethods` is mixed into every shell's server class and written once: each
method is the client's core operation with ``server=`` this server, run by the owning
client as its own methods are (``client._run``). So it returns what that method returns:
the value in the blocking shell, an awaitable in an async one (``await
server.call_tool(...)`` under Trio). The types say so too, without a second copy of each
method: a shell's server class derives from :class:`BlockingMethods` or
:class:`AwaitingMethods`, and :class:`scoped` (the descriptor each method is) gives a
``ToolResult`` on the first and a coroutine of one on the second. The per-server
``on_*`` handlers are the client's, kept for this server only
(:meth:`BaseClient._set_server_handler
<mcp_proto.client.base.BaseClient._set_server_handler>`): a server request from this
server is served by them, and this server's handshake declares them (CAP-1).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Concatenate, Final, Generic, ParamSpec, TypeVar, overload

from ..modern import SUBSCRIPTION_RESTART_MIN_INTERVAL
from ..types import Implementation
from .router import _INVALIDATES

if TYPE_CHECKING:
    from ..effects import Op, ProgressCallback
    from ..results import (
        CompletionResult,
        PromptResult,
        ResourcePage,
        ResourceTemplatePage,
        ToolResult,
    )
    from ..skills import LoadedSkill, SkillEntry
    from ..tasks import Task, TaskPage
    from ..types import Prompt, ResourceContent, Tool
    from . import ClientCore
    from .base import BaseClient
    from .streaming import ToolChunk

__all__ = [
    "CACHE_INVALIDATING",
    "AwaitingMethods",
    "BlockingMethods",
    "ServerMethods",
    "invalidates_cache",
    "scoped",
]

F = TypeVar("F", bound=Callable[..., Any])
P = ParamSpec("P")
T = TypeVar("T")


#: The notifications that make something the client caches for their server stale: its
#: tool, prompt and resource lists (TOOL-16, PROMPT-4, RES-14; with the 2026-07-28
#: result cache's pages, CACHE-14) and a cached read of an updated resource (its entry
#: is dropped: ``mcp_proto/modern/cache.py``, ``ResultCache.invalidate_for``).
CACHE_INVALIDATING: Final = frozenset({*_INVALIDATES, "notifications/resources/updated"})


def invalidates_cache(method: str) -> bool:
    """Whether a notification ``method`` runs the ``on_cache_invalidation`` hooks."""
    return method in CACHE_INVALIDATING


def _is_cache_hook(callback: object) -> bool:
    return getattr(callback, "_cache_hook", False) is True


class scoped(Generic[P, T]):
    """A per-server method made from ``op(server, ...)``, a core operation for that
    server: on a :class:`BlockingMethods` server it returns the operation's value, on an
    :class:`AwaitingMethods` one a coroutine of it (the owning client runs it)."""

    def __init__(self, op: Callable[Concatenate[ServerMethods, P], Op[T]]) -> None:
        self._op = op
        self.__doc__ = op.__doc__

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> scoped[P, T]: ...

    @overload
    def __get__(self, instance: BlockingMethods, owner: type[Any]) -> Callable[P, T]: ...

    @overload
    def __get__(
        self, instance: AwaitingMethods, owner: type[Any]
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...

    @overload
    def __get__(self, instance: ServerMethods, owner: type[Any]) -> Callable[P, Any]: ...

    def __get__(self, instance: ServerMethods | None, owner: type[Any]) -> Any:
        if instance is None:
            return self
        op = self._op

        @functools.wraps(op)
        def method(*args: P.args, **kwargs: P.kwargs) -> Any:
            return instance._owner()._run(op(instance, *args, **kwargs))

        return method


class ServerMethods:
    """The client's methods for one server. The owning client sets ``_client``."""

    #: stdio: a process that dies less than this many seconds after receiving the
    #: subscriptions is not restarted for them again: they end (SUB-21). The
    #: connection's own bound; a server class (a test) may shorten it.
    SUBSCRIPTION_RESTART_MIN_INTERVAL: float = SUBSCRIPTION_RESTART_MIN_INTERVAL

    name: str
    _client: BaseClient[Any] | None = None

    def _core(self) -> ClientCore:
        core: ClientCore = self._owner()._core
        return core

    def _owner(self) -> Any:  # the shell's client (its _run blocks or awaits)
        client = self._client
        if client is None:
            raise RuntimeError(f"server {self.name!r} belongs to no client")
        return client

    # ------------------------------------------------------------ tools, prompts

    @scoped
    def list_tools(self, *, cache: bool = True) -> Op[list[Tool]]:
        """This server's tools, cached until ``list_changed`` (TOOL-1)."""
        return self._core().list_tools(cache=cache, server=self.name)

    @scoped
    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> Op[ToolResult]:
        """Call this server's tool ``name`` (see the client's ``call_tool``)."""
        return self._core().call_tool(
            name, arguments, server=self.name, progress=progress, timeout=timeout
        )

    @scoped
    def list_prompts(self, *, cache: bool = True) -> Op[list[Prompt]]:
        return self._core().list_prompts(cache=cache, server=self.name)

    @scoped
    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> Op[PromptResult]:
        return self._core().get_prompt(
            name, arguments, server=self.name, timeout=timeout, progress=progress
        )

    # ------------------------------------------------------------ tasks, skills

    @scoped
    def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        ttl: int | None = None,
        timeout: float | None = None,
    ) -> Op[Task]:
        return self._core().call_tool_as_task(
            name, arguments, ttl=ttl, server=self.name, timeout=timeout
        )

    @scoped
    def get_task(self, task: Task | str) -> Op[Task]:
        return self._core().get_task(task, server=self.name)

    @scoped
    def get_task_result(
        self, task: Task | str, *, timeout: float | None = None
    ) -> Op[dict[str, Any]]:
        return self._core().get_task_result(task, server=self.name, timeout=timeout)

    @scoped
    def list_tasks(self, *, cursor: str | None = None) -> Op[TaskPage]:
        return self._core().list_tasks(cursor=cursor, server=self.name)

    @scoped
    def cancel_task(self, task: Task | str) -> Op[Task]:
        return self._core().cancel_task(task, server=self.name)

    @scoped
    def update_task(self, task: Task | str, input_responses: Mapping[str, object]) -> Op[Task]:
        return self._core().update_task(task, input_responses, server=self.name)

    @scoped
    def wait_for_task(
        self, task: Task | str, *, timeout: float | None = None, cancel_on_timeout: bool = False
    ) -> Op[Task]:
        return self._core().wait_for_task(
            task, timeout=timeout, server=self.name, cancel_on_timeout=cancel_on_timeout
        )

    @scoped
    def list_skills(self) -> Op[list[SkillEntry]]:
        return self._core().list_skills(server=self.name)

    @scoped
    def get_skill(self, uri: str) -> Op[SkillEntry]:
        return self._core().get_skill(uri, server=self.name)

    @scoped
    def load_skill(
        self, skill: SkillEntry | str, *, allow_dynamic: bool = False
    ) -> Op[LoadedSkill]:
        return self._core().load_skill(skill, server=self.name, allow_dynamic=allow_dynamic)

    # ------------------------------------------------------------ resources

    @scoped
    def list_resources(self, *, cache: bool = True, cursor: str | None = None) -> Op[ResourcePage]:
        return self._core().list_resources(cache=cache, cursor=cursor, server=self.name)

    @scoped
    def list_resource_templates(self, *, cursor: str | None = None) -> Op[ResourceTemplatePage]:
        return self._core().list_resource_templates(cursor=cursor, server=self.name)

    @scoped
    def read_resource(
        self, uri: str, *, timeout: float | None = None, progress: ProgressCallback | None = None
    ) -> Op[list[ResourceContent]]:
        return self._core().read_resource(uri, server=self.name, timeout=timeout, progress=progress)

    @scoped
    def subscribe_resource(self, uri: str) -> Op[bool]:
        """Updates of ``uri`` reach this server's ``on_notification`` callbacks (the
        era decides how: see the client's ``subscribe_resource``)."""
        return self._core().subscribe_resource(uri, server=self.name)

    @scoped
    def unsubscribe_resource(self, uri: str) -> Op[bool]:
        return self._core().unsubscribe_resource(uri, server=self.name)

    # ------------------------------------------------------------ utilities

    @scoped
    def complete(
        self,
        ref: Mapping[str, object],
        argument: Mapping[str, object],
        *,
        context: Mapping[str, object] | None = None,
    ) -> Op[CompletionResult]:
        return self._core().complete(ref, argument, context=context, server=self.name)

    @scoped
    def set_log_level(self, level: str) -> Op[list[str]]:
        return self._core().set_log_level(level, server=self.name)

    @scoped
    def ping(self, *, timeout: float | None = None) -> Op[dict[str, Any]]:
        return self._core().ping(server=self.name, timeout=timeout)

    @scoped
    def rpc_request(
        self,
        method: str,
        params: Mapping[str, object] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> Op[Any]:
        """Send any request to this server and return its raw result (TIME-2)."""
        return self._core().send_rpc(
            method, params, server=self.name, timeout=timeout, progress=progress
        )

    @scoped
    def rpc_notify(self, method: str, params: Mapping[str, object] | None = None) -> Op[None]:
        """Send any notification to this server."""
        return self._core().send_notification(method, params, server=self.name)

    def set_client_info(self, info: Implementation | Mapping[str, object]) -> None:
        """The ``clientInfo`` this server is told from now on, instead of the client's
        (§E3). A handshake-era server learns it at its next handshake (``initialize`` is
        sent once per session, 2025-11-25 basic/lifecycle.mdx: ``terminate_session()``
        starts a new one); a 2026-07-28 server with its next request's ``_meta``.

        Raises:
            ValidationError: ``info`` is not an implementation object (``name`` and
                ``version`` strings).
        """
        value = info if isinstance(info, Implementation) else Implementation.from_dict(info)
        # The connection reads it for each handshake and each 2026-07-28 request.
        conn: Any = getattr(self, "_conn", None)
        if conn is None:  # pragma: no cover - every shell's server has its connection
            raise RuntimeError(f"server {self.name!r} has no connection")
        conn.client_info = value

    def set_authorization(self, authorization: str | None) -> None:
        """The ``Authorization`` header sent to this server from now on (see the
        client's ``set_authorization``)."""
        self._owner().set_authorization(authorization, server=self.name)

    # ------------------------------------------------------------ handlers

    def on_notification(self, callback: F) -> F:
        """Register ``callback(server, method, params)`` for this server's
        notifications only; usable as a decorator."""
        name = self.name

        def scoped(server: Any, method: str, params: dict[str, Any]) -> Any:
            if server.name == name:
                return callback(server, method, params)
            return None

        scoped.__wrapped__ = callback  # type: ignore[attr-defined]
        self._owner()._callbacks.append(scoped)
        return callback

    def on_cache_invalidation(self, callback: F) -> F:
        """Register ``callback(server, method, params)`` for this server's notifications
        that invalidate what the client caches for it (:data:`CACHE_INVALIDATING`: a
        ``list_changed`` of tools, prompts or resources, a ``resources/updated``);
        usable as a decorator. NOTIF-3's invalidation step: the client's caches are
        already dropped when it runs (a ``list_tools`` there refetches), and it runs
        before every ``on_notification`` callback of that notification, where those
        run (the dispatcher thread or task: it may make requests; plain or ``async``
        under Trio; one that raises is logged and stops nothing, NOTIF-7)."""
        name = self.name

        def hook(server: Any, method: str, params: dict[str, Any]) -> Any:
            if server.name == name and invalidates_cache(method):
                return callback(server, method, params)
            return None

        hook.__wrapped__ = callback  # type: ignore[attr-defined]
        hook._cache_hook = True  # type: ignore[attr-defined]
        callbacks: list[Any] = self._owner()._callbacks
        # Ahead of the notification callbacks, after the hooks registered before it.
        at = next((i for i, c in enumerate(callbacks) if not _is_cache_hook(c)), len(callbacks))
        callbacks.insert(at, hook)
        return callback

    def on_sampling_request(self, handler: F) -> F:
        """This server's ``sampling/createMessage`` handler (instead of the client's)."""
        self._owner()._set_server_handler(self.name, sampling=handler)
        return handler

    def on_elicitation_request(self, handler: F) -> F:
        """This server's ``elicitation/create`` handler (instead of the client's)."""
        self._owner()._set_server_handler(self.name, elicitation=handler)
        return handler

    def on_roots_list_request(self, handler: F) -> F:
        """``handler()`` returns the roots this server is given for ``roots/list``."""
        self._owner()._set_server_handler(self.name, roots=handler)
        return handler


class BlockingMethods(ServerMethods):
    """The per-server methods of a blocking shell: each returns its value."""

    def call_tool_streaming(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        timeout: float | None = None,
    ) -> Iterator[ToolChunk]:
        """This server's tool ``name`` as a stream of chunks (see the client's
        ``call_tool_streaming``; the shell builds the iterator, so it is not a scoped
        core operation)."""
        chunks: Iterator[ToolChunk] = self._owner().call_tool_streaming(
            name, arguments, server=self.name, timeout=timeout
        )
        return chunks

    def cleanup(self) -> None:  # pragma: no cover - the shell's server class has it
        raise NotImplementedError

    def terminate_session(self) -> None:
        """End this server's session: the connection closes (over Streamable HTTP the
        session is deleted, 2025-11-25 basic/transports.mdx § Session Management;
        stdio ends the process). The next request starts a new one."""
        self.cleanup()


class AwaitingMethods(ServerMethods):
    """The per-server methods of an async shell: each returns a coroutine of its value."""

    def call_tool_streaming(
        self,
        name: str,
        arguments: Mapping[str, object] | None = None,
        *,
        timeout: float | None = None,
    ) -> AsyncIterator[ToolChunk]:
        """This server's tool ``name`` as an async stream of chunks (see the client's
        ``call_tool_streaming``): ``async for chunk in server.call_tool_streaming(...)``."""
        chunks: AsyncIterator[ToolChunk] = self._owner().call_tool_streaming(
            name, arguments, server=self.name, timeout=timeout
        )
        return chunks

    async def cleanup(self) -> None:  # pragma: no cover - the shell's server class has it
        raise NotImplementedError

    async def terminate_session(self) -> None:
        """End this server's session (see ``BlockingMethods.terminate_session``)."""
        await self.cleanup()
