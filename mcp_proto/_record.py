"""Frozen value classes written out by hand: :class:`Record`.

The connection machine's frames and events and the era probe's outcomes are small
frozen values. As ``attrs`` classes each cost about half a millisecond to create at
import (``attrs`` compiles the source of its generated methods), some 15 ms for the
blocking shell's import; written out they cost nothing. A subclass lists its fields
in ``__slots__`` and sets them in its own ``__init__`` (typed, and as fast as a
generated one) with ``object.__setattr__``. Equality, hashing, ``repr``, pattern
matching and copying come from the fields, in the order of ``__init__``'s parameters,
as ``attrs.frozen`` gives them.
"""

from __future__ import annotations

from typing import Any

from attrs.exceptions import FrozenInstanceError

__all__ = ["Record"]


class Record:
    """A frozen value: its fields are its ``__init__``'s parameters, each a slot."""

    __slots__: tuple[str, ...] = ()
    _fields: tuple[str, ...] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        code = getattr(cls.__dict__.get("__init__"), "__code__", None)
        fields = code.co_varnames[1 : code.co_argcount] if code is not None else ()
        if set(fields) != set(cls.__slots__):
            raise TypeError(f"{cls.__name__}: __slots__ must name the __init__ parameters")
        cls._fields = fields
        setattr(cls, "__match_args__", fields)  # noqa: B010 (a class attribute)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError()

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((self.__class__, self._values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({fields})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.__class__, self._values())
