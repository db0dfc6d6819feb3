"""The deprecation notice and the host's logger, over both shells (DEP-12..14).

The notice (here "logging": a log level carried as ``_meta`` on a 2026-07-28 server,
DEP-4) is written once per process, and only when the client can tell that a WARNING
on its logger goes somewhere (docs/usage.md, "Deprecations"):

* DEP-14: the logger is consulted through what Python's logging offers: the level
  (``isEnabledFor(WARNING)``, which covers a parent's level and ``logging.disable``)
  and the effective handlers (the logger's, then its parents' while it propagates,
  each with its own level). A logger or every handler set above WARNING leaves the
  notice due: it comes with a later use once the level allows. A ``Filter`` cannot be
  consulted (it judges records on what a level cannot express): a filter that drops
  the warning spends the notice.
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


def test_a_filter_cannot_be_consulted_and_spends_the_notice(shell: Shell) -> None:
    def filtered(logger: logging.Logger) -> None:
        """a filter dropping every record"""
        logger.addFilter(lambda record: False)

    run(shell, [(filtered, "announced"), (recorder_only(shell), "announced")])
    assert notices(shell) == []


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
