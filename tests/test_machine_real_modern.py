"""The connection machine's 2026-07-28 era against real servers, through the reference
driver of ``test_machine_real.py`` (no shell involved): the dual-era matrix
``protocol=auto|modern|legacy`` x the dual-era SDK server (``mcp==2.3.0``) | the
handshake-only npm everything server x stdio | Streamable HTTP. Each cell either works
in the expected era or fails with the documented typed error.

Every request the client sends in a 2026-07-28 session is validated against the
2026-07-28 schema; ``initialize`` is sent only where the handshake era was chosen.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_machine_real import SDK_STDIO, Driver, drivers  # noqa: F401  (fixture)

from mcp_proto.config import ServerConfig, stdio_config, streamable_http_config
from mcp_proto.connection import (
    CallFailed,
    CallSucceeded,
    Connected,
    ConnectFailed,
    Connection,
    StartExchange,
    Write,
)
from mcp_proto.errors import IncompatibleServerError
from mcp_proto.modern.discover import EraCache
from mcp_proto.types import Implementation

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "servers"))
sys.path.insert(0, str(ROOT / "tests" / "proto" / "modern"))

from _modern_wire import REQUEST_DEFS, assert_valid_request  # noqa: E402
from http_peers import EVERYTHING_BIN, everything_http_server, sdk_http_server  # noqa: E402

V = "2026-07-28"


class WireDriver(Driver):
    """The reference driver, recording every message the client sends."""

    def __init__(self, config: ServerConfig, era_cache: EraCache | None = None) -> None:
        super().__init__(config)
        self.conn = Connection(
            config,
            name="real",
            client_info=Implementation(name="machine-real", version="1"),
            capabilities=dict,
            random=lambda: 0.5,
            era_cache=era_cache,
        )
        self.sent: list[tuple[str | None, dict[str, Any]]] = []

    def _do(self, frame: Any) -> None:
        era = self.conn.era
        if isinstance(frame, Write):
            for data in frame.messages:
                self._record(era, json.loads(data))
        elif isinstance(frame, StartExchange) and frame.body is not None:
            self._record(era, json.loads(frame.body))
        super()._do(frame)

    def _record(self, era: str | None, msg: dict[str, Any]) -> None:
        self.sent.append((era, msg))
        # Modern (or undecided: the probe) requests validate against 2026-07-28.
        if era != "legacy" and "id" in msg and msg.get("method") in REQUEST_DEFS:
            assert_valid_request(msg)

    def methods(self) -> list[str]:
        return [m["method"] for _, m in self.sent if "method" in m]


@contextlib.contextmanager
def server(kind: str, transport: str, protocol: str) -> Iterator[ServerConfig]:
    if transport == "stdio":
        if kind == "sdk":
            # discover_timeout: the SDK server's cold start on a busy machine outlasts
            # the default probe wait, and auto would then decide legacy (LIFE-7).
            yield stdio_config(
                SDK_STDIO, protocol=protocol, read_timeout=20.0, discover_timeout=20.0
            )
        else:
            node = shutil.which("node")
            if node is None or not EVERYTHING_BIN.exists():
                pytest.fail("node and the npm everything server are needed (make peers)")
            yield stdio_config([node, str(EVERYTHING_BIN), "stdio"], protocol=protocol)
        return
    ctx = sdk_http_server("streamable-http") if kind == "sdk" else None
    with ctx or everything_http_server("streamableHttp") as peer:
        yield streamable_http_config(peer.url, read_timeout=10.0, protocol=protocol)


@pytest.mark.parametrize("transport", ["stdio", "streamable_http"])
@pytest.mark.parametrize("kind", ["sdk", "everything"])
@pytest.mark.parametrize("protocol", ["auto", "modern", "legacy"])
def test_dual_era_matrix(
    drivers: list[Driver],  # noqa: F811
    protocol: str,
    kind: str,
    transport: str,
) -> None:
    with server(kind, transport, protocol) as config:
        d = WireDriver(config)
        drivers.append(d)
        listed = d.call("tools/list")
        modern_server = kind == "sdk"
        if protocol == "modern" and not modern_server:
            # A handshake-only server cannot be spoken to in 2026-07-28: typed failure.
            assert isinstance(listed, CallFailed), listed
            assert isinstance(listed.error, IncompatibleServerError)
            (failed,) = [e for e in d.events if isinstance(e, ConnectFailed)]
            assert "protocol='modern'" in str(failed.error)
            assert "initialize" not in d.methods()
            return
        assert isinstance(listed, CallSucceeded), listed
        assert listed.result["tools"]
        (connected,) = [e for e in d.events if isinstance(e, Connected)]
        expect_modern = modern_server and protocol != "legacy"
        assert connected.info.protocol_era == ("modern" if expect_modern else "legacy")
        assert d.conn.era == connected.info.protocol_era
        methods = d.methods()
        if expect_modern:
            assert connected.info.protocol_version == V
            assert methods[0] == "server/discover"
            assert "initialize" not in methods
            echoed = d.call("tools/call", {"name": "echo", "arguments": {"text": "hé"}})
            assert isinstance(echoed, CallSucceeded), echoed
            assert echoed.result["content"][0]["text"] == "hé"
            pinged = d.call("ping")
            assert isinstance(pinged, CallSucceeded), pinged
            assert pinged.result == {}  # a ping's result, though discover went out
            assert d.methods()[-1] == "server/discover"
        else:
            assert "initialize" in methods
            # protocol="legacy" never probes; auto probed first, then fell back.
            assert ("server/discover" in methods) is (protocol == "auto")
        d.close()


def test_the_era_cache_skips_the_probe_of_a_known_legacy_origin(
    drivers: list[Driver],  # noqa: F811
) -> None:
    cache = EraCache()
    with everything_http_server("streamableHttp") as peer:
        config = streamable_http_config(peer.url, read_timeout=10.0)
        first = WireDriver(config, cache)
        drivers.append(first)
        assert isinstance(first.call("tools/list"), CallSucceeded)
        assert first.methods()[:2] == ["server/discover", "initialize"]
        first.close()
        second = WireDriver(config, cache)
        drivers.append(second)
        assert isinstance(second.call("tools/list"), CallSucceeded)
        assert second.methods()[0] == "initialize"  # LIFE-18: no second probe
        second.close()
