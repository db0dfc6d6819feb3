"""The filesystem half of "is this command there?" (issue 8 item 7), for both shells.

The core words the error (``mcp_proto.targets.command_not_found``); this module looks
the command's first word up the way the child process will.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence

from mcp_proto.config import ServerConfig
from mcp_proto.targets import CommandStatus, Plan, command_not_found

__all__ = ["check_commands", "command_status"]


def command_status(config: ServerConfig) -> CommandStatus:
    """Look up a stdio config's first word as the child will see it (issue 8 item 7).

    The child gets ``{**os.environ, **config.env}`` and ``config.cwd`` (see _stdio.py), so
    its PATH may come from ``env=`` and a relative path is taken from ``cwd``; the lookup
    uses the same. Both shells use this; it only stats files.
    """
    word = config.command[0]
    env = config.env or {}
    search_path = env["PATH"] if "PATH" in env else os.environ.get("PATH", os.defpath)
    cwd = config.cwd or os.getcwd()
    if os.sep in word or (os.altsep is not None and os.altsep in word):
        candidate = os.path.join(cwd, word)  # an absolute word stays itself
        if not os.path.isfile(candidate):
            return "missing"
        return "found" if os.access(candidate, os.X_OK) else "not_executable"
    if shutil.which(word, path=search_path) is not None:
        return "found"
    on_path = (os.path.join(cwd, d, word) for d in search_path.split(os.pathsep) if d)
    if any(os.path.isfile(p) for p in on_path):
        return "not_executable"
    return "not_on_path" if os.path.isfile(os.path.join(cwd, word)) else "missing"


def check_commands(plans: Sequence[Plan]) -> None:
    """Raise the core's one-line ``CommandNotFoundError`` for the first stdio command of
    ``plans`` whose first word does not resolve, before anything is started."""
    for plan in plans:
        for config in plan.configs:
            if config.type == "stdio":
                error = command_not_found(config, command_status(config))
                if error is not None:
                    raise error
