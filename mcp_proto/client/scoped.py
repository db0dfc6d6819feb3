"""Per-server objects (REQUIREMENTS §E3): ``client.servers[i]`` and
``client.find_server(...)`` offer the client's methods scoped to that server.

:class:`ServerMethods` is mixed into every shell's server class and written once: each
method calls the owning client's method with ``server=`` this server, so it returns
what that method returns (the value in the blocking shell, an awaitable in an async
one: ``await server.call_tool(...)`` under Trio). The per-server ``on_*`` handlers are
the client's, kept for this server only (:meth:`BaseClient._set_server_handler
<mcp_proto.client.base.BaseClient._set_server_handler>`): a server request from this
server is served by them, and this server's handshake declares them (CAP-1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ..modern import SUBSCRIPTION_RESTART_MIN_INTERVAL

if TYPE_CHECKING:
    from ..effects import ProgressCallback
    from ..skills import SkillEntry
    from ..tasks import Task
    from .base import BaseClient

__all__ = ["ServerMethods"]

F = TypeVar("F", bound=Callable[..., Any])


class ServerMethods:
    """The client's methods for one server. The owning client sets ``_client``."""

    #: stdio: a process that dies less than this many seconds after receiving the
    #: subscriptions is not restarted for them again: they end (SUB-21). The
    #: connection's own bound; a server class (a test) may shorten it.
    SUBSCRIPTION_RESTART_MIN_INTERVAL: float = SUBSCRIPTION_RESTART_MIN_INTERVAL

    name: str
    _client: BaseClient[Any] | None = None

    def _owner(self) -> Any:
        client = self._client
        if client is None:
            raise RuntimeError(f"server {self.name!r} belongs to no client")
        return client

    # ------------------------------------------------------------ tools, prompts

    def list_tools(self, *, cache: bool = True) -> Any:
        return self._owner().list_tools(cache=cache, server=self.name)

    def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        progress: ProgressCallback | None = None,
        timeout: float | None = None,
    ) -> Any:
        return self._owner().call_tool(
            name, arguments, server=self.name, progress=progress, timeout=timeout
        )

    def call_tool_streaming(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> Any:
        return self._owner().call_tool_streaming(name, arguments, server=self.name, timeout=timeout)

    def list_prompts(self, *, cache: bool = True) -> Any:
        return self._owner().list_prompts(cache=cache, server=self.name)

    def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
    ) -> Any:
        return self._owner().get_prompt(name, arguments, server=self.name, timeout=timeout)

    # ------------------------------------------------------------ tasks, skills

    def call_tool_as_task(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        ttl: int | None = None,
        timeout: float | None = None,
    ) -> Any:
        return self._owner().call_tool_as_task(
            name, arguments, ttl=ttl, server=self.name, timeout=timeout
        )

    def get_task(self, task: Task | str) -> Any:
        return self._owner().get_task(task, server=self.name)

    def get_task_result(self, task: Task | str, *, timeout: float | None = None) -> Any:
        return self._owner().get_task_result(task, server=self.name, timeout=timeout)

    def list_tasks(self, *, cursor: str | None = None) -> Any:
        return self._owner().list_tasks(cursor=cursor, server=self.name)

    def cancel_task(self, task: Task | str) -> Any:
        return self._owner().cancel_task(task, server=self.name)

    def update_task(self, task: Task | str, input_responses: Mapping[str, Any]) -> Any:
        return self._owner().update_task(task, input_responses, server=self.name)

    def wait_for_task(
        self, task: Task | str, *, timeout: float | None = None, cancel_on_timeout: bool = False
    ) -> Any:
        return self._owner().wait_for_task(
            task, timeout=timeout, server=self.name, cancel_on_timeout=cancel_on_timeout
        )

    def list_skills(self) -> Any:
        return self._owner().list_skills(server=self.name)

    def get_skill(self, uri: str) -> Any:
        return self._owner().get_skill(uri, server=self.name)

    def load_skill(self, skill: SkillEntry | str, *, allow_dynamic: bool = False) -> Any:
        return self._owner().load_skill(skill, server=self.name, allow_dynamic=allow_dynamic)

    # ------------------------------------------------------------ resources

    def list_resources(self, *, cache: bool = True, cursor: str | None = None) -> Any:
        return self._owner().list_resources(cache=cache, cursor=cursor, server=self.name)

    def list_resource_templates(self, *, cursor: str | None = None) -> Any:
        return self._owner().list_resource_templates(cursor=cursor, server=self.name)

    def read_resource(self, uri: str, *, timeout: float | None = None) -> Any:
        return self._owner().read_resource(uri, server=self.name, timeout=timeout)

    def subscribe_resource(self, uri: str) -> Any:
        return self._owner().subscribe_resource(uri, server=self.name)

    def unsubscribe_resource(self, uri: str) -> Any:
        return self._owner().unsubscribe_resource(uri, server=self.name)

    # ------------------------------------------------------------ utilities

    def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        *,
        context: Mapping[str, Any] | None = None,
    ) -> Any:
        return self._owner().complete(ref, argument, context=context, server=self.name)

    def set_log_level(self, level: str) -> Any:
        return self._owner().set_log_level(level, server=self.name)

    def ping(self, *, timeout: float | None = None) -> Any:
        return self._owner().ping(server=self.name, timeout=timeout)

    def rpc_request(
        self, method: str, params: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> Any:
        """Send any request to this server and return its raw result (TIME-2)."""
        return self._owner().send_rpc(method, params, server=self.name, timeout=timeout)

    def rpc_notify(self, method: str, params: Mapping[str, Any] | None = None) -> Any:
        """Send any notification to this server."""
        return self._owner().send_notification(method, params, server=self.name)

    def set_authorization(self, authorization: str | None) -> None:
        """The ``Authorization`` header sent to this server from now on (see the
        client's ``set_authorization``)."""
        self._owner().set_authorization(authorization, server=self.name)

    def terminate_session(self) -> Any:
        """End this server's session: the connection closes (over Streamable HTTP the
        session is deleted, 2025-11-25 basic/transports.mdx § Session Management;
        stdio ends the process). The next request starts a new one."""
        return self.cleanup()

    def cleanup(self) -> Any:  # pragma: no cover - the shell's server class has it
        raise NotImplementedError

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
