"""Connecting ``mcp-proto`` to the servers the command line names: a command, a URL or
a config file."""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs

from mcp_proto.config import ServerConfig, parse_server_definitions, stdio_argv

from ._cli_args import PROG, UsageError
from ._client import Client, connect, create_client

_LAUNCHERS = frozenset(
    {"python", "python3", "py", "node", "npx", "uv", "uvx", "run", "deno", "bun", "pipx"}
)
_PYTHON = re.compile(r"python[\d.]*", re.IGNORECASE)
_LOGGER = logging.getLogger("mcp_io_sync.cli")


# --------------------------------------------------------------------------- connecting


def _server_name(argv: Sequence[str]) -> str:
    """A short server name from its command, for messages: ``python x/demo_server.py``
    -> ``demo_server``, ``npx -y @scope/server-foo`` -> ``server-foo``."""

    def stem(word: str) -> str:
        base = os.path.basename(word.rstrip("/\\")) or word
        base = re.sub(r"\.(py|js|mjs|cjs|ts|exe|cmd|bat)$", "", base, flags=re.IGNORECASE)
        return base.rsplit("/", 1)[-1]

    launcher = stem(argv[0]) if argv else "server"
    rest = list(argv[1:]) if launcher.lower() in _LAUNCHERS or _PYTHON.fullmatch(launcher) else []
    if not rest:
        return launcher or "server"
    i = 0
    while i < len(rest):
        word = rest[i]
        if word in ("-c", "-e", "--eval"):
            return launcher
        if word == "-m" and i + 1 < len(rest):
            return rest[i + 1]
        if word.startswith("-") or word.lower() in _LAUNCHERS:
            i += 1
            continue
        name = stem(word)
        return name if name and not any(ch.isspace() for ch in name) else launcher
    return launcher


def load_config(opts: argparse.Namespace) -> list[ServerConfig]:
    path = Path(opts.config)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{PROG}: cannot read {opts.config}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"{PROG}: {opts.config} is not valid JSON: {exc}") from None
    try:
        configs, warnings = parse_server_definitions(data)
    except ValueError as exc:
        raise UsageError(f"{PROG}: {opts.config}: {exc}") from None
    for warning in warnings:
        other = re.match(r"server '(.*?)': ", warning)
        if opts.server is not None and other and other.group(1).lower() != opts.server.lower():
            continue  # about a server that is not used
        # Most real-world files (Claude Desktop, Cursor...) omit "type": not worth a warning.
        inferred = "no 'type' given; inferred" in warning
        _LOGGER.log(logging.INFO if inferred else logging.WARNING, "%s: %s", opts.config, warning)
    names = [c.name or f"server_{i}" for i, c in enumerate(configs)]
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
        if cfg.type != "stdio" and opts.headers:
            changes["headers"] = {**cfg.headers, **opts.headers}
        if cfg.type == "stdio":
            if env:
                changes["env"] = {**(cfg.env or {}), **env}
            if opts.cwd is not None:
                changes["cwd"] = opts.cwd
        out.append(attrs.evolve(cfg, **changes) if changes else cfg)
    return out


def open_client(opts: argparse.Namespace) -> Client:
    """Connect as the options say; every server is connected before this returns."""
    if opts.config is not None:
        configs = load_config(opts)
        if len({c.read_timeout for c in configs}) == 1:
            opts.effective_timeout = configs[0].read_timeout
        client = create_client(configs)
        try:
            client.connect_all()
        except BaseException:
            client.close()
            raise
        return client
    env = opts.env_vars
    kwargs: dict[str, Any] = {}
    if opts.timeout is not None:
        kwargs["read_timeout"] = opts.timeout
    opts.effective_timeout = opts.timeout
    if opts.url is not None:
        if opts.headers:
            kwargs["headers"] = opts.headers
        host = urlsplit(opts.url).hostname
        return connect(opts.url, name=host or None, **kwargs)
    target: str | None = opts.connect
    if opts.server_argv is not None:
        argv = list(opts.server_argv)
    else:
        assert target is not None
        try:
            argv = list(stdio_argv(target))
        except ValueError as exc:
            raise UsageError(f"{PROG}: bad server command: {exc}") from None
    return connect(
        shlex.join(argv),
        transport="stdio",
        name=_server_name(argv),
        env=env or None,
        cwd=opts.cwd,
        **kwargs,
    )
