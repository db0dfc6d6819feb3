"""Deprecated features and their one-time notices (REQUIREMENTS.md DEP-1, DEP-9).

The core keeps the registry and the once-per-process state; the shells log the notice
text when :func:`claim` says it is due. Claiming is atomic under the GIL
(``set.add`` on a fresh key is decided once), so two threads cannot both log it.
"""

from __future__ import annotations

from typing import Final

import attrs

__all__ = ["REGISTRY", "Deprecation", "claim", "enabled", "reset"]


@attrs.frozen
class Deprecation:
    feature: str
    deprecated_since: str
    earliest_removal: str
    migration: str

    @property
    def notice(self) -> str:
        return (
            f"{self.feature} is deprecated (since MCP {self.deprecated_since}); earliest "
            f"removal: {self.earliest_removal}. {self.migration}"
        )


REGISTRY: Final[dict[str, Deprecation]] = {
    "http_sse": Deprecation(
        feature="The HTTP+SSE transport",
        deprecated_since="2025-03-26",
        earliest_removal="three months after SEP-2596 reaches Final",
        migration="Migrate the server to Streamable HTTP.",
    ),
}

#: Set to False (before creating clients) to silence every notice (DEP-10).
enabled = True
_claimed: set[str] = set()


def claim(key: str) -> Deprecation | None:
    """The notice for ``key`` if it is still due in this process, else ``None``."""
    if not enabled or key in _claimed:
        return None
    before = len(_claimed)
    _claimed.add(key)
    if len(_claimed) == before:  # another thread claimed it in between
        return None
    return REGISTRY[key]


def reset() -> None:
    """Make every notice due again (for tests)."""
    _claimed.clear()
