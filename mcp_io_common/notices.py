"""Writing a deprecation notice to the host's logger, and knowing whether it went
somewhere (DEP-11..14).

A deprecation notice is spent once written and stays due otherwise (DEP-12,
``mcp_proto.deprecations.announce``, whose once-state this module never touches): both
shells write it with :func:`write_notice`, which says whether a handler took it.
Python's mapping of DEP-14 ("wrapped loggers are consulted through the wrapper") and
DEP-13 ("a closed device is recognised, a broken one is not"):

* the wrapper: a ``logging.LoggerAdapter`` (nested ones too) is asked
  ``isEnabledFor(WARNING)`` itself, and its ``process()`` shapes the record (its
  ``extra``, a tag in the message), as ``adapter.warning()`` would;
* the level: ``isEnabledFor(WARNING)`` (the logger's own or inherited level and
  ``logging.disable``);
* ``Filter``s: the logger's and each handler's are run on the notice's own record, once
  (the record is handed to the handlers here, as ``Logger.callHandlers`` does): a
  filter that drops it leaves the notice due;
* the effective handlers: the logger's, then its ancestors' while ``propagate`` holds
  (``logging.lastResort`` when there are none), each with its own level. A
  ``NullHandler`` writes nowhere: a logger whose only handler is one (the shells'
  default logger when the application configured no logging) leaves the notice due;
* a ``StreamHandler`` whose stream is closed writes nowhere (logging would only report
  the failure on stderr): it is skipped. A stream that is open but fails to write
  cannot be told from a working one: the notice is spent.

A logger class overriding how records reach handlers (``handle``/``callHandlers``), or
a hand-made object offering only the methods the client uses, is consulted through
``isEnabledFor`` and then written to: the notice is spent if it does not raise.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import MutableMapping
from typing import Any

__all__ = ["child_logger", "warning_is_written", "write_notice"]

_WARNING = logging.WARNING


def write_notice(logger: Any, text: str) -> bool:
    """Write a deprecation notice (DEP-11) as a WARNING; ``False`` (the notice stays
    due) when nothing wrote it: the level, a filter or the handlers dropped it, or the
    handlers write nowhere (DEP-12..14). An exception from the logger propagates (the
    core's ``announce`` keeps the notice due, DEP-12)."""
    if not logger.isEnabledFor(_WARNING):  # through the wrapper (DEP-14)
        return False
    inner, msg, kwargs = _unwrap(logger)
    if inner is None or not _standard(inner):
        if inner is not None and not warning_is_written(inner):
            return False
        logger.warning("%s", text)
        return True
    return _dispatch(inner, msg, text, kwargs)


def warning_is_written(logger: Any) -> bool:
    """True if ``logger.warning(...)`` would reach a handler that can write it (the
    level and the handlers; filters are judged on a record, by :func:`write_notice`)."""
    if not logger.isEnabledFor(_WARNING):
        return False
    inner, _, _ = _unwrap(logger)
    if inner is None:
        return True  # nothing more can be asked of it
    handlers = _effective_handlers(inner)
    if handlers is None:
        return logging.lastResort is not None
    return any(_writes(h) for h in handlers)


def child_logger(logger: Any, suffix: str) -> Any:
    """``logger.getChild(suffix)``, also for a ``LoggerAdapter`` (which has no
    ``getChild``: a copy of the adapter over the wrapped logger's child, DEP-14's
    "consulted through the wrapper" for the lines logged there) and for a hand-made
    logger without one (itself)."""
    if isinstance(logger, logging.LoggerAdapter):
        child = copy.copy(logger)
        child.logger = child_logger(logger.logger, suffix)
        return child
    get_child = getattr(logger, "getChild", None)
    return get_child(suffix) if callable(get_child) else logger


def _unwrap(logger: Any) -> tuple[logging.Logger | None, str, MutableMapping[str, Any]]:
    """The ``logging.Logger`` under ``logger``'s adapters, and the message and keyword
    arguments those adapters make of ``"%s"`` (outermost first, as ``LoggerAdapter.log``
    passes them down)."""
    msg: Any = "%s"
    kwargs: MutableMapping[str, Any] = {}
    for _ in range(32):  # adapters nest; a cycle of them is no logger
        if isinstance(logger, logging.Logger):
            return logger, str(msg), kwargs
        if not isinstance(logger, logging.LoggerAdapter):
            return None, str(msg), kwargs
        msg, kwargs = logger.process(msg, kwargs)
        logger = logger.logger
    return None, str(msg), kwargs


def _standard(logger: logging.Logger) -> bool:
    """Whether records reach this logger's handlers as ``logging`` itself routes them
    (so that routing them here is the same)."""
    cls = type(logger)
    return (
        cls.handle is logging.Logger.handle
        and cls.callHandlers is logging.Logger.callHandlers
        and cls.filter is logging.Logger.filter
    )


def _effective_handlers(logger: logging.Logger) -> list[logging.Handler] | None:
    """The handlers a record logged on ``logger`` reaches (``None``: there are none,
    and logging falls back on ``logging.lastResort``)."""
    handlers: list[logging.Handler] = []
    current: logging.Logger | None = logger
    while current is not None:
        handlers += current.handlers
        if not current.propagate:
            break
        current = current.parent
    return handlers or None


def _writes(handler: logging.Handler) -> bool:
    return handler.level <= _WARNING and not _closed(handler) and not _null(handler)


def _null(handler: logging.Handler) -> bool:
    """A handler that writes nowhere by design: the library convention's
    ``NullHandler`` (DEP-12's null logger)."""
    return isinstance(handler, logging.NullHandler)


def _dispatch(
    logger: logging.Logger, msg: str, text: str, kwargs: MutableMapping[str, Any]
) -> bool:
    """Hand the notice's record to the handlers as ``Logger.handle`` does; whether one
    that writes somewhere took it."""
    if logger.disabled:
        return False
    try:
        fn, lno, func, _ = logger.findCaller(False, 1)
    except ValueError:  # pragma: no cover - no Python frame outside logging
        fn, lno, func = "(unknown file)", 0, "(unknown function)"
    record = logger.makeRecord(
        logger.name, _WARNING, fn, lno, msg, (text,), None, func, kwargs.get("extra")
    )
    accepted: Any = logger.filter(record)
    if not accepted:
        return False  # the logger's filters dropped it (DEP-14)
    if isinstance(accepted, logging.LogRecord):  # Python 3.12: a filter may replace it
        record = accepted
    handlers = _effective_handlers(logger)
    if handlers is None:
        last = logging.lastResort
        if last is None or record.levelno < last.level:
            return False
        last.handle(record)
        return True
    written = False
    for handler in handlers:
        if record.levelno < handler.level or _closed(handler) or _null(handler):
            continue
        # ``Handler.handle`` returns its filters' verdict (False: dropped); ``None``
        # comes from a handler overriding it without one, which wrote.
        taken = handler.handle(record)
        if taken is None or taken:
            written = True
    return written


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
