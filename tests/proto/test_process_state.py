"""State the core keeps beyond one operation (issue 22 item 7): each piece is owned
by the object that uses it, or process-wide by design with a documented reset."""

from __future__ import annotations

from typing import Any

import pytest
from _proto_support import drive

from mcp_proto import deprecations, schema
from mcp_proto.client import ClientCore, ServerEntry
from mcp_proto.client import tools as tool_ops
from mcp_proto.effects import Call, Connect, Effect, Log
from mcp_proto.handlers import Handlers
from mcp_proto.session import ServerInfo

UNUSABLE = {"type": "object", "properties": {"x": {"type": 5}}}  # 'type' must be a name


def _core(tools: list[dict[str, Any]]) -> tuple[ClientCore, list[Log], Any]:
    logs: list[Log] = []

    def perform(effect: Effect) -> Any:
        if isinstance(effect, Connect):
            return ServerInfo("2025-11-25", {"tools": {}}, None, None)
        if isinstance(effect, Call):
            if effect.method == "tools/list":
                return {"tools": tools}
            return {"content": []}
        assert isinstance(effect, Log)
        logs.append(effect)
        return None

    return ClientCore([ServerEntry("s", "stdio")], handlers=Handlers()), logs, perform


def test_input_schema_verdicts_belong_to_their_client() -> None:
    first, first_logs, perform_first = _core([{"name": "t", "inputSchema": UNUSABLE}])
    second, second_logs, perform_second = _core([{"name": "t", "inputSchema": UNUSABLE}])
    assert first._input_verdicts is None  # nothing until a call needs one
    drive(first.call_tool("t"), perform_first)
    drive(first.call_tool("t"), perform_first)
    assert first._input_verdicts is not None and len(first._input_verdicts) == 1
    assert second._input_verdicts is None  # the other client holds nothing of it
    drive(second.call_tool("t"), perform_second)
    assert first._input_verdicts is not second._input_verdicts
    # Each call still warns (the verdict is kept, not the fact that it was logged).
    assert [log.level for log in first_logs] == ["WARNING", "WARNING"]
    assert len(second_logs) == 1 and "unusable input schema" in second_logs[0].message


def test_the_verdict_table_is_bounded() -> None:
    verdicts: Any = {}
    schemas = [{"type": "object", "title": str(i)} for i in range(tool_ops._MAX_VERDICTS + 5)]
    for s in schemas:
        tool = tool_ops.Tool(name="t", input_schema=s)
        assert tool_ops._input_schema_warning(tool, verdicts) is None
        assert len(verdicts) <= tool_ops._MAX_VERDICTS
    assert len(verdicts) == 5  # started over once full


def test_a_ledger_keeps_its_own_account() -> None:
    own = deprecations.Ledger()
    assert own.claim("roots") is deprecations.REGISTRY["roots"]
    own.confirm("roots")
    assert own.state("roots") == "announced" and own.announced() == {"roots"}
    assert deprecations.state("roots") == "due"  # the process's ledger is untouched
    assert deprecations.announce("roots", lambda text: None)
    assert deprecations.state("roots") == "announced"
    own.reset()
    assert own.state("roots") == "due" and deprecations.state("roots") == "announced"
    deprecations.reset()
    assert deprecations.announced() == frozenset()
    with pytest.raises(Exception, match="unknown deprecated feature"):
        own.claim("nope")


def test_every_test_starts_with_the_notices_due() -> None:
    # tests/proto/conftest.py resets the ledger: whatever ran before, nothing is spent.
    assert deprecations.announced() == frozenset()
    assert all(deprecations.state(key) == "due" for key in deprecations.REGISTRY)


def test_the_schema_cache_resets() -> None:
    doc = {"type": "object", "title": "reset me"}
    validator = schema.compile(doc)
    assert schema.compile(dict(doc)) is validator  # cached
    schema.reset_cache()
    assert len(schema._CACHE) == 0
    again = schema.compile(doc)
    assert again is not validator and again.is_valid({}) and not again.is_valid(3)


def test_one_lookup_checks_required_arguments_first_then_the_schema_verdict() -> None:
    """call_tool's per-call input check (tool_ops._input_check) keeps the two checks'
    order and answers: a missing required argument (TOOL-5) is reported before the
    schema's verdict (SCH-13), from a table entry made once per schema object."""
    schema = {
        "type": "object",
        "properties": {"a": {"type": 5}, "b": {"type": "string", "default": "x"}},
        "required": ["a", "b", 7],
    }
    tool = tool_ops.Tool(name="t", input_schema=schema)
    verdicts: Any = {}
    with pytest.raises(tool_ops.ValidationError, match=r"missing required argument\(s\): a$"):
        tool_ops._input_check(tool, {}, verdicts)
    assert next(iter(verdicts.values()))[2] == ("a",)  # b has a default, 7 is no name
    with pytest.raises(tool_ops.ValidationError, match="missing required"):
        tool_ops._input_check(tool, {"b": "y"}, verdicts)  # the kept entry, same answer
    warning = tool_ops._input_check(tool, {"a": 1}, verdicts)
    assert warning is not None and "unusable input schema" in warning
    assert warning == tool_ops._input_schema_warning(tool, verdicts)
    assert len(verdicts) == 1
    plain = tool_ops.Tool(name="p", input_schema={"type": "object"})
    assert tool_ops._input_check(plain, {}, verdicts) is None and len(verdicts) == 2
