"""The fuzz harness (fuzz/fuzz_session.py) runs, deterministically, on every test run."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from mcp_proto.session import Session

HARNESS = Path(__file__).resolve().parents[2] / "fuzz" / "fuzz_session.py"


def load_harness() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_session", HARNESS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fuzz = load_harness()


def test_plain_loop_fixed_seed() -> None:
    assert fuzz.run_plain(iterations=300, seed=20261129) == 300


def test_generation_is_deterministic() -> None:
    import random

    a = [fuzz.generate(random.Random(5)) for _ in range(3)]
    b = [fuzz.generate(random.Random(5)) for _ in range(3)]
    assert a == b


def test_seeds_reach_every_kind_of_event() -> None:
    # Progress first: the first seed answers the request its token belongs to.
    progress = [s for s in fuzz.SEEDS if b"notifications/progress" in s]
    trace = fuzz.run([b"\n".join([*progress, *fuzz.SEEDS]) + b"\n"])
    kinds = {entry[0] for entry in trace}
    assert {
        "response",
        "failed",
        "progress",
        "log",
        "discarded",
        "notification",
        "request",
        "reply",
        "sent",
    } <= kinds
    replies = [json.loads(entry[1]) for entry in trace if entry[0] == "sent"]
    assert any(r.get("id") == "\ud800" for r in replies)  # the lone-surrogate id was answered


def test_small_line_limit_path() -> None:
    trace = fuzz.run([fuzz.SEEDS[0] + b"\n"], fuzz.SMALL_LINE)
    assert ("line too long",) in trace


@pytest.mark.parametrize(
    "data",
    [b"", b"\n", b"\r\n\r\n", b"x" * 200, b'{"jsonrpc":"2.0","id":2,"result":{}}'],
)
def test_check_one_edge_inputs(data: bytes) -> None:
    fuzz.check_one(data)


def test_harness_catches_an_untyped_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    """A core that let a KeyError escape would fail the harness."""
    original = Session.receive_message

    def broken(self: Session, data: Any) -> None:
        if "boom" in (data if isinstance(data, str) else data.decode(errors="replace")):
            raise KeyError("boom")
        original(self, data)

    monkeypatch.setattr(Session, "receive_message", broken)
    with pytest.raises(KeyError):
        fuzz.check_one(b'{"boom": 1}\n')


def test_harness_catches_a_chunking_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    """A framer whose output depended on chunking would fail the harness."""
    from mcp_proto.stdio import LineFramer

    original = LineFramer.receive_data

    def lossy(self: LineFramer, data: bytes) -> None:
        original(self, data[:1] if len(data) > 1 else data)

    monkeypatch.setattr(LineFramer, "receive_data", lossy)
    with pytest.raises(AssertionError):
        fuzz.check_one(b'{"jsonrpc":"2.0","method":"x"}\n')
