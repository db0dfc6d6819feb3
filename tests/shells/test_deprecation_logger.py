"""The deprecation notice and the host's logger, over both shells (DEP-12..14).

The notice (here "logging": a log level carried as ``_meta`` on a 2026-07-28 server,
DEP-4) is written once per process, and only when the client can tell that a WARNING
on its logger goes somewhere (docs/usage.md, "Deprecations"):

* DEP-14: the logger is consulted through what Python's logging offers, and through
  a ``LoggerAdapter`` wrapping it: the level (``isEnabledFor(WARNING)``, which covers
  a parent's level and ``logging.disable``), the ``Filter``s (run once on the notice's
  own record) and the effective handlers (the logger's, then its parents' while it
  propagates, each with its own level). A logger, a filter or every handler dropping
  the warning leaves the notice due: it comes with a later use once it is let through.
* DEP-12: a null logger (only a ``NullHandler``: the shells' default logger when the
  application configured no logging) writes nowhere: the notice stays due; a logger
  that raises is swallowed, the feature works and the notice stays due.
* DEP-13: a handler whose stream is *closed* is recognised (the notice stays due); a
  stream that is open but fails to write (logging reports it on stderr only) cannot
  be told apart from a working one: the notice is spent.

Real peer: the SDK server (``mcp==2.3.0``) over stdio, forced modern.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_proto import deprecations

from .conftest import SDK_SERVER, Shell

NOTICE = "Logging is deprecated"


@pytest.fixture(autouse=True)
def fresh_notices() -> Iterator[None]:
    deprecations.reset()
    yield
    deprecations.reset()


class Broken(io.StringIO):
    """An open device that fails every write."""

    def write(self, s: str) -> int:
        raise OSError("the device is broken")


def run(shell: Shell, steps: Any) -> None:
    """Connect to the SDK server (modern), then for each ``setup`` in ``steps``: apply
    it to the client's logger, set a log level and make one call (the level is a
    deprecated feature there, each use may announce) and check the notice's state."""

    async def scenario(c: Any) -> None:
        for setup, expected in steps:
            setup(shell.logger)
            await c.set_log_level("error")
            await c.call_tool("echo", {"text": "x"})
            assert deprecations.state("logging") == expected, setup.__doc__

    shell.run(scenario, SDK_SERVER, protocol="modern")


def notices(shell: Shell) -> list[str]:
    return [m for m in shell.log.messages(logging.WARNING) if m.startswith(NOTICE)]


def recorder_only(shell: Shell) -> Any:
    def setup(logger: logging.Logger) -> None:
        """the recorder, logger at DEBUG"""
        logger.setLevel(logging.DEBUG)
        logger.filters.clear()
        logger.handlers[:] = [shell.log]
        shell.log.setLevel(logging.DEBUG)

    return setup


def test_a_logger_set_above_warning_leaves_the_notice_due(shell: Shell) -> None:
    def above(logger: logging.Logger) -> None:
        """logger at ERROR"""
        logger.setLevel(logging.ERROR)

    run(shell, [(above, "due"), (above, "due"), (recorder_only(shell), "announced")])
    assert len(notices(shell)) == 1


def test_a_parent_set_above_warning_is_consulted_through_the_child(shell: Shell) -> None:
    """The client's logger at NOTSET inherits its parent's level."""
    parent = logging.getLogger(shell.logger.name.rsplit(".", 1)[0])
    old = parent.level

    def inherit(logger: logging.Logger) -> None:
        """logger NOTSET, parent at CRITICAL"""
        parent.setLevel(logging.CRITICAL)
        logger.setLevel(logging.NOTSET)

    def allow(logger: logging.Logger) -> None:
        """parent at WARNING"""
        parent.setLevel(logging.WARNING)

    try:
        run(shell, [(inherit, "due"), (allow, "announced")])
    finally:
        parent.setLevel(old)
    assert len(notices(shell)) == 1


def test_every_handler_above_warning_leaves_the_notice_due(shell: Shell) -> None:
    def handler_above(logger: logging.Logger) -> None:
        """the only handler at ERROR"""
        logger.setLevel(logging.DEBUG)
        shell.log.setLevel(logging.ERROR)

    run(shell, [(handler_above, "due"), (recorder_only(shell), "announced")])
    assert len(notices(shell)) == 1


def test_a_filter_is_consulted_and_leaves_the_notice_due(shell: Shell) -> None:
    def filtered(logger: logging.Logger) -> None:
        """a filter on the logger dropping every record"""
        logger.addFilter(lambda record: False)

    def handler_filtered(logger: logging.Logger) -> None:
        """the only handler's filter drops the notice (its message, as a tag filter)"""
        logger.filters.clear()
        shell.log.addFilter(lambda record: not record.getMessage().startswith(NOTICE))

    def unfiltered(logger: logging.Logger) -> None:
        """no filter left"""
        shell.log.filters.clear()

    run(shell, [(filtered, "due"), (handler_filtered, "due"), (unfiltered, "announced")])
    assert len(notices(shell)) == 1


