"""The multi-server client's logic: routing, caches, checks, as sans-IO operations.

:class:`ClientCore` is what ``mcp_io_sync.Client`` and ``mcp_io_trio.Client`` share.
Every public client method is an operation here (a generator yielding
:mod:`~mcp_proto.effects`); the shells only drive it. So routing a call to the server
that owns a tool, caching lists until ``list_changed``, checking arguments and
structured output, and wrapping failures in the right error class happen once.

The package is a router (:mod:`.router`: servers, selection, caches) and one module per
feature (:mod:`.tools`, :mod:`.prompts`, :mod:`.resources`, :mod:`.utilities`); each
feature is a class built on the router, and :class:`ClientCore` combines them.
:class:`BaseClient` (:mod:`.base`) is the whole client over ``ClientCore`` that every
shell subclasses, adding only what waits.
"""

from __future__ import annotations

# (These two import this package's modules, never its names: no cycle.)
from ..skills import SkillOps
from ..tasks.ops import TaskOps
from .prompts import PromptOps
from .resources import ResourceOps
from .router import DEFAULT_CLIENT_INFO, ServerEntry, ServerSelector
from .utilities import LOG_LEVELS, UtilityOps

__all__ = [
    "DEFAULT_CLIENT_INFO",
    "LOG_LEVELS",
    "BaseClient",
    "ClientCore",
    "ServerEntry",
    "ServerSelector",
]


class ClientCore(TaskOps, SkillOps, PromptOps, ResourceOps, UtilityOps):
    """Shared state and operations of a client aggregating several servers.

    :class:`~mcp_proto.tasks.ops.TaskOps` extends :class:`ToolOps` (its ``call_tool``
    sees tasks through: TOOL-18, TASK-11); :class:`~mcp_proto.skills.SkillOps` is the
    ``io.modelcontextprotocol/skills`` extension (SEP-2640).

    Not thread-safe by itself: the sync shell serialises cache updates under a lock
    where it needs to; the operations only touch the caches between effects.
    """


# The whole client above ClientCore (it builds on it, so it is imported after it).
from .base import BaseClient  # noqa: E402
