"""ECMA-262 ``pattern`` values, checked and translated for the engine of jsonschema-rs.

JSON Schema says a ``pattern`` is an ECMA-262 regular expression; with Unicode semantics
(the ``u`` flag), as the JSON-Schema-Test-Suite and ajv read it. jsonschema-rs matches
with Rust's ``regex`` crate (``fancy-regex`` for lookaround and back-references), whose
syntax and semantics differ: ``.``, ``\\b`` and the property escapes read other rules,
``(?i)``, ``\\A``, ``\\z``, ``a++`` and POSIX classes are extensions, and a
back-reference to a group that did not take part fails where ECMA-262 matches the
empty string.

:func:`translate` parses a pattern with the ECMA-262 grammar (``u`` flag, no ``v`` flag)
and writes an equivalent pattern in the engine's syntax, every construct spelled
explicitly, so the engine's own loose rules never apply. A pattern that is not ECMA-262
is refused; so is an ECMA-262 construct the engine cannot reproduce exactly (a
back-reference whose group may or may not have taken part, a lone surrogate, a property
the engine lacks). Either way :class:`PatternError` says why, and the schema is
unusable rather than answered under other rules. Pure code: no I/O, no clock.

The parser is :mod:`mcp_proto._ecma_parser`, the syntax tree and the character sets
:mod:`mcp_proto._ecma_syntax`; this module checks back-references and writes the
tree out in the engine's syntax.
"""

from __future__ import annotations

from ._ecma_parser import (
    _code_points,
    _Parser,
)
from ._ecma_syntax import (
    _LINE_TERMINATORS,
    _MAX_CODE_POINT,
    _RUST_META,
    _SURROGATE_CATEGORY,
    _WORD,
    PatternError,
    Translation,
    _Alternative,
    _Assertion,
    _Char,
    _Class,
    _Disjunction,
    _Dot,
    _Group,
    _Look,
    _Node,
    _Property,
    _Quantifier,
    _Range,
    _Reference,
)

__all__ = ["MAX_PATTERN_LENGTH", "PatternError", "Translation", "translate"]

MAX_PATTERN_LENGTH = 10_000
"""Longest ``pattern`` accepted, in code points (SCH-9)."""

# --- back-references ----------------------------------------------------------------------


def _children(node: _Node) -> list[_Node]:
    if isinstance(node, _Disjunction):
        return list(node.alternatives)
    if isinstance(node, _Alternative):
        return list(node.terms)
    if isinstance(node, (_Group, _Look)):
        return [node.body]
    if isinstance(node, _Quantifier):
        return [node.atom]
    return []


def _check_references(tree: _Disjunction, references: list[_Reference]) -> None:
    """Decide, for each back-reference, whether the engine can reproduce ECMA-262.

    ECMA-262 matches a reference to a group that has not taken part as the empty string;
    the engine fails it instead, and it keeps a capture across iterations of a
    quantifier where ECMA-262 resets it. So a reference is honoured when its group
    surely took part (the group closes before the reference, with no quantifier,
    alternation or lookaround between them), translated to the empty string when the
    group surely did not (a forward reference, a reference inside its own group, a group
    in another alternative or inside a negative lookaround), and refused otherwise.
    """
    if not references:
        return
    ancestry: dict[int, tuple[list[_Node], int, int]] = {}  # id -> (ancestors, pre, last)
    order = 0

    def visit(node: _Node, ancestors: list[_Node]) -> int:
        nonlocal order
        pre = order
        order += 1
        last = pre
        for child in _children(node):
            last = visit(child, [*ancestors, node])
        if isinstance(node, (_Group, _Reference)):
            ancestry[id(node)] = (ancestors, pre, last)
        return last

    visit(tree, [])
    groups: dict[int, _Group] = {}

    def collect(node: _Node) -> None:
        if isinstance(node, _Group) and node.index is not None:
            groups[node.index] = node
        for child in _children(node):
            collect(child)

    collect(tree)
    for ref in references:
        assert ref.index is not None
        group = groups[ref.index]
        ref_ancestors, ref_pre, _ = ancestry[id(ref)]
        group_ancestors, group_pre, group_last = ancestry[id(group)]
        if any(isinstance(a, _Look) and a.behind for a in ref_ancestors):
            raise PatternError(
                "a back-reference inside a lookbehind (ECMA-262 matches lookbehinds right to"
                " left) cannot be reproduced by the engine",
                unsupported=True,
            )
        if group_pre <= ref_pre <= group_last or group_pre > ref_pre:
            ref.always_empty = True  # inside its own group, or a forward reference
            continue
        chain = [*group_ancestors, group]
        common = 0
        for a, b in zip(chain, ref_ancestors, strict=False):
            if a is not b:
                break
            common += 1
        meeting = chain[common - 1]
        below = chain[common:]
        if isinstance(meeting, _Disjunction) and len(meeting.alternatives) > 1:
            ref.always_empty = True  # the group is in another alternative
            continue
        if any(isinstance(a, _Look) and a.negative for a in below):
            ref.always_empty = True  # a negative lookaround keeps no capture
            continue
        if any(
            isinstance(a, (_Quantifier, _Look))
            or (isinstance(a, _Disjunction) and len(a.alternatives) > 1)
            for a in below
        ):
            raise PatternError(
                f"back-reference \\{ref.index} names a group that may or may not have taken"
                " part (it sits under a quantifier, an alternation or a lookaround); ECMA-262"
                " then matches the empty string, which the engine cannot reproduce",
                unsupported=True,
            )


