"""Whether a WARNING on the host's logger would be written somewhere (DEP-12..14).

A deprecation notice is spent once written and stays due otherwise (DEP-12,
``mcp_proto.deprecations.announce``); both shells ask :func:`warning_is_written`
before writing it. Python's mapping of DEP-14 ("wrapped loggers are consulted through
the wrapper") and DEP-13 ("a closed device is recognised, a broken one is not"):

* the level: ``logger.isEnabledFor(WARNING)`` (the logger's own or inherited level
  and ``logging.disable``);
* the effective handlers: the logger's, then its ancestors' while ``propagate`` holds
  (``logging.lastResort`` when there are none), each with its own level: a WARNING no
  handler accepts goes nowhere;
* a ``StreamHandler`` whose stream is closed writes nowhere (logging only reports the
  failure on stderr): recognised. A stream that is open but fails to write cannot be
  told from a working one: the notice is spent;
* ``Filter``s (the logger's or a handler's) are not consulted: they judge records on
  what a level cannot express, so a filter dropping the notice spends it.
"""

from __future__ import annotations

import logging

__all__ = ["warning_is_written", "write_notice"]


def write_notice(logger: logging.Logger, text: str) -> bool:
    """Write a deprecation notice (DEP-11) as a WARNING; ``False`` (the notice stays
    due) when the logger would drop it or write it nowhere (DEP-12..14)."""
    if not warning_is_written(logger):
        return False
    logger.warning("%s", text)
    return True


def warning_is_written(logger: logging.Logger) -> bool:
    """True if ``logger.warning(...)`` would reach a handler that can write it."""
    if not logger.isEnabledFor(logging.WARNING):
        return False
    handlers: list[logging.Handler] = []
    current: logging.Logger | None = logger
    while current is not None:
        handlers += current.handlers
        if not current.propagate:
            break
        current = current.parent
    if not handlers:
        # What logging itself does with a record no handler takes (Logger.callHandlers).
        if logging.lastResort is None:
            return False
        handlers = [logging.lastResort]
    return any(h.level <= logging.WARNING and not _closed(h) for h in handlers)


def _closed(handler: logging.Handler) -> bool:
    """A stream handler over a closed stream (DEP-13). A ``FileHandler`` re-opens its
    file when its stream is gone, so only its open-but-closed stream counts."""
    if not isinstance(handler, logging.StreamHandler):
        return False
    stream = handler.stream
    if stream is None:
        # FileHandler(delay=True) or after close(): emit() opens the file again.
        return not isinstance(handler, logging.FileHandler)
    return getattr(stream, "closed", False) is True