def test_a_null_logger_leaves_the_notice_due(shell: Shell) -> None:
    def null(logger: logging.Logger) -> None:
        """only a NullHandler"""
        logger.handlers[:] = [logging.NullHandler()]

    run(shell, [(null, "due"), (null, "due"), (recorder_only(shell), "announced")])
    assert len(notices(shell)) == 1


def test_the_default_logger_without_logging_configured_leaves_the_notice_due(
    shell: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``logger=``: the shell's library logger, whose only handler is the
    ``NullHandler`` a library adds; the application configured no logging (the root
    logger has no handler). Nothing is shown, so nothing is spent."""
    default = logging.getLogger(shell.mod.__name__)
    assert [type(h) for h in default.handlers] == [logging.NullHandler]
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])
    recorder = shell.log

    async def scenario(c: Any) -> None:
        for _ in range(2):
            await c.set_log_level("error")
            await c.call_tool("echo", {"text": "x"})
            assert deprecations.state("logging") == "due"
        root.addHandler(recorder)  # the application configures logging
        try:
            await c.set_log_level("error")
            assert deprecations.state("logging") == "announced"
        finally:
            root.removeHandler(recorder)

    shell.run(scenario, SDK_SERVER, protocol="modern", logger=None)
    assert len(notices(shell)) == 1


def test_a_logger_adapter_is_consulted_through_the_wrapper(shell: Shell) -> None:
    """A ``LoggerAdapter`` as ``logger=``: asked ``isEnabledFor`` through the wrapper,
    its ``process()`` shaping the record (its ``extra``), the wrapped logger's handlers
    writing it; the feature (and the server's stderr, logged through it) works."""

    class Tagged(logging.LoggerAdapter):  # type: ignore[type-arg]
        def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
            return f"[tagged] {msg}", {**kwargs, "extra": self.extra}

    class Quiet(Tagged):
        def isEnabledFor(self, level: int) -> bool:
            return level >= logging.ERROR  # the wrapper is set above WARNING

    quiet = Quiet(shell.logger, {"tag": "app"})
    tagged = Tagged(shell.logger, {"tag": "app"})

    async def scenario(c: Any) -> None:
        await c.set_log_level("error")
        await c.call_tool("echo", {"text": "x"})

    shell.run(scenario, SDK_SERVER, protocol="modern", logger=quiet)
    assert deprecations.state("logging") == "due"
    shell.run(scenario, SDK_SERVER, protocol="modern", logger=tagged)
    assert deprecations.state("logging") == "announced"
    written = [r for r in shell.log.records if r.getMessage().startswith("[tagged] " + NOTICE)]
    assert len(written) == 1 and getattr(written[0], "tag", None) == "app"


def test_a_logger_that_raises_is_swallowed_and_the_notice_stays_due(shell: Shell) -> None:
    class Raising(logging.Handler):
        def handle(self, record: logging.LogRecord) -> bool:
            if record.levelno >= logging.WARNING:
                raise RuntimeError("the logger is broken")
            return True

    def raising(logger: logging.Logger) -> None:
        """the only handler raises"""
        logger.handlers[:] = [Raising()]

    run(shell, [(raising, "due"), (raising, "due"), (recorder_only(shell), "announced")])
    assert len(notices(shell)) == 1


def test_a_closed_stream_is_recognised_and_leaves_the_notice_due(shell: Shell) -> None:
    closed = io.StringIO()
    closed.close()

    def onto_closed(logger: logging.Logger) -> None:
        """the only handler writes to a closed stream"""
        handler = logging.StreamHandler(closed)
        handler.setLevel(logging.WARNING)
        logger.handlers[:] = [handler]

    run(shell, [(onto_closed, "due"), (recorder_only(shell), "announced")])
    assert len(notices(shell)) == 1


def test_a_broken_open_stream_spends_the_notice(
    shell: Shell, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = Broken()

    def onto_broken(logger: logging.Logger) -> None:
        """the only handler writes to an open device that fails"""
        handler = logging.StreamHandler(broken)
        handler.setLevel(logging.WARNING)
        logger.handlers[:] = [handler]

    run(shell, [(onto_broken, "announced"), (recorder_only(shell), "announced")])
    assert notices(shell) == []
    assert "the device is broken" in capsys.readouterr().err  # logging's own report


def test_one_open_handler_among_closed_ones_gets_the_notice(shell: Shell) -> None:
    closed = io.StringIO()
    closed.close()

    def mixed(logger: logging.Logger) -> None:
        """a closed stream handler and the recorder"""
        handler = logging.StreamHandler(closed)
        handler.setLevel(logging.WARNING)
        logger.handlers[:] = [handler, shell.log]

    run(shell, [(mixed, "announced")])
    assert len(notices(shell)) == 1
