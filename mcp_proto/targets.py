"""From a ``connect`` target to the server configurations to try (CONN-1..11).

``connect("python server.py")``, ``connect("https://h/mcp")``, ``connect([url1, url2])``:
this module decides, without any I/O, which servers a target names and, for each, the
transports to try in order. The shell then tries them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .config import (
    ServerConfig,
    detect_transport,
    http_config,
    split_targets,
    sse_config,
    stdio_argv,
    stdio_config,
    streamable_http_config,
)

__all__ = ["Plan", "TargetOptions", "plan_targets"]


@attrs.frozen
class TargetOptions:
    """``connect`` options that shape server configurations; ``None`` = the default of
    the transport's config builder."""

    env: Mapping[str, str] | None = None
    cwd: str | None = None
    headers: Mapping[str, str] | None = None
    read_timeout: float | None = None
    retries: int | None = None
    retry_backoff: float | None = None
    endpoint: str | None = None
    ping: float | None = None


@attrs.frozen
class Plan:
    """One server of a ``connect`` target: what the user wrote, and the configurations
    to try in order."""

    target: str | tuple[str, ...]
    configs: tuple[ServerConfig, ...]

    def describe(self) -> str:
        return self.target if isinstance(self.target, str) else " ".join(self.target)


def _given(**kwargs: Any) -> dict[str, Any]:
    return {k: v for k, v in kwargs.items() if v is not None}


def _config(
    kind: str, target: str | tuple[str, ...], name: str | None, o: TargetOptions
) -> ServerConfig:
    common = _given(read_timeout=o.read_timeout, retries=o.retries, retry_backoff=o.retry_backoff)
    if kind == "stdio":
        return stdio_config(stdio_argv(target), name=name, env=o.env, cwd=o.cwd, **common)
    assert isinstance(target, str)
    if kind == "sse":
        return sse_config(target, name=name, headers=o.headers, **common, **_given(ping=o.ping))
    if kind == "http":
        return http_config(
            target, name=name, headers=o.headers, **common, **_given(endpoint=o.endpoint)
        )
    return streamable_http_config(
        target, name=name, headers=o.headers, endpoint=o.endpoint, **common
    )


def plan_targets(
    target: str | Sequence[str],
    *,
    transport: str | None = None,
    name: str | None = None,
    options: TargetOptions | None = None,
) -> list[Plan]:
    """One entry per server the target names; each entry lists the configurations to
    try in order (several only for an ambiguous URL of a single-server target: CONN-6,
    Streamable HTTP, then HTTP+SSE, then plain HTTP; with several servers an ambiguous
    URL is Streamable HTTP without fallback, CONN-9).

    Raises:
        TransportDetectionError: the transport cannot be determined.
        ValueError: an option is invalid for the transport.
    """
    o = options or TargetOptions()
    targets = split_targets(target)
    plans: list[Plan] = []
    for i, single in enumerate(targets):
        kind = detect_transport(single, transport=transport)
        server_name = name if len(targets) == 1 else (f"{name}_{i}" if name else None)
        if kind == "http_auto":
            kinds = ["streamable_http", "sse", "http"] if len(targets) == 1 else ["streamable_http"]
        else:
            kinds = [kind]
        plans.append(Plan(single, tuple(_config(k, single, server_name, o) for k in kinds)))
    return plans
