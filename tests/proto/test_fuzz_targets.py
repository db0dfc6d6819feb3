"""Every fuzz target in fuzz/ runs on every test run: its committed corpus, then a short
hypothesis byte-stream run with a fixed seed (issue 11). atheris is never needed here.

A target's ``check`` raises only when the contract of the entry point it feeds is
broken; the last tests show that each target does notice a broken contract.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest

FUZZ = Path(__file__).resolve().parents[2] / "fuzz"
sys.path.insert(0, str(FUZZ))

import run as fuzz_run  # noqa: E402
from _fuzzlib import corpus_files, run_corpus, run_hypothesis  # noqa: E402

NAMES = list(fuzz_run.TARGETS)


def test_every_target_has_a_committed_corpus() -> None:
    for name in NAMES:
        assert corpus_files(name), f"fuzz/corpus/{name}/ is empty"


@pytest.mark.parametrize("name", NAMES)
def test_corpus_holds_the_contract(name: str) -> None:
    target = fuzz_run.load(name)
    assert run_corpus(target) == len(target.seeds) + len(corpus_files(name))


@pytest.mark.parametrize("name", NAMES)
def test_fixed_seed_run_holds_the_contract(name: str) -> None:
    assert run_hypothesis(fuzz_run.load(name), examples=60, seed=20261201) >= 1


# ---- the issue 11 inputs are in the corpus, and the targets would have caught them


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("serve_request", b'"toolUseId":[]'),
        ("schema", b"a{" + b"1" * 4301 + b"}"),
        ("schema", b'"#/a/\xc2\xb2"'),
        ("ecma_regex", b"\\" + b"1" * 4301),
    ],
)
def test_issue_11_inputs_are_in_the_corpus(name: str, fragment: bytes) -> None:
    target = fuzz_run.load(name)
    inputs = [*target.seeds, *(p.read_bytes() for p in corpus_files(name))]
    assert any(fragment in data for data in inputs)


@pytest.mark.parametrize(
    ("name", "module", "owner", "attr"),
    [
        ("schema", "mcp_proto.schema", "Validator", "is_valid"),
        ("ecma_regex", "mcp_proto._ecma_regex", None, "translate"),
        ("serve_request", "mcp_proto.handlers", None, "validate_sampling_history"),
        ("config", "mcp_proto.config", None, "parse_server_definitions"),
        ("jsonrpc", "mcp_proto.jsonrpc", None, "_from_object"),
        ("http", "mcp_proto.http", None, "classify_response"),
        ("gzip", "mcp_proto.compression", "Inflater", "feed"),
        ("stdio", "mcp_proto.stdio", "LineFramer", "receive_data"),
        ("sse", "mcp_proto.sse", "SSEParser", "receive_data"),
        ("session", "mcp_proto.session", "Session", "receive_message"),
        ("tasks", "mcp_proto.tasks", None, "parse_task"),
        ("skills", "mcp_proto.skills", None, "parse_skill_entry"),
        ("results", "mcp_proto.results", "ToolResult", "from_wire"),
        ("connection", "mcp_proto.session", "Session", "receive_message"),
    ],
)
def test_a_target_notices_an_untyped_exception(
    monkeypatch: pytest.MonkeyPatch, name: str, module: str, owner: str | None, attr: str
) -> None:
    """An entry point that let an untyped exception out would fail its target."""
    holder: Any = importlib.import_module(module)
    if owner is not None:
        holder = getattr(holder, owner)
    original = getattr(holder, attr)

    def broken(*args: Any, **kwargs: Any) -> Any:
        original(*args, **kwargs)
        raise RuntimeError("escaped")

    monkeypatch.setattr(holder, attr, broken)
    # A target that imported the function by name sees it through its own module.
    # (imported here: run alone, or first on a worker, no earlier test imported it)
    target_module = importlib.import_module(fuzz_run.TARGETS[name])
    if owner is None and hasattr(target_module, attr):
        monkeypatch.setattr(target_module, attr, broken)
    with pytest.raises(AssertionError, match="contract broken"):
        run_corpus(fuzz_run.load(name))


def test_the_connection_targets_finds_are_in_its_corpus() -> None:
    """The two inputs on which fuzz/fuzz_connection.py broke the machine's contract
    (fixed with regression tests in test_connection_stdio.py and
    test_connection_listen.py) are replayed on every run."""
    names = {path.name for path in corpus_files("connection")}
    assert {
        "crash-handshake-answer-with-the-end-of-output",
        "crash-listen-beyond-the-request-table",
    } <= names
