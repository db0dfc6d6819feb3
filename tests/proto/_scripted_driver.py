"""The scripted peer both client-core drivers share (no I/O, time a number): the
2026-07-28 one (``_client_modern.ModernDriver``) and the task operations' one
(``_tasks_support.TaskDriver``).

``ScriptedDriver`` answers ``Connect`` with a peer's ServerInfo and ``PeekEra`` with its
era, ``Call`` from the peer's script (method -> a value, an exception, a list of them
consumed in turn, or a function of params; checked first by :meth:`validate`), and
``CallHost`` by calling the function, except the core's clock and sleep, which read and
advance :attr:`ScriptedDriver.now`. ``Log`` effects are kept; a subclass takes other
effects in :meth:`perform_other`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs

from mcp_proto.effects import Call, CallHost, Connect, Effect, Log, PeekEra
from mcp_proto.modern.meta import with_meta
from mcp_proto.session import ServerInfo


class ScriptedPeer:
    """What a driver asks of a peer: its ServerInfo and its script."""

    version: str
    caps: dict[str, Any]
    #: method -> value | exception | list of those (consumed in turn) | fn(params)
    script: dict[str, Any]

    def info(self) -> ServerInfo:
        return ServerInfo(self.version, self.caps, None, None)


@attrs.define
class ScriptedDriver:
    peers: dict[str, Any]
    core: Any = None
    now: float = 100.0
    calls: list[Call] = attrs.Factory(list)
    logs: list[Log] = attrs.Factory(list)
    sleeps: list[float] = attrs.Factory(list)
    #: called with each Call before it is answered (to interleave notifications)
    on_call: Callable[[Call], None] | None = None
    #: answer a copy of the scripted value (as decoded from the wire), not the value
    copy_answers: bool = False

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0
        self.sleeps.append(seconds)
        self.now += seconds

    def sent(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def methods(self) -> list[str]:
        return [c.method for c in self.calls]

    def modern_params(self, effect: Call, **extra: Any) -> Any:
        """``effect``'s params as the connection sends them to a 2026-07-28 server
        (the per-request ``_meta``), for a schema check."""
        assert self.core is not None
        return with_meta(
            effect.params,
            protocol_version="2026-07-28",
            client_info=self.core.client_info,
            capabilities=self.core.capabilities,
            **extra,
        )

    def validate(self, peer: Any, effect: Call) -> None:
        """Check a request against its revision's schema before it is answered."""

    def perform_other(self, effect: Effect) -> Any:
        raise AssertionError(effect)

    def perform(self, effect: Effect) -> Any:
        if isinstance(effect, Connect):
            return self.peers[effect.server].info()
        if isinstance(effect, PeekEra):  # the era the connection decided (LIFE-4)
            return self.peers[effect.server].info().protocol_era
        if isinstance(effect, Call):
            peer = self.peers[effect.server]
            self.validate(peer, effect)
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
            return json.loads(json.dumps(answer)) if self.copy_answers else answer
        if isinstance(effect, CallHost):
            if effect.fn == self.clock:
                return self.now
            return effect.fn(*effect.args)
        if isinstance(effect, Log):
            self.logs.append(effect)
            return None
        return self.perform_other(effect)
