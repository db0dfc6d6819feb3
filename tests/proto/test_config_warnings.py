"""HTTP-6 and CONN-17 in the core: the builders' ``logger=``, a configuration's
warnings logged once whichever way it was made (the shells' side:
tests/shells/test_config_warnings.py)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from mcp_proto.config import (
    ServerConfig,
    http_config,
    parse_server_definitions,
    redact_config,
    sse_config,
    stdio_config,
    streamable_http_config,
    websocket_config,
)


class Recorder:
    """A host logger (what ``HostLogger`` needs of one) that keeps its records."""

    def __init__(self) -> None:
        self.records: list[tuple[str, str]] = []

    def log(self, level: int, msg: str, *args: Any) -> None:
        self.records.append((str(level), msg % args))

    def debug(self, msg: str, *args: Any) -> None:
        self.records.append(("debug", msg % args))

    def warning(self, msg: str, *args: Any) -> None:
        self.records.append(("warning", msg % args))

    def exception(self, msg: str, *args: Any) -> None:  # pragma: no cover - unused
        self.records.append(("exception", msg % args))

    def isEnabledFor(self, level: int) -> bool:
        return True

    def warnings(self) -> list[str]:
        return [m for level, m in self.records if level == "warning"]


BUILDERS = [
    (sse_config, "http://0.0.0.0:8000/sse"),
    (http_config, "http://0.0.0.0:8000/rpc"),
    (streamable_http_config, "http://0.0.0.0:8000/mcp"),
    (websocket_config, "ws://0.0.0.0:8000/mcp"),
]


@pytest.mark.parametrize(("builder", "url"), BUILDERS)
def test_a_builder_given_a_logger_warns_of_0000_at_once(builder: Any, url: str) -> None:
    log = Recorder()
    config = builder(url, logger=log)
    assert log.warnings() == [config.warnings[0]]
    assert "0.0.0.0" in log.warnings()[0] and "127.0.0.1" in log.warnings()[0]
    assert config.logger is log and config.warnings_logged
    # Kept by attrs.evolve (the CLI and the tests' era pinning evolve configs).
    assert attrs.evolve(config, read_timeout=5.0).warnings_logged


@pytest.mark.parametrize(("builder", "url"), BUILDERS)
def test_without_a_logger_the_warning_is_left_to_the_client(builder: Any, url: str) -> None:
    config = builder(url)
    assert config.warnings and not config.warnings_logged and config.logger is None


def test_a_builder_logs_nothing_for_an_ordinary_url() -> None:
    log = Recorder()
    config = streamable_http_config("http://127.0.0.1:8000/mcp", logger=log)
    assert log.records == [] and config.warnings == ()


def test_stdio_config_takes_a_logger_too() -> None:
    log = Recorder()
    config = stdio_config("python server.py", logger=log)
    assert config.logger is log and log.records == []


def test_the_logger_is_neither_compared_shown_nor_redacted_into_the_config() -> None:
    a = websocket_config("ws://h/mcp", logger=Recorder())
    b = websocket_config("ws://h/mcp")
    assert a == b
    assert "logger" not in repr(a) and "Recorder" not in repr(a)
    assert "logger" not in redact_config(a) and "_warnings_logged" not in redact_config(a)


def test_a_definition_file_parse_hands_the_warning_back_once() -> None:
    document = {"mcpServers": {"x": {"type": "streamable_http", "url": "http://0.0.0.0/mcp"}}}
    configs, warnings = parse_server_definitions(document)
    assert [w for w in warnings if "0.0.0.0" in w] and configs[0].warnings_logged


def test_direct_construction_leaves_the_warning_to_the_client() -> None:
    config = ServerConfig(type="websocket", url="ws://0.0.0.0:1/mcp")
    assert config.warnings and not config.warnings_logged
