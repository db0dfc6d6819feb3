"""Names a package exports but loads at first use (PEP 562 module ``__getattr__``)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

__all__ = ["MODERN_EXPORTS", "OAUTH_EXPORTS", "SHELL_EXPORTS", "lazy_attributes", "shell_lazy"]


def lazy_attributes(module: str, where: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` importing ``name`` from the module ``where[name]`` on
    first access, then kept as a plain attribute. The shells export the 2026-07-28
    revision's names this way: ``import mcp_io_sync`` does not load that revision's
    modules (the bench's import row), a program that uses them does."""

    def __getattr__(name: str) -> Any:
        source = where.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(import_module(source), name)
        setattr(import_module(module), name, value)  # found directly next time
        return value

    return __getattr__


def shell_lazy(shell: str) -> Callable[[str], Any]:
    """The module ``__getattr__`` of the shell package ``shell``: the 2026-07-28
    revision's names, its ``BrowserOAuth`` and its ``Subscription`` (``_listen``)."""
    return lazy_attributes(
        shell, {**MODERN_EXPORTS, **OAUTH_EXPORTS[shell], "Subscription": f"{shell}._listen"}
    )


#: The names each shell package exports of its own (after ``mcp_proto.exports``'s):
#: the same API in both shells.
SHELL_EXPORTS = (
    "BrowserOAuth",
    "CacheInfo",
    "Client",
    "InputRequiredWait",
    "StdioServer",
    "Subscription",
    "connect",
    "create_client",
    "header_params",
    "oauth_client",
)

#: Where each shell's ``BrowserOAuth`` and ``oauth_client`` (§E5) live (issue 21):
#: loaded at first use, so a client without OAuth never loads the OAuth core.
OAUTH_EXPORTS = {
    "mcp_io_sync": {"BrowserOAuth": "mcp_io_sync._oauth", "oauth_client": "mcp_io_sync._oauth"},
    "mcp_io_trio": {"BrowserOAuth": "mcp_io_trio._oauth", "oauth_client": "mcp_io_trio._oauth"},
}

#: The 2026-07-28 revision's names both shells export, and where each lives.
MODERN_EXPORTS = {
    "CacheInfo": "mcp_proto.modern.cache",
    "header_params": "mcp_proto.modern.headers",
    "InputRequiredWait": "mcp_proto.modern.mrtr",
}