# --- emitter ------------------------------------------------------------------------------


def _literal(cp: int) -> str:
    ch = chr(cp)
    if ch in _RUST_META:
        return "\\" + ch
    if 0x20 <= cp < 0x7F:
        return ch
    return f"\\u{{{cp:X}}}"


def _ranges_text(ranges: list[_Range] | tuple[_Range, ...]) -> str:
    parts = []
    for low, high in ranges:
        parts.append(_literal(low) if low == high else f"{_literal(low)}-{_literal(high)}")
    return "".join(parts)


_EVERYTHING = f"[{_ranges_text(((0, _MAX_CODE_POINT),))}]"
_NOTHING = f"[^{_ranges_text(((0, _MAX_CODE_POINT),))}]"
_WORD_CLASS = f"[{_ranges_text(_WORD)}]"
_BOUNDARY = f"(?:(?<={_WORD_CLASS})(?!{_WORD_CLASS})|(?<!{_WORD_CLASS})(?={_WORD_CLASS}))"
_NOT_BOUNDARY = f"(?:(?<={_WORD_CLASS})(?={_WORD_CLASS})|(?<!{_WORD_CLASS})(?!{_WORD_CLASS}))"
_DOT = f"[^{_ranges_text(_LINE_TERMINATORS)}]"


def _repeat(atom: str, minimum: int, maximum: int | None, lazy: str) -> str:
    if maximum is None:
        return atom + ("+" if minimum == 1 else f"{{{minimum},}}") + lazy
    if maximum == minimum:
        return atom if minimum == 1 else f"{atom}{{{minimum}}}{lazy}"
    return f"{atom}{{{minimum},{maximum}}}{lazy}"


def _only_empty(node: _Node) -> bool:
    """Whether ``node`` can match nothing but the empty string."""
    if isinstance(node, (_Assertion, _Look)):
        return True
    if isinstance(node, _Reference):
        return node.always_empty
    if isinstance(node, _Quantifier):
        return node.maximum == 0 or _only_empty(node.atom)
    if isinstance(node, (_Group, _Disjunction, _Alternative)):
        return all(_only_empty(child) for child in _children(node))
    return False


_PROPERTY_COST = 600  # \p{L}: hundreds of ranges, thousands of UTF-8 automaton states
_WIDE_CLASS_COST = 30  # a class reaching beyond ASCII (".", negations, \S, \D, \W)


