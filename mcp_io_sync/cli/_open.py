"""Connecting ``mcp-proto`` to the servers the command line names: a command, a URL or
a config file."""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs

from mcp_io_common.files import file_workspace, read_definition_file
from mcp_proto import errors
from mcp_proto.config import ServerConfig, parse_server_definitions, stdio_argv
from mcp_proto.definitions import command_server_name, unique_server_names

from .._client import Client
from .._connect import connect, create_client
from ._args import PROG, UsageError
from ._auth_cmd import stored_login
from ._log import ServerFailed

_LOGGER = logging.getLogger("mcp_io_sync.cli")


# --------------------------------------------------------------------------- connecting


def _server_name(argv: Sequence[str]) -> str:
    """A short server name from its command, for messages: ``python x/demo_server.py``
    -> ``demo_server``, ``npx -y @scope/server-foo`` -> ``server-foo`` (the core's rule;
    the npm package of a script is looked up here, from its package.json)."""
    return command_server_name(argv, _package_name)


_SCRIPT = re.compile(r"\.(js|mjs|cjs|ts|mts|cts)$", re.IGNORECASE)


def _package_name(script: str) -> str | None:
    """The npm package a JavaScript server script belongs to, without its scope:
    ``node .../@modelcontextprotocol/server-memory/dist/index.js`` -> ``server-memory``
    (its file name, ``index``, says nothing). The nearest ``package.json`` with a
    ``name``, walking up from the script (a few levels, never past the root)."""
    if not _SCRIPT.search(script):
        return None
    try:
        folder = Path(script).resolve().parent
    except (OSError, RuntimeError, ValueError):
        return None
    for candidate in [folder, *folder.parents][:8]:
        manifest = candidate / "package.json"
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        name = data.get("name") if isinstance(data, dict) else None
        if isinstance(name, str) and name.strip():
            return name.strip().rsplit("/", 1)[-1]
    return None


def load_config(opts: argparse.Namespace) -> list[ServerConfig]:
    try:
        data = read_definition_file(opts.config)
    except OSError as exc:
        raise UsageError(f"{PROG}: cannot read {opts.config}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{PROG}: {opts.config} {exc}") from None
    try:
        configs, warnings = parse_server_definitions(
            data, environ=os.environ, workspace=file_workspace(opts.config)
        )
    except ValueError as exc:
        raise UsageError(f"{PROG}: {opts.config}: {exc}") from None
    for warning in warnings:
        other = re.match(r"server '(.*?)': ", warning)
        if opts.server is not None and other and other.group(1).lower() != opts.server.lower():
            continue  # about a server that is not used
        # Most real-world files (Claude Desktop, Cursor...) omit "type": not worth a warning.
        inferred = "no 'type' given; inferred" in warning
        _LOGGER.log(logging.INFO if inferred else logging.WARNING, "%s: %s", opts.config, warning)
    names = unique_server_names(configs)
    if opts.server is not None:
        chosen = [c for c, n in zip(configs, names, strict=True) if n == opts.server] or [
            c for c, n in zip(configs, names, strict=True) if n.lower() == opts.server.lower()
        ]
        if not chosen:
            available = ", ".join(names) or "none"
            raise UsageError(
                f"{PROG}: no server named {opts.server!r} in {opts.config} (available: {available})"
            )
        configs = chosen[:1]
    if not configs:
        raise UsageError(f"{PROG}: {opts.config} defines no usable server")
    env = opts.env_vars
    out = []
    for cfg in configs:
        changes: dict[str, Any] = {}
        if opts.timeout is not None:
            changes["read_timeout"] = opts.timeout
        if opts.protocol is not None and cfg.type != "sse":  # HTTP+SSE has no era to pick
            changes["protocol"] = opts.protocol
        if cfg.type != "stdio" and opts.headers:
            changes["headers"] = {**cfg.headers, **opts.headers}
        if cfg.type == "stdio":
            if env:
                changes["env"] = {**(cfg.env or {}), **env}
            if opts.cwd is not None:
                changes["cwd"] = opts.cwd
        out.append(attrs.evolve(cfg, **changes) if changes else cfg)
    return out


