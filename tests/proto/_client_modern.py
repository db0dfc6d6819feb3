"""A scripted driver for the client core's 2026-07-28 tests (no I/O, time a number).

``ModernDriver`` is the shared scripted driver (tests/proto/_scripted_driver.py: a
ServerInfo of the server's era for ``Connect``, ``Call`` answered from a per-server
script, the core's clock and sleep on :attr:`ModernDriver.now`). Every request
sent to a modern server is first built as the connection would put it on the wire
(``_meta`` from :func:`mcp_proto.modern.meta.with_meta`) and validated against the
2026-07-28 schema.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import attrs

from mcp_proto.client import ClientCore, ServerEntry
from mcp_proto.effects import Call, Effect, Notify, SetLogLevel
from mcp_proto.handlers import Handlers

sys.path.insert(0, str(Path(__file__).parent / "modern"))
from _modern_wire import REQUEST_DEFS, assert_valid_request, request
from _scripted_driver import ScriptedDriver, ScriptedPeer

MODERN = "2026-07-28"
CAPS: dict[str, Any] = {
    "tools": {"listChanged": True},
    "prompts": {},
    "resources": {"subscribe": True},
    "logging": {},
}
OK = {"content": [{"type": "text", "text": "ok"}], "isError": False}


def tool(name: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}, **extra}


@attrs.define
class Peer(ScriptedPeer):
    version: str = MODERN
    caps: dict[str, Any] = attrs.Factory(lambda: dict(CAPS))
    script: dict[str, Any] = attrs.Factory(dict)


@attrs.define
class ModernDriver(ScriptedDriver):
    """Every request to a modern server is validated as the connection would send it;
    ``logging/setLevel`` and notifications the core sends are kept."""

    levels: list[SetLogLevel] = attrs.Factory(list)
    notifies: list[Notify] = attrs.Factory(list)

    def validate(self, peer: Any, effect: Call) -> None:
        if peer.version == MODERN and effect.method in REQUEST_DEFS:
            wire = self.modern_params(effect)
            assert_valid_request(request(effect.method, wire, len(self.calls) + 1))

    def perform_other(self, effect: Effect) -> Any:
        if isinstance(effect, SetLogLevel):
            self.levels.append(effect)
            return None
        if isinstance(effect, Notify):
            self.notifies.append(effect)
            return None
        raise AssertionError(effect)


def make(
    peers: dict[str, Peer],
    *,
    types: dict[str, str] | None = None,
    handlers: Handlers | None = None,
    auth: dict[str, str] | None = None,
    read_timeout: float = 30.0,
    **kwargs: Any,
) -> tuple[ClientCore, ModernDriver]:
    driver = ModernDriver(peers)
    entries = [
        ServerEntry(
            name,
            (types or {}).get(name, "http"),
            authorization=(auth or {}).get(name),
            read_timeout=read_timeout,
        )
        for name in peers
    ]
    core = ClientCore(
        entries,
        handlers=handlers or Handlers(),
        clock=driver.clock,
        sleep=driver.sleep,
        **kwargs,
    )
    driver.core = core
    return core, driver
