"""The 2026-07-28 revision's rules (issue 10): pure building blocks, each on its own.

Each submodule is complete by itself and imported by name (``mcp_proto.modern.headers``,
``.meta``, ``.discover``, ``.cache``, ...): this package deliberately imports none of
them, so blocks can be added side by side and the request pipeline picks what it needs.
"""

from typing import Final

__all__ = ["SUBSCRIPTION_RESTART_MIN_INTERVAL"]

#: stdio: a process that dies less than this many seconds after receiving its
#: subscriptions is a crash loop: they end instead of being re-sent (SUB-21). Here,
#: not in :mod:`.notify_queue`, so the shells name it without loading that module.
SUBSCRIPTION_RESTART_MIN_INTERVAL: Final = 5.0
