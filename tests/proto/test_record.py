"""Record: the hand-written frozen values (frames, events, probe outcomes) behave as
the attrs.frozen classes they replaced."""

from __future__ import annotations

import copy
import pickle

import pytest
from attrs.exceptions import FrozenInstanceError

from mcp_proto._record import Record
from mcp_proto.connection.events import CallSucceeded, Closed
from mcp_proto.connection.frames import CloseTransport, StartExchange, Write
from mcp_proto.modern.discover import DiscoverInfo, Legacy


def _exchange(xid: int = 1) -> StartExchange:
    return StartExchange(xid, "POST", "http://h/mcp", (("a", "b"),), b"{}", 5.0, False)


def test_fields_follow_the_init_parameters_not_the_sorted_slots() -> None:
    assert StartExchange._fields == (
        "xid",
        "method",
        "url",
        "headers",
        "body",
        "read_timeout",
        "streaming",
    )
    assert StartExchange.__match_args__ == StartExchange._fields
    assert repr(CallSucceeded(3, "tools/call", {"x": 1})) == (
        "CallSucceeded(call_id=3, method='tools/call', result={'x': 1})"
    )
    assert repr(Closed()) == "Closed()"


def test_equality_and_hash_by_value_and_type() -> None:
    assert _exchange() == _exchange()
    assert hash(_exchange()) == hash(_exchange())
    assert _exchange(1) != _exchange(2)
    assert Closed() == Closed() and Closed() != CloseTransport()
    assert Legacy("x") != "x"
    assert CloseTransport() == CloseTransport(graceful=True) != CloseTransport(False)
    with pytest.raises(TypeError):
        hash(Write([b"a"]))  # a list field is not hashable (as with attrs)


def test_frozen() -> None:
    frame = _exchange()
    with pytest.raises(FrozenInstanceError):
        frame.xid = 2  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del frame.url  # type: ignore[misc]
    with pytest.raises(AttributeError):
        frame.other = 1  # type: ignore[attr-defined]


def test_copy_and_pickle_keep_the_value() -> None:
    info = DiscoverInfo(("2026-07-28",), "2026-07-28", {"tools": {}}, ttl_ms=5)
    for value in (_exchange(), info, Closed(), CloseTransport(False)):
        assert pickle.loads(pickle.dumps(value)) == value
        assert copy.copy(value) == value
        assert copy.deepcopy(value) == value


def test_pattern_matching_by_position() -> None:
    match CallSucceeded(7, "ping", {}):
        case CallSucceeded(call_id, method, result):
            assert (call_id, method, result) == (7, "ping", {})
        case _:
            pytest.fail("no match")


def test_slots_must_name_the_init_parameters() -> None:
    with pytest.raises(TypeError, match="__slots__ must name"):

        class Bad(Record):  # pragma: no cover - refused at class creation
            __slots__ = ("a",)

            def __init__(self, b: int) -> None:
                object.__setattr__(self, "b", b)


# The records made on every call are built by module functions on a builder subclass
# (mcp_proto/_record.py): the result must be indistinguishable from the class's own.
def _built_pairs() -> list[tuple[object, object]]:
    from mcp_proto.connection.events import _call_succeeded
    from mcp_proto.effects import Call, _new_call
    from mcp_proto.events import ResponseReceived, _response_received

    progress = print  # (any callable that pickles)

    tool = {"name": "echo", "inputSchema": {"type": "object"}}
    return [
        (
            _new_call("s", "tools/call", {"name": "echo"}, 2.5, progress, tool),
            Call("s", "tools/call", {"name": "echo"}, 2.5, progress, tool),
        ),
        (_call_succeeded(3, "tools/call", {"x": 1}), CallSucceeded(3, "tools/call", {"x": 1})),
        (_response_received(7, "ping", {}), ResponseReceived(7, "ping", {})),
    ]


@pytest.mark.parametrize("pair", range(3))
def test_a_record_built_for_the_hot_path_is_the_class_own(pair: int) -> None:
    built, made = _built_pairs()[pair]
    assert type(built) is type(made)
    assert isinstance(built, Record) and isinstance(made, Record)
    assert built == made and repr(built) == repr(made) and built._values() == made._values()
    assert pickle.loads(pickle.dumps(built)) == made
    with pytest.raises(FrozenInstanceError):
        built.method = "other"  # type: ignore[attr-defined]
    with pytest.raises(FrozenInstanceError):
        del built.method  # type: ignore[attr-defined]


def test_a_tool_result_from_the_wire_is_frozen_and_a_subclass_is_built_as_before() -> None:
    from mcp_proto.results import ToolResult

    raw = {"content": [{"type": "text", "text": "hi"}]}
    result = ToolResult.from_wire(raw, server="s")
    assert type(result) is ToolResult and result.server == "s" and result.raw is raw
    assert result == raw and result.text == "hi"
    with pytest.raises(FrozenInstanceError):
        result.server = "t"

    class Mine(ToolResult):
        __slots__ = ("extra",)

    mine = Mine.from_wire(raw, server="s")
    assert type(mine) is Mine and mine.server == "s" and mine.text == "hi"


def test_a_builder_stores_through_the_generic_setattr() -> None:
    """CPython fills a type's one setattr slot from ``__setattr__`` and ``__delattr__``
    together: a builder must take both from ``object``, or a plain store on it runs
    the Python-level lookup the builder exists to avoid (the cost is the point)."""
    from mcp_proto._record import builder
    from mcp_proto.effects import Call

    made = builder(Call)
    assert made.__setattr__ is object.__setattr__ and made.__delattr__ is object.__delattr__
    assert made.__slots__ == () and made.__mro__[1] is Call
