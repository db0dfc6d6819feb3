"""``mcp_io_common.notices.write_notice`` with the loggers a host may give (DEP-12..14):
whether the notice was written (``True``: spent) or went nowhere (``False``: it stays
due), on real ``logging`` objects, without a server."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_io_common.notices import child_logger, warning_is_written, write_notice
from mcp_proto import deprecations

TEXT = "Feature is deprecated"
_seq = 0


class Recorder(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def logger() -> Iterator[logging.Logger]:
    """A fresh non-propagating logger without handlers. (pytest attaches its capture
    handler to the non-propagating loggers that exist when a test phase starts: the
    test's own phase starts after this fixture, so its handler is taken off here, in
    the test, by :func:`bare`.)"""
    global _seq
    _seq += 1
    log = logging.getLogger(f"tests.notices.l{_seq}")
    log.propagate = False
    log.setLevel(logging.DEBUG)
    yield log
    log.handlers.clear()
    log.filters.clear()


def bare(log: logging.Logger) -> logging.Logger:
    log.handlers[:] = [h for h in log.handlers if type(h).__name__ != "LogCaptureHandler"]
    return log


def test_a_null_logger_writes_nowhere(logger: logging.Logger) -> None:
    bare(logger)
    logger.addHandler(logging.NullHandler())
    assert not warning_is_written(logger)
    assert write_notice(logger, TEXT) is False


def test_a_null_handler_beside_a_real_one_does_not_hide_it(logger: logging.Logger) -> None:
    bare(logger)
    rec = Recorder()
    logger.handlers[:] = [logging.NullHandler(), rec]
    assert write_notice(logger, TEXT) is True
    assert [r.getMessage() for r in rec.records] == [TEXT]


def test_the_library_default_propagates_to_a_configured_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The shells' own logger (a NullHandler) under a root the application configured."""
    import mcp_io_sync

    default = logging.getLogger(mcp_io_sync.__name__)
    assert [type(h) for h in default.handlers] == [logging.NullHandler]
    rec = Recorder()
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    assert write_notice(default, TEXT) is False  # nothing configured: stays due
    monkeypatch.setattr(logging.getLogger(), "handlers", [rec])
    assert write_notice(default, TEXT) is True
    assert [r.getMessage() for r in rec.records] == [TEXT]


def test_filters_are_consulted_once(logger: logging.Logger) -> None:
    bare(logger)
    rec = Recorder()
    logger.addHandler(rec)
    calls: list[str] = []

    def tag_filter(record: logging.LogRecord) -> bool:
        calls.append(record.getMessage())
        return getattr(record, "tag", None) == "keep"

    logger.addFilter(tag_filter)
    assert write_notice(logger, TEXT) is False
    rec.addFilter(lambda record: False)
    logger.removeFilter(tag_filter)
    assert write_notice(logger, TEXT) is False  # the only handler's filter drops it
    assert calls == [TEXT]  # each filter ran on the notice's record once
    assert rec.records == []


def test_an_adapter_is_consulted_through_the_wrapper(logger: logging.Logger) -> None:
    bare(logger)
    rec = Recorder()
    logger.addHandler(rec)
    adapter = logging.LoggerAdapter(logging.LoggerAdapter(logger, {"tag": "inner"}), {})
    assert write_notice(adapter, TEXT) is True
    [record] = rec.records
    assert record.getMessage() == TEXT and record.name == logger.name
    logger.setLevel(logging.ERROR)
    assert write_notice(adapter, TEXT) is False
    # The stderr lines go to the wrapped logger's child, through a copy of the adapter.
    child = child_logger(adapter, "stderr")
    assert isinstance(child, logging.LoggerAdapter)
    assert child.logger.logger.name == logger.name + ".stderr"  # type: ignore[attr-defined]


def test_a_raising_logger_propagates_to_announce(logger: logging.Logger) -> None:
    bare(logger)

    class Raising(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            raise RuntimeError("broken")

        def handleError(self, record: logging.LogRecord) -> None:
            raise RuntimeError("broken")

    logger.addHandler(Raising())
    deprecations.reset()
    try:
        assert deprecations.announce("roots", lambda text: write_notice(logger, text)) is False
        assert deprecations.state("roots") == "due"  # swallowed, still due (DEP-12)
    finally:
        deprecations.reset()


def test_closed_and_broken_streams(
    logger: logging.Logger, capsys: pytest.CaptureFixture[str]
) -> None:
    bare(logger)
    closed = io.StringIO()
    closed.close()
    logger.addHandler(logging.StreamHandler(closed))
    assert write_notice(logger, TEXT) is False  # recognised: not even tried (DEP-13)

    class Broken(io.StringIO):
        def write(self, s: str) -> int:
            raise OSError("broken device")

    logger.handlers[:] = [logging.StreamHandler(Broken())]
    assert write_notice(logger, TEXT) is True  # cannot be told from a working one
    assert "broken device" in capsys.readouterr().err


def test_no_handler_anywhere_is_logging_last_resort(logger: logging.Logger) -> None:
    bare(logger)
    assert logger.handlers == []
    assert write_notice(logger, TEXT) is (logging.lastResort is not None)


def test_custom_loggers_and_hand_made_ones_are_written_to(logger: logging.Logger) -> None:
    bare(logger)

    class Routed(logging.Logger):
        def callHandlers(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    seen: list[str] = []
    routed = Routed("tests.notices.routed")
    routed.addHandler(Recorder())
    assert write_notice(routed, TEXT) is True and seen == [TEXT]

    class HandMade:
        def __init__(self, level: int) -> None:
            self.level = level
            self.lines: list[str] = []

        def isEnabledFor(self, level: int) -> bool:
            return level >= self.level

        def warning(self, msg: str, *args: Any) -> None:
            self.lines.append(msg % args)

    quiet, loud = HandMade(logging.ERROR), HandMade(logging.DEBUG)
    assert write_notice(quiet, TEXT) is False and quiet.lines == []
    assert write_notice(loud, TEXT) is True and loud.lines == [TEXT]