def _cost(node: _Node) -> int:
    if isinstance(node, _Char):
        return 1 if node.cp < 0x80 else 2
    if isinstance(node, _Dot):
        return _WIDE_CLASS_COST
    if isinstance(node, _Class):
        cost = 1 + len(node.items)
        for item in node.items:
            if isinstance(item, _Property):
                cost += _PROPERTY_COST
            elif item[1] >= 0x80:
                cost += _WIDE_CLASS_COST
        if node.negated:
            cost += _WIDE_CLASS_COST
        return cost
    if isinstance(node, _Assertion):
        return 1 if node.kind in ("^", "$") else 10
    if isinstance(node, _Reference):
        return 5
    if isinstance(node, _Quantifier):
        count = node.maximum if node.maximum is not None else node.minimum + 1
        return _cost(node.atom) * max(count, 1)
    return 1 + sum(_cost(child) for child in _children(node))


class _Emitter:
    def __init__(self) -> None:
        self.backtracking = False

    def emit(self, node: _Node) -> str:
        if isinstance(node, _Disjunction):
            return "|".join(self.emit(a) for a in node.alternatives)
        if isinstance(node, _Alternative):
            return "".join(self.emit(t) for t in node.terms)
        if isinstance(node, _Char):
            return _literal(node.cp)
        if isinstance(node, _Dot):
            return _DOT
        if isinstance(node, _Class):
            return self._class(node)
        if isinstance(node, _Assertion):
            if node.kind in ("^", "$"):
                return node.kind
            self.backtracking = True
            return _BOUNDARY if node.kind == "b" else _NOT_BOUNDARY
        if isinstance(node, _Look):
            self.backtracking = True
            opener = "(?" + ("<" if node.behind else "") + ("!" if node.negative else "=")
            return f"{opener}{self.emit(node.body)})"
        if isinstance(node, _Group):
            opener = "(" if node.index is not None else "(?:"
            return f"{opener}{self.emit(node.body)})"
        if isinstance(node, _Reference):
            if node.always_empty:
                return "(?:)"
            self.backtracking = True
            return f"(?:\\{node.index})"
        assert isinstance(node, _Quantifier)
        atom = self.emit(node.atom)
        if _only_empty(node.atom):
            # The engine refuses to repeat what can only match the empty string; ECMA-262
            # stops such a repetition at once, so it is that atom matched once or not at all.
            if node.minimum > 0:
                return atom
            return f"(?:|{atom})" if node.lazy else f"(?:{atom}|)"
        lazy = "?" if node.lazy else ""
        if node.minimum == 0 and node.maximum != 0:
            # X*, X? and X{0,n} are written (?:X+|), (?:X|) and (?:X{1,n}|): fancy-regex
            # 0.19 rewrites "X+ Y? X+" and "(?:X+ Y? X*)+" into expressions that accept
            # more than the original; an optional part spelled as an alternation is
            # outside the shapes it rewrites. Same language, same match preference.
            once = _repeat(atom, 1, node.maximum, lazy)
            return f"(?:|{once})" if node.lazy else f"(?:{once}|)"
        return _repeat(atom, node.minimum, node.maximum, lazy)

    def _class(self, node: _Class) -> str:
        parts: list[str] = []
        for item in node.items:
            if isinstance(item, _Property):
                value = item.text.partition("=")[2] or item.text
                if value in _SURROGATE_CATEGORY:
                    # Surrogates never reach the engine: \p{Cs} is empty, \P{Cs} everything.
                    if item.negated:
                        parts.append(_ranges_text(((0, _MAX_CODE_POINT),)))
                    continue
                parts.append(("\\P" if item.negated else "\\p") + "{" + item.text + "}")
            else:
                low, high = item
                parts.append(_ranges_text(((low, high),)))
        if not parts:
            return _EVERYTHING if node.negated else _NOTHING
        return "[" + ("^" if node.negated else "") + "".join(parts) + "]"


def translate(pattern: str) -> Translation:
    """Check ``pattern`` against ECMA-262 and write it in the engine's syntax.

    Raises:
        PatternError: not ECMA-262, too long, or a construct the engine cannot reproduce.
    """
    cps = _code_points(pattern)
    if len(cps) > MAX_PATTERN_LENGTH:
        raise PatternError(f"it is longer than {MAX_PATTERN_LENGTH} characters", unsupported=True)
    parser = _Parser(cps)
    tree = parser.parse()
    _check_references(tree, parser.references)
    emitter = _Emitter()
    target = emitter.emit(tree)
    return Translation(pattern, target, emitter.backtracking, _cost(tree))
