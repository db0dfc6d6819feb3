"""The ECMA-262 pattern parser of :mod:`mcp_proto._ecma_regex` (``u`` flag, no ``v``
flag): code points in, a syntax tree (:mod:`mcp_proto._ecma_syntax`) out, or a
``PatternError`` saying where and why. Pure code."""

from __future__ import annotations

from ._ecma_syntax import (
    _BINARY_PROPERTIES,
    _CATEGORY_NAMES,
    _CLASS_ESCAPES,
    _CONTROL_ESCAPES,
    _ENGINE_LACKS,
    _GENERAL_CATEGORY,
    _MAX_CODE_POINT,
    _MAX_REPEAT,
    _SCRIPT_NAMES,
    _SCRIPTS,
    _SYNTAX_CHARACTERS,
    PatternError,
    _Alternative,
    _Assertion,
    _Char,
    _Class,
    _ClassItem,
    _Disjunction,
    _Dot,
    _Group,
    _Look,
    _Property,
    _Quantifier,
    _Range,
    _Reference,
    _Term,
)

# --- parser -------------------------------------------------------------------------------


def _code_points(pattern: str) -> list[int]:
    """The pattern's code points, a surrogate pair written as two code points joined."""
    out: list[int] = []
    i, n = 0, len(pattern)
    while i < n:
        cp = ord(pattern[i])
        if 0xD800 <= cp <= 0xDBFF and i + 1 < n and 0xDC00 <= ord(pattern[i + 1]) <= 0xDFFF:
            cp = 0x10000 + ((cp - 0xD800) << 10) + (ord(pattern[i + 1]) - 0xDC00)
            i += 1
        elif 0xD800 <= cp <= 0xDFFF:
            raise PatternError("it contains a lone surrogate, which no JSON text can match")
        out.append(cp)
        i += 1
    return out


def _is_hex(cp: int) -> bool:
    return cp < 0x80 and chr(cp) in "0123456789abcdefABCDEF"


def _is_digit(cp: int) -> bool:
    return 0x30 <= cp <= 0x39


# Decimal numbers in a pattern (repetition counts, back-references) longer than this,
# leading zeros aside, are read as _TOO_BIG: every such number is refused anyway, and
# int() of a string over 4,300 digits raises a bare ValueError (issue 11, case 2).
_MAX_DECIMAL_DIGITS = 9
_TOO_BIG = 1_000_000_000  # 10 ** _MAX_DECIMAL_DIGITS


def _decimal(cps: list[int], start: int, end: int) -> int:
    """The ASCII digits ``cps[start:end]`` as an int, clamped to ``_TOO_BIG``."""
    while start < end - 1 and cps[start] == 0x30:
        start += 1
    if end - start > _MAX_DECIMAL_DIGITS:
        return _TOO_BIG
    return int("".join(chr(x) for x in cps[start:end]))


def _count_groups(cps: list[int]) -> int:
    """Capturing groups in the pattern (needed before parsing: ``\\N`` must name one)."""
    count = 0
    i, n = 0, len(cps)
    in_class = False
    while i < n:
        c = cps[i]
        if c == 0x5C:  # backslash: skip the escaped character
            i += 2
            continue
        if in_class:
            if c == 0x5D:
                in_class = False
        elif c == 0x5B:
            in_class = True
        elif c == 0x28:
            if i + 1 < n and cps[i + 1] == 0x3F:  # "(?"
                if (
                    i + 2 < n
                    and cps[i + 2] == 0x3C
                    and i + 3 < n
                    and cps[i + 3] not in (0x3D, 0x21)
                ):
                    count += 1  # "(?<name>"
            else:
                count += 1
        i += 1
    return count


