"""Running an operation with some of its effects replaced by other operations.

The 2026-07-28 client wraps existing operations instead of copying them: the
paginated listing's ``Call`` effects go through the result cache, and the
``input_required`` rounds' ``Call`` effects carry the tool definition and the progress
callback of the ``tools/call`` they belong to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..effects import Effect, Op

__all__ = ["intercept"]

T = TypeVar("T")


def intercept(op: Op[T], route: Callable[[Effect], Op[Any] | None]) -> Op[T]:
    """Drive ``op``; for each effect it yields, ``route`` returns an operation to run
    in its place (its outcome, value or exception, goes back to ``op``) or ``None``
    to pass the effect on unchanged."""
    try:
        effect = next(op)
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]
    while True:
        replacement = route(effect)
        try:
            try:
                if replacement is None:
                    value = yield effect
                else:
                    value = yield from replacement
            except GeneratorExit:
                op.close()
                raise
            except BaseException as exc:  # the outcome of the effect: op decides
                effect = op.throw(exc)
                continue
            effect = op.send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
