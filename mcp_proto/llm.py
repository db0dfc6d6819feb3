"""Tool lists in the shapes LLM provider APIs take (LLM-1..4).

Each function maps :meth:`Tool.to_openai_tool` / :meth:`Tool.to_anthropic_tool` /
:meth:`Tool.to_google_tool` over the tools, optionally keeping only some names. The
result is fresh JSON data: a provider SDK that edits it cannot reach the tools' own
schemas.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .types import Tool

__all__ = ["to_anthropic_tools", "to_google_tools", "to_openai_tools"]


def _convert(
    tools: Iterable[Tool],
    tool_names: Iterable[str] | None,
    convert: Callable[[Tool], dict[str, Any]],
) -> list[dict[str, Any]]:
    if tool_names is None:
        return [convert(tool) for tool in tools]
    # A lone string would otherwise be taken as a set of one-character names.
    wanted = {tool_names} if isinstance(tool_names, str) else set(tool_names)
    # LLM-4: the order is the order of ``tools`` (list_tools), not of ``tool_names``;
    # names that match no tool are ignored.
    return [convert(tool) for tool in tools if tool.name in wanted]


def to_openai_tools(
    tools: Iterable[Tool], tool_names: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """``[{"type": "function", "function": {name, description, parameters}}]`` (LLM-1)."""
    return _convert(tools, tool_names, Tool.to_openai_tool)


def to_anthropic_tools(
    tools: Iterable[Tool], tool_names: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """``[{name, description, input_schema}]`` with ``$schema`` removed (LLM-2)."""
    return _convert(tools, tool_names, Tool.to_anthropic_tool)


def to_google_tools(
    tools: Iterable[Tool], tool_names: Iterable[str] | None = None
) -> list[dict[str, Any]]:
    """``[{name, description, parameters}]`` with ``$schema`` removed (LLM-3)."""
    return _convert(tools, tool_names, Tool.to_google_tool)
