"""Frozen value classes written out by hand: :class:`Record`.

The connection machine's frames and events and the era probe's outcomes are small
frozen values. As ``attrs`` classes each cost about half a millisecond to create at
import (``attrs`` compiles the source of its generated methods), some 15 ms for the
blocking shell's import; written out they cost nothing. A subclass lists its fields
in ``__slots__`` and sets them in its own ``__init__`` (typed, and as fast as a
generated one) with ``object.__setattr__``. Equality, hashing, ``repr``, pattern
matching and copying come from the fields, in the order of ``__init__``'s parameters,
as ``attrs.frozen`` gives them.

``object.__setattr__`` is a slot wrapper: a store through it costs about ten times a
plain one (some 1,000 machine instructions on CPython 3.11, an argument tuple and a
check of the type's ``__setattr__`` chain each time). The few records made on every
call (the ``Call`` effect, the connection's ``CallSucceeded``, the session's
``ResponseReceived``, the typed ``ToolResult``) are built by a module function instead:
it stores the fields plainly on an instance of the class's :func:`builder` (a subclass
that takes plain stores), then gives the object its own class
(``object.__setattr__(obj, "__class__", cls)``): one slot-wrapper call in all
(docs/performance.md, 2026-12-04). The object is the same as one the class makes: same
class, same slots, frozen.
"""

from __future__ import annotations

from typing import Any, TypeVar

from attrs.exceptions import FrozenInstanceError

__all__ = ["Record", "builder"]

R = TypeVar("R")


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


def builder(cls: type[R]) -> type[R]:
    """A subclass of the frozen class ``cls`` adding no slot and taking plain stores:
    an instance of it, once its fields are stored, is given ``cls`` by a
    ``__class__`` assignment (the two layouts are the same). Made once per class, at
    import, for the records made on every call only."""
    namespace = {
        "__slots__": (),
        # Both: CPython fills the one setattr slot from the pair, and a Python
        # __delattr__ left inherited would route every store through a Python-level
        # lookup (slot_tp_setattro) as slow as the slot wrapper.
        "__setattr__": object.__setattr__,
        "__delattr__": object.__delattr__,
        "__module__": cls.__module__,
        "__qualname__": f"{cls.__qualname__}.builder",
    }
    return type(cls.__name__, (cls,), namespace)