def _connect_each(client: Client, report: Callable[[str, BaseException], None]) -> list[str]:
    """Connect every server of a config file; the names of those that connected.

    A server that cannot start is skipped, as the library's aggregate lists skip it
    (CONN-19): ``report`` is told once, with that server's own error. The CLI then only
    addresses the servers that connected, so the broken one is neither retried nor
    reported again by later requests."""
    usable: list[str] = []
    failures: list[tuple[str, BaseException]] = []
    # All at once (Client.connect_all): servers that take a second each to start.
    for server, error in zip(client.servers, client._connect_each(), strict=True):
        if error is not None:
            # Bounded close, so that the stderr reader has drained what it wrote.
            server.cleanup()
            failures.append((server.name, error))
        else:
            usable.append(server.name)
    if not usable:
        first, failure = failures[0]
        raise ServerFailed(first, failure)
    for name, failure in failures:
        report(name, failure)
    return usable


def _handlers(opts: argparse.Namespace) -> dict[str, Any]:
    """The client's handlers: elicitation (``_elicit.Asker``), so that a tool that
    asks for input gets the user's answer on a terminal and a clear cancel elsewhere."""
    asker = getattr(opts, "asker", None)
    return {"elicitation_handler": asker} if asker is not None else {}


def open_client(
    opts: argparse.Namespace, report: Callable[[str, BaseException], None]
) -> tuple[Client, list[str]]:
    """Connect as the options say: the client and the names of its usable servers,
    every one of them connected."""
    if opts.config is not None:
        configs = load_config(opts)
        if len({c.read_timeout for c in configs}) == 1:
            opts.effective_timeout = configs[0].read_timeout
        proxy = {"proxy": opts.proxy} if opts.proxy is not None else {}
        client = create_client(configs, **proxy, **_handlers(opts))
        try:
            return client, _connect_each(client, report)
        except BaseException:
            client.close()
            raise
    env = opts.env_vars
    kwargs: dict[str, Any] = _handlers(opts)
    if opts.timeout is not None:
        kwargs["read_timeout"] = opts.timeout
    if opts.protocol is not None:
        kwargs["protocol"] = opts.protocol
    opts.effective_timeout = opts.timeout
    if opts.url is not None:
        if opts.headers:
            kwargs["headers"] = opts.headers
        if opts.proxy is not None:
            kwargs["proxy"] = opts.proxy
        login = stored_login(opts.url)  # `mcp-proto login URL` stored a token (issue 21)
        if login is not None:
            kwargs["oauth_provider"] = login
        host = urlsplit(opts.url).hostname
        name = host or "server"
        try:
            client = connect(
                opts.url,
                transport=opts.transport,
                endpoint=opts.endpoint,
                name=name,
                **kwargs,
            )
        except errors.TransportDetectionError as exc:
            raise UsageError(f"{PROG}: {exc}") from None
        except errors.MCPError as exc:
            raise ServerFailed(name, exc) from exc
        except ValueError as exc:  # an option the transport rejects (an endpoint for SSE)
            raise UsageError(f"{PROG}: {exc}") from None
        return client, [s.name for s in client.servers]
    target: str | None = opts.connect
    if opts.server_argv is not None:
        argv = list(opts.server_argv)
    else:
        assert target is not None
        try:
            argv = list(stdio_argv(target))
        except ValueError as exc:
            raise UsageError(f"{PROG}: bad server command: {exc}") from None
    name = _server_name(argv)
    try:
        client = connect(
            shlex.join(argv),
            transport="stdio",
            name=name,
            env=env or None,
            cwd=opts.cwd,
            **kwargs,
        )
    except errors.MCPError as exc:
        raise ServerFailed(name, exc) from exc
    return client, [s.name for s in client.servers]
