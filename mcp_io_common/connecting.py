"""``connect``'s and ``create_client``'s arguments, once for both shells: the targets
planned by the core (``mcp_proto.targets``), the commands looked up before anything
starts, the servers of a definition file, and the keywords left for the client. Each
shell's ``connect`` is its body (make the client, run the core's ``connect_all``, hand
the client over: blocking or in ``async with``) behind :func:`takes_connect_arguments`,
which gives it :func:`connect_arguments`' signature; its ``create_client`` is
:meth:`ClientArguments.client` behind :func:`takes_client_arguments`."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, ParamSpec, TypeVar

from mcp_proto.config import ProtocolMode, ServerConfig
from mcp_proto.targets import Plan, TargetOptions, plan_targets

from .client_io import shell_logger
from .commands import check_commands
from .files import client_configs

__all__ = [
    "ClientArguments",
    "ConnectArguments",
    "client_arguments",
    "connect_arguments",
    "takes_client_arguments",
    "takes_connect_arguments",
]

P = ParamSpec("P")
A = TypeVar("A")
C = TypeVar("C")
R = TypeVar("R")


class ConnectArguments:
    """What ``connect`` was asked: the planned targets and the client's keywords."""

    __slots__ = ("client_kwargs", "plans")

    def __init__(self, plans: list[Plan], client_kwargs: dict[str, Any]) -> None:
        self.plans = plans
        self.client_kwargs = client_kwargs

    @property
    def configs(self) -> list[ServerConfig]:
        """Each target's first configuration (the client starts with it; the core's
        fallback chain swaps in the next ones)."""
        return [plan.configs[0] for plan in self.plans]


def connect_arguments(
    target: str | Sequence[str],
    *,
    transport: Literal["stdio", "sse", "http", "plain_http", "streamable_http", "websocket"]
    | None = None,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    headers: Mapping[str, str] | None = None,
    read_timeout: float | None = None,
    retries: int | None = None,
    retry_backoff: float | None = None,
    endpoint: str | None = None,
    ping: float | None = None,
    protocol: ProtocolMode = "auto",
    discover_timeout: float | None = None,
    oauth_provider: object | None = None,
    **client_kwargs: Any,
) -> ConnectArguments:
    """``connect``'s arguments (both shells), checked and planned before anything starts.

    ``target`` is a URL or a command line. A URL is used as given: ``…/sse`` is the
    deprecated HTTP+SSE transport, ``…/mcp`` Streamable HTTP, any other http(s) URL
    (``http://h:8000/`` included) is tried as Streamable HTTP, then HTTP+SSE, then plain
    HTTP (CONN-6). Any other string is a command line (``"mcp-server-time"``,
    ``"python server.py"``, ``"bash server.sh"``, ``"env K=V cmd"``, ``"stdio://cmd"``),
    as is an argv list; its first word must resolve on the child's PATH or as a file
    relative to ``cwd``. ``protocol`` picks the era (LIFE-7): ``"auto"`` (default)
    probes with ``server/discover`` (the 2026-07-28 revision) and falls back to the
    ``initialize`` handshake, ``"modern"`` speaks 2026-07-28 only
    (``IncompatibleServerError`` from a handshake-era server), ``"legacy"`` the
    handshake only; ``discover_timeout`` bounds the probe (docs/usage.md, "The protocol
    era"). ``oauth_provider`` (an ``mcp_proto.oauth.OAuthProvider``) authorizes an
    HTTP server: Streamable HTTP, plain HTTP or HTTP+SSE (docs/oauth.md). Every other
    keyword goes to :class:`Client`. The servers are connected
    before this returns; on failure nothing is left running. The fallback chain stops
    at the first answer that proves an MCP server is there (a 401/403, a JSON-RPC
    answer): that error is raised as it is.

    Raises:
        CommandNotFoundError: a command's first word does not resolve (nothing started).
        AllTransportsFailedError: every transport of the fallback chain failed; the
            message names each URL tried.
        TransportDetectionError: the target is neither a URL nor a command line.
        UnauthorizedError: HTTP 401/403; carries the Bearer challenge's fields.
        ConnectionError: the server could not be reached or refused the handshake.
        IncompatibleServerError: ``protocol="modern"`` and the server speaks only the
            handshake era (a ``ConnectionError``).
        ValueError: an invalid option (an ``oauth_provider`` that is not one).
    """
    plans = plan_targets(
        target,
        transport=transport,
        name=name,
        options=TargetOptions(
            env=env,
            cwd=cwd,
            headers=headers,
            read_timeout=read_timeout,
            retries=retries,
            retry_backoff=retry_backoff,
            endpoint=endpoint,
            ping=ping,
            protocol=protocol,
            discover_timeout=discover_timeout,
            oauth_provider=oauth_provider,
        ),
    )
    check_commands(plans)
    return ConnectArguments(plans, client_kwargs)


def _taking(options: Callable[P, A]) -> Callable[[Callable[[A], R]], Callable[P, R]]:
    def decorate(body: Callable[[A], R]) -> Callable[P, R]:
        @functools.wraps(body)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            return body(options(*args, **kwargs))

        # help() and IDEs show the arguments' signature, and both docstrings.
        call.__signature__ = inspect.signature(options).replace(  # type: ignore[attr-defined]
            return_annotation=inspect.signature(body).return_annotation
        )
        call.__doc__ = "\n\n".join(
            inspect.cleandoc(doc) for doc in (body.__doc__, options.__doc__) if doc
        )
        return call

    return decorate


#: ``@takes_connect_arguments def connect(args: ConnectArguments) -> ...``: a function
#: with :func:`connect_arguments`' parameters (checked by type checkers too), which
#: plans the targets and hands the body what it needs.
takes_connect_arguments = _taking(connect_arguments)


class ClientArguments:
    """What ``create_client`` was asked: server configs, a definition file, the
    client's logger and its other keywords."""

    __slots__ = ("client_kwargs", "configs", "definition_file", "logger")

    def __init__(
        self,
        configs: list[ServerConfig | Mapping[str, object]],
        definition_file: str | Path | None,
        logger: logging.Logger | None,
        client_kwargs: dict[str, Any],
    ) -> None:
        self.configs = configs
        self.definition_file = definition_file
        self.logger = logger
        self.client_kwargs = client_kwargs

    def client(self, cls: Callable[..., C]) -> C:
        """The shell's client class ``cls`` over the configs, then the definition
        file's servers (its problems logged to the client's logger, else to the
        shell's)."""
        logger = self.logger or shell_logger(cls.__module__)
        configs = client_configs(self.configs, self.definition_file, logger)
        return cls(configs, logger=self.logger, **self.client_kwargs)


def client_arguments(
    mcp_server_configs: Iterable[ServerConfig | Mapping[str, object]] = (),
    *,
    server_definition_file: str | Path | None = None,
    logger: logging.Logger | None = None,
    **client_kwargs: Any,
) -> ClientArguments:
    """``create_client``'s arguments (both shells): the servers of config objects
    and/or an ``{"mcpServers": {...}}`` file (its problems logged to ``logger``, the
    client's). Every other keyword goes to :class:`Client`."""
    return ClientArguments(list(mcp_server_configs), server_definition_file, logger, client_kwargs)


#: ``@takes_client_arguments def create_client(args: ClientArguments) -> ...``: a
#: function with :func:`client_arguments`' parameters.
takes_client_arguments = _taking(client_arguments)
