"""A scripted driver for the client core's 2026-07-28 tests (no I/O, time a number).

``ModernDriver`` answers ``Connect`` with a ServerInfo of the server's era, ``Call``
from a per-server script (method -> a value, an exception, a list of them consumed in
turn, or a function of params), and ``CallHost`` by calling the function, except the
core's clock and sleep, which read and advance :attr:`ModernDriver.now`. Every request
sent to a modern server is first built as the connection would put it on the wire
(``_meta`` from :func:`mcp_proto.modern.meta.with_meta`) and validated against the
2026-07-28 schema.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from mcp_proto.client import ClientCore, ServerEntry
from mcp_proto.effects import Call, CallHost, Connect, Effect, Log, Notify, PeekEra, SetLogLevel
from mcp_proto.handlers import Handlers
from mcp_proto.modern.meta import with_meta
from mcp_proto.session import ServerInfo

sys.path.insert(0, str(Path(__file__).parent / "modern"))
from _modern_wire import REQUEST_DEFS, assert_valid_request, request

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
class Peer:
    version: str = MODERN
    caps: dict[str, Any] = attrs.Factory(lambda: dict(CAPS))
    #: method -> value | exception | list of those (consumed in turn) | fn(params)
    script: dict[str, Any] = attrs.Factory(dict)

    def info(self) -> ServerInfo:
        return ServerInfo(self.version, self.caps, None, None)


@attrs.define
class ModernDriver:
    peers: dict[str, Peer]
    core: ClientCore | None = None
    now: float = 100.0
    calls: list[Call] = attrs.Factory(list)
    logs: list[Log] = attrs.Factory(list)
    sleeps: list[float] = attrs.Factory(list)
    levels: list[SetLogLevel] = attrs.Factory(list)
    notifies: list[Notify] = attrs.Factory(list)
    #: called with each Call before it is answered (to interleave notifications)
    on_call: Callable[[Call], None] | None = None

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def sent(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def perform(self, effect: Effect) -> Any:
        if isinstance(effect, Connect):
            return self.peers[effect.server].info()
        if isinstance(effect, Call):
            peer = self.peers[effect.server]
            if peer.version == MODERN and effect.method in REQUEST_DEFS:
                assert self.core is not None
                wire = with_meta(
                    effect.params,
                    protocol_version=MODERN,
                    client_info=self.core.client_info,
                    capabilities=self.core.capabilities,
                )
                assert_valid_request(request(effect.method, wire, len(self.calls) + 1))
            self.calls.append(effect)
            if self.on_call is not None:
                self.on_call(effect)
            answer = peer.script.get(effect.method)
            if isinstance(answer, list):
                answer = answer.pop(0) if len(answer) > 1 else answer[0]
            if answer is None:
                raise AssertionError(f"unscripted {effect.method}")
            if isinstance(answer, BaseException):
                raise answer
            if callable(answer):
                return answer(effect.params)
            return answer
        if isinstance(effect, CallHost):
            if effect.fn == self.clock:
                return self.now
            return effect.fn(*effect.args)
        if isinstance(effect, Log):
            self.logs.append(effect)
            return None
        if isinstance(effect, SetLogLevel):
            self.levels.append(effect)
            return None
        if isinstance(effect, Notify):
            self.notifies.append(effect)
            return None
        if isinstance(effect, PeekEra):  # the era of a connected server, if any
            return self.peers[effect.server].info().protocol_era
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