class _Parser:
    def __init__(self, cps: list[int]) -> None:
        self.cps = cps
        self.pos = 0
        self.total_groups = _count_groups(cps)
        self.groups = 0
        self.names: dict[str, int] = {}
        self.references: list[_Reference] = []
        self.lookbehind_depth = 0
        self.unsupported: str | None = None  # first construct the engine cannot reproduce

    def _cannot(self, reason: str) -> None:
        """Note a valid construct the engine cannot reproduce; reported after parsing, so
        a pattern that is not ECMA-262 at all is reported as such."""
        if self.unsupported is None:
            self.unsupported = reason

    # low-level helpers
    def _peek(self, offset: int = 0) -> int | None:
        i = self.pos + offset
        return self.cps[i] if i < len(self.cps) else None

    def _peek_char(self, offset: int = 0) -> str:
        cp = self._peek(offset)
        return "" if cp is None else chr(cp)

    def _take(self) -> int:
        cp = self.cps[self.pos]
        self.pos += 1
        return cp

    def _error(self, message: str) -> PatternError:
        return PatternError(f"{message} (at offset {self.pos})")

    # grammar
    def parse(self) -> _Disjunction:
        tree = self._disjunction()
        if self.pos < len(self.cps):
            raise self._error("unmatched ')'")
        for ref in self.references:
            if ref.name is not None:
                index = self.names.get(ref.name)
                if index is None:
                    raise PatternError(f"\\k<{ref.name}> names no capturing group")
                ref.index = index
        if self.unsupported is not None:
            raise PatternError(self.unsupported, unsupported=True)
        return tree

    def _disjunction(self) -> _Disjunction:
        alternatives = [self._alternative()]
        while self._peek_char() == "|":
            self.pos += 1
            alternatives.append(self._alternative())
        return _Disjunction(alternatives)

    def _alternative(self) -> _Alternative:
        terms: list[_Term] = []
        while self.pos < len(self.cps) and self._peek_char() not in ("|", ")"):
            terms.append(self._term())
        return _Alternative(terms)

    def _term(self) -> _Term:
        c = self._peek_char()
        term: _Term
        if c in ("^", "$"):
            self.pos += 1
            term = _Assertion(c)
        elif c == "\\" and self._peek_char(1) in ("b", "B"):
            self._refuse_in_lookbehind("\\" + self._peek_char(1))
            term = _Assertion(self._peek_char(1))
            self.pos += 2
        elif c == "(" and self._peek_char(1) == "?" and self._lookaround_ahead():
            term = self._lookaround()
        else:
            atom = self._atom()
            return self._quantified(atom)
        if self._quantifier_ahead():
            raise self._error("nothing to repeat: an assertion cannot be quantified")
        return term

    def _lookaround_ahead(self) -> bool:
        two = self._peek_char(2)
        return two in ("=", "!") or (two == "<" and self._peek_char(3) in ("=", "!"))

    def _refuse_in_lookbehind(self, what: str) -> None:
        # fancy-regex runs a variable-length lookbehind with a reverse search that gives
        # wrong answers for lookarounds (and \b, written as lookarounds) nested in it.
        if self.lookbehind_depth:
            self._cannot(f"{what} inside a lookbehind cannot be reproduced by the engine")

    def _lookaround(self) -> _Look:
        self._refuse_in_lookbehind("a lookaround")
        self.pos += 2  # "(?"
        behind = self._peek_char() == "<"
        if behind:
            self.pos += 1
        negative = self._take() == ord("!")
        self.lookbehind_depth += behind
        body = self._disjunction()
        self.lookbehind_depth -= behind
        if self._peek_char() != ")":
            raise self._error("unterminated group")
        self.pos += 1
        return _Look(behind, negative, body)

    def _quantifier_ahead(self) -> bool:
        c = self._peek_char()
        return c in ("*", "+", "?") or (
            c == "{" and self._brace_quantifier(consume=False) is not None
        )

    def _brace_quantifier(self, *, consume: bool) -> tuple[int, int | None] | None:
        """Parse ``{n}``, ``{n,}`` or ``{n,m}`` at the cursor (or just look)."""
        i = self.pos + 1
        cps = self.cps

        def digits(start: int) -> tuple[int | None, int]:
            j = start
            while j < len(cps) and _is_digit(cps[j]):
                j += 1
            if j == start:
                return None, j
            return _decimal(cps, start, j), j

        low, i = digits(i)
        if low is None:
            return None
        high: int | None = low
        if i < len(cps) and cps[i] == 0x2C:  # ","
            high, i = digits(i + 1)
        if i >= len(cps) or cps[i] != 0x7D:  # "}"
            return None
        if consume:
            self.pos = i + 1
        return low, high

    def _quantified(self, atom: _Term) -> _Term:
        c = self._peek_char()
        bounds: tuple[int, int | None]
        if c == "*":
            bounds = (0, None)
            self.pos += 1
        elif c == "+":
            bounds = (1, None)
            self.pos += 1
        elif c == "?":
            bounds = (0, 1)
            self.pos += 1
        elif c == "{":
            parsed = self._brace_quantifier(consume=True)
            if parsed is None:
                raise self._error("lone '{' (write \\{ for a literal brace)")
            bounds = parsed
        else:
            return atom
        low, high = bounds
        # Two clamped counts cannot be ordered; both are refused just below anyway.
        if high is not None and high < low and high != _TOO_BIG:
            raise self._error("numbers out of order in {} quantifier")
        if low > _MAX_REPEAT or (high is not None and high > _MAX_REPEAT):
            self._cannot(f"a repetition count above {_MAX_REPEAT} is more than the engine can run")
        lazy = self._peek_char() == "?"
        if lazy:
            self.pos += 1
        if self._quantifier_ahead():
            raise self._error(
                "nothing to repeat (possessive and stacked quantifiers are not ECMA-262)"
            )
        return _Quantifier(atom, low, high, lazy)

    def _atom(self) -> _Term:
        c = self._peek_char()
        if c == ".":
            self.pos += 1
            return _Dot()
        if c == "(":
            return self._group()
        if c == "[":
            return self._class()
        if c == "\\":
            return self._atom_escape()
        if c in ("*", "+", "?"):
            raise self._error("nothing to repeat")
        if c in ("{", "}"):
            raise self._error(f"lone quantifier bracket {c!r} (write \\{c} for the literal)")
        if c == "]":
            raise self._error("lone ']' (write \\] for the literal)")
        return _Char(self._take())

    def _group(self) -> _Group:
        self.pos += 1  # "("
        index: int | None = None
        if self._peek_char() == "?":
            if self._peek_char(1) == ":":
                self.pos += 2
            elif self._peek_char(1) == "<":
                self.pos += 2
                name = self._group_name()
                if name in self.names:
                    raise self._error(f"duplicate capturing group name {name!r}")
                self.groups += 1
                index = self.groups
                self.names[name] = index
            else:
                raise self._error(
                    "invalid group: ECMA-262 has no (?flags), (?P<..>), (?>..) or (?#..) syntax"
                )
        else:
            self.groups += 1
            index = self.groups
        body = self._disjunction()
        if self._peek_char() != ")":
            raise self._error("unterminated group")
        self.pos += 1
        return _Group(index, body)

    def _group_name(self) -> str:
        """``RegExpIdentifierName`` then ``>`` (the ``<`` is already consumed)."""
        chars: list[str] = []
        while True:
            cp = self._peek()
            if cp is None:
                raise self._error("unterminated group name")
            if cp == 0x3E:  # ">"
                self.pos += 1
                break
            if cp == 0x5C:  # "\u" escape
                self.pos += 1
                if self._peek_char() != "u":
                    raise self._error("invalid escape in a group name")
                self.pos += 1
                cp = self._unicode_escape()
            else:
                self.pos += 1
            ch = chr(cp)
            ok = (
                ch in "$_" or ch.isidentifier()
                if not chars
                else ch in "$\u200c\u200d" or ("a" + ch).isidentifier()
            )
            if not ok:
                raise self._error(f"invalid character {ch!r} in a group name")
            chars.append(ch)
        if not chars:
            raise self._error("empty group name")
        return "".join(chars)

    def _atom_escape(self) -> _Term:
        self.pos += 1  # backslash
        c = self._peek_char()
        if not c:
            raise self._error("'\\' at the end of the pattern")
        if "1" <= c <= "9":
            start = self.pos
            while _is_digit(self._peek() or 0):
                self.pos += 1
            number = _decimal(self.cps, start, self.pos)
            if number > self.total_groups:
                digits = "".join(chr(x) for x in self.cps[start : min(self.pos, start + 12)])
                more = "..." if self.pos - start > 12 else ""
                raise self._error(f"\\{digits}{more} names no capturing group")
            ref = _Reference(number, None)
            self.references.append(ref)
            return ref
        if c == "k":
            self.pos += 1
            if self._peek_char() != "<":
                raise self._error("\\k must be followed by <name>")
            self.pos += 1
            ref = _Reference(None, self._group_name())
            self.references.append(ref)
            return ref
        if c in "dDsSwW":
            self.pos += 1
            return _Class(c.isupper(), list(_CLASS_ESCAPES[c.lower()]))
        if c in "pP":
            self.pos += 1
            return _Class(False, [self._property(c == "P")])
        return _Char(self._character_escape(in_class=False))

    def _character_escape(self, *, in_class: bool) -> int:
        c = self._peek_char()
        self.pos += 1
        if c in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[c]
        if c == "c":
            letter = self._peek_char()
            if letter and letter.isascii() and letter.isalpha():
                self.pos += 1
                return ord(letter) % 32
            raise self._error("\\c must be followed by an ASCII letter")
        if c == "0":
            if _is_digit(self._peek() or 0):
                raise self._error("\\0 followed by a digit (octal escapes are not ECMA-262)")
            return 0
        if c == "x":
            if _is_hex(self._peek() or 0) and _is_hex(self._peek(1) or 0):
                value = int(chr(self._take()) + chr(self._take()), 16)
                return value
            raise self._error("\\x must be followed by two hex digits")
        if c == "u":
            return self._unicode_escape()
        if c == "-" and in_class:
            return 0x2D
        if c in _SYNTAX_CHARACTERS or c == "/":
            return ord(c)
        raise self._error(
            f"invalid escape \\{c} (with Unicode semantics only syntax characters and '/'"
            " may be escaped)"
        )

    def _unicode_escape(self) -> int:
        """After ``\\u``: ``{hex}``, or four hex digits (a surrogate pair joined)."""
        if self._peek_char() == "{":
            self.pos += 1
            start = self.pos
            while _is_hex(self._peek() or 0):
                self.pos += 1
            if self.pos == start or self._peek_char() != "}":
                raise self._error("malformed \\u{...} escape")
            value = int("".join(chr(x) for x in self.cps[start : self.pos]), 16)
            self.pos += 1
            if value > _MAX_CODE_POINT:
                raise self._error("\\u{...} beyond U+10FFFF")
        else:
            value = self._hex4()
            if (
                0xD800 <= value <= 0xDBFF
                and self._peek_char() == "\\"
                and self._peek_char(1) == "u"
                and all(_is_hex(self._peek(k) or 0) for k in range(2, 6))
            ):
                saved = self.pos
                self.pos += 2
                low = self._hex4()
                if 0xDC00 <= low <= 0xDFFF:
                    return 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                self.pos = saved
        if 0xD800 <= value <= 0xDFFF:
            self._cannot("it matches a lone surrogate, which no text the engine reads can hold")
        return value

    def _hex4(self) -> int:
        if all(_is_hex(self._peek(k) or 0) for k in range(4)):
            text = "".join(chr(self._take()) for _ in range(4))
            return int(text, 16)
        raise self._error("\\u must be followed by four hex digits or {...}")

    def _property(self, negated: bool) -> _Property:
        """``{Name}`` or ``{Name=Value}`` after ``\\p``/``\\P``, checked against ECMA-262."""
        if self._peek_char() != "{":
            raise self._error("\\p and \\P must be followed by {...}")
        self.pos += 1
        start = self.pos
        while self._peek() is not None and self._peek_char() != "}":
            self.pos += 1
        if self._peek() is None:
            raise self._error("unterminated \\p{...}")
        text = "".join(chr(x) for x in self.cps[start : self.pos])
        self.pos += 1
        if "=" in text:
            name, _, value = text.partition("=")
            if name in _CATEGORY_NAMES:
                known = value in _GENERAL_CATEGORY
            elif name in _SCRIPT_NAMES:
                known = value in _SCRIPTS
            else:
                raise PatternError(f"\\p{{{text}}}: {name!r} is not an ECMA-262 property name")
        else:
            value = text
            known = value in _GENERAL_CATEGORY or value in _BINARY_PROPERTIES
        if not known:
            raise PatternError(
                f"\\p{{{text}}} is not an ECMA-262 property (names are case-sensitive, and a"
                " script needs sc= or scx=)"
            )
        if value in _ENGINE_LACKS:
            self._cannot(f"\\p{{{text}}} is ECMA-262 but the engine has no table for it")
        return _Property(negated, text)

    def _class(self) -> _Class:
        self.pos += 1  # "["
        negated = self._peek_char() == "^"
        if negated:
            self.pos += 1
        items: list[_ClassItem] = []
        while True:
            c = self._peek_char()
            if not c:
                raise self._error("unterminated character class")
            if c == "]":
                self.pos += 1
                return _Class(negated, items)
            first = self._class_atom()
            if self._peek_char() == "-" and self._peek_char(1) not in ("]", ""):
                self.pos += 1
                second = self._class_atom()
                if isinstance(first, tuple) or isinstance(second, tuple):
                    raise self._error("a class escape cannot be the end of a range")
                if first > second:
                    raise self._error("range out of order in character class")
                items.append((first, second))
            elif isinstance(first, tuple):
                items.extend(first)
            else:
                items.append((first, first))

    def _class_atom(self) -> int | tuple[_ClassItem, ...]:
        c = self._peek_char()
        if c != "\\":
            return self._take()
        self.pos += 1
        c = self._peek_char()
        if not c:
            raise self._error("'\\' at the end of the pattern")
        if c == "b":
            self.pos += 1
            return 0x08
        if c in "dDsSwW":
            self.pos += 1
            ranges = _CLASS_ESCAPES[c.lower()]
            return tuple(_complement(ranges)) if c.isupper() else ranges
        if c in "pP":
            self.pos += 1
            return (self._property(c == "P"),)
        if "1" <= c <= "9" or c == "k":
            raise self._error(f"\\{c} is not allowed in a character class")
        return self._character_escape(in_class=True)


def _complement(ranges: tuple[_Range, ...]) -> list[_Range]:
    out: list[_Range] = []
    previous = 0
    for low, high in ranges:
        if low > previous:
            out.append((previous, low - 1))
        previous = high + 1
    if previous <= _MAX_CODE_POINT:
        out.append((previous, _MAX_CODE_POINT))
    return out
