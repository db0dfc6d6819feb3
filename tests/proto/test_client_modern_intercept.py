"""``mcp_proto.client._intercept``: an operation run with some effects replaced."""

from __future__ import annotations

from typing import Any

import pytest
from _proto_support import drive

from mcp_proto.client._intercept import intercept
from mcp_proto.effects import Call, Effect, Log, Op
from mcp_proto.errors import ServerError


def inner() -> Op[list[Any]]:
    out = [(yield Call("s", "a"))]
    try:
        out.append((yield Call("s", "b")))
    except ServerError as exc:
        out.append(f"caught {exc.code}")
    yield Log("INFO", "done")
    return out


def test_replaced_effects_get_the_replacements_outcome_and_others_pass() -> None:
    def route(effect: Effect) -> Op[Any] | None:
        if isinstance(effect, Call) and effect.method == "b":
            return replacement()
        return None

    def replacement() -> Op[Any]:
        yield Log("INFO", "replacing b")
        raise ServerError("no", code=7)

    seen: list[Effect] = []

    def perform(effect: Effect) -> Any:
        seen.append(effect)
        return "A" if isinstance(effect, Call) else None

    assert drive(intercept(inner(), route), perform) == ["A", "caught 7"]
    assert seen == [Call("s", "a"), Log("INFO", "replacing b"), Log("INFO", "done")]


def test_an_error_the_operation_does_not_catch_propagates() -> None:
    def perform(effect: Effect) -> Any:
        raise ServerError("boom", code=1)

    with pytest.raises(ServerError):
        drive(intercept(inner(), lambda e: None), perform)


def test_closing_the_wrapper_closes_the_operation() -> None:
    closed: list[bool] = []

    def op() -> Op[None]:
        try:
            yield Call("s", "a")
        finally:
            closed.append(True)

    wrapper = intercept(op(), lambda e: None)
    assert next(wrapper) == Call("s", "a")
    wrapper.close()
    assert closed == [True]


def test_an_operation_without_effects_returns_at_once() -> None:
    def op() -> Op[int]:
        return 3
        yield  # pragma: no cover

    assert drive(intercept(op(), lambda e: None), lambda e: None) == 3
