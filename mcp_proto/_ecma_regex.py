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
"""

from __future__ import annotations

from typing import NamedTuple, Union

__all__ = ["MAX_PATTERN_LENGTH", "PatternError", "Translation", "translate"]

MAX_PATTERN_LENGTH = 10_000
"""Longest ``pattern`` accepted, in code points (SCH-9)."""

_MAX_CODE_POINT = 0x10FFFF
_MAX_REPEAT = 100_000  # larger counts are refused up front (the engine would refuse or stall)

_SYNTAX_CHARACTERS = frozenset("^$\\.*+?()[]{}|")
# Characters Rust's regex syntax lets (or makes) us escape with a backslash.
_RUST_META = frozenset("\\.+*?()|[]{}^$#&-~")

_Range = tuple[int, int]

_DIGIT: tuple[_Range, ...] = ((0x30, 0x39),)
_WORD: tuple[_Range, ...] = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
# ECMA-262 WhiteSpace and LineTerminator: \t \n \v \f \r, space, NBSP, OGHAM SPACE MARK,
# U+2000..U+200A, LS, PS, NNBSP, MMSP, IDEOGRAPHIC SPACE, BOM.
_SPACE: tuple[_Range, ...] = (
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
)
_LINE_TERMINATORS: tuple[_Range, ...] = ((0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029))
_CLASS_ESCAPES: dict[str, tuple[_Range, ...]] = {"d": _DIGIT, "w": _WORD, "s": _SPACE}
_CONTROL_ESCAPES = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}

# --- Unicode property names ECMA-262 accepts (exact spelling, no loose matching) ----------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_GENERAL_CATEGORY = _words(
    """C Other Cc Control cntrl Cf Format Cn Unassigned Co Private_Use Cs Surrogate
    L Letter LC Cased_Letter Ll Lowercase_Letter Lm Modifier_Letter Lo Other_Letter
    Lt Titlecase_Letter Lu Uppercase_Letter M Mark Combining_Mark Mc Spacing_Mark
    Me Enclosing_Mark Mn Nonspacing_Mark N Number Nd Decimal_Number digit Nl Letter_Number
    No Other_Number P Punctuation punct Pc Connector_Punctuation Pd Dash_Punctuation
    Pe Close_Punctuation Pf Final_Punctuation Pi Initial_Punctuation Po Other_Punctuation
    Ps Open_Punctuation S Symbol Sc Currency_Symbol Sk Modifier_Symbol Sm Math_Symbol
    So Other_Symbol Z Separator Zl Line_Separator Zp Paragraph_Separator
    Zs Space_Separator"""
)
_BINARY_PROPERTIES = _words(
    """ASCII ASCII_Hex_Digit AHex Alphabetic Alpha Any Assigned Bidi_Control Bidi_C
    Bidi_Mirrored Bidi_M Case_Ignorable CI Cased Changes_When_Casefolded CWCF
    Changes_When_Casemapped CWCM Changes_When_Lowercased CWL Changes_When_NFKC_Casefolded
    CWKCF Changes_When_Titlecased CWT Changes_When_Uppercased CWU Dash
    Default_Ignorable_Code_Point DI Deprecated Dep Diacritic Dia Emoji Emoji_Component EComp
    Emoji_Modifier EMod Emoji_Modifier_Base EBase Emoji_Presentation EPres
    Extended_Pictographic ExtPict Extender Ext Grapheme_Base Gr_Base Grapheme_Extend Gr_Ext
    Hex_Digit Hex IDS_Binary_Operator IDSB IDS_Trinary_Operator IDST ID_Continue IDC ID_Start
    IDS Ideographic Ideo Join_Control Join_C Logical_Order_Exception LOE Lowercase Lower Math
    Noncharacter_Code_Point NChar Pattern_Syntax Pat_Syn Pattern_White_Space Pat_WS
    Quotation_Mark QMark Radical Regional_Indicator RI Sentence_Terminal STerm Soft_Dotted SD
    Terminal_Punctuation Term Unified_Ideograph UIdeo Uppercase Upper Variation_Selector VS
    White_Space space XID_Continue XIDC XID_Start XIDS"""
)
# Script values (long and short names, PropertyValueAliases.txt up to Unicode 16.0).
_SCRIPTS = _words(
    """Adlm Adlam Aghb Caucasian_Albanian Ahom Arab Arabic Armi Imperial_Aramaic Armn Armenian
    Avst Avestan Bali Balinese Bamu Bamum Bass Bassa_Vah Batk Batak Beng Bengali Bhks
    Bhaiksuki Bopo Bopomofo Brah Brahmi Brai Braille Bugi Buginese Buhd Buhid Cakm Chakma
    Cans Canadian_Aboriginal Cari Carian Cham Cher Cherokee Chrs Chorasmian Copt Coptic Qaac
    Cpmn Cypro_Minoan Cprt Cypriot Cyrl Cyrillic Deva Devanagari Diak Dives_Akuru Dogr Dogra
    Dsrt Deseret Dupl Duployan Egyp Egyptian_Hieroglyphs Elba Elbasan Elym Elymaic Ethi
    Ethiopic Gara Garay Geor Georgian Glag Glagolitic Gong Gunjala_Gondi Gonm Masaram_Gondi
    Goth Gothic Gran Grantha Grek Greek Gujr Gujarati Gukh Gurung_Khema Guru Gurmukhi Hang
    Hangul Hani Han Hano Hanunoo Hatr Hatran Hebr Hebrew Hira Hiragana Hluw
    Anatolian_Hieroglyphs Hmng Pahawh_Hmong Hmnp Nyiakeng_Puachue_Hmong Hrkt
    Katakana_Or_Hiragana Hung Old_Hungarian Ital Old_Italic Java Javanese Kali Kayah_Li Kana
    Katakana Kawi Khar Kharoshthi Khmr Khmer Khoj Khojki Kits Khitan_Small_Script Knda Kannada
    Krai Kirat_Rai Kthi Kaithi Lana Tai_Tham Laoo Lao Latn Latin Lepc Lepcha Limb Limbu Lina
    Linear_A Linb Linear_B Lisu Lyci Lycian Lydi Lydian Mahj Mahajani Maka Makasar Mand
    Mandaic Mani Manichaean Marc Marchen Medf Medefaidrin Mend Mende_Kikakui Merc
    Meroitic_Cursive Mero Meroitic_Hieroglyphs Mlym Malayalam Modi Mong Mongolian Mroo Mro
    Mtei Meetei_Mayek Mult Multani Mymr Myanmar Nagm Nag_Mundari Nand Nandinagari Narb
    Old_North_Arabian Nbat Nabataean Newa Nkoo Nko Nshu Nushu Ogam Ogham Olck Ol_Chiki Onao
    Ol_Onal Orkh Old_Turkic Orya Oriya Osge Osage Osma Osmanya Ougr Old_Uyghur Palm Palmyrene
    Pauc Pau_Cin_Hau Perm Old_Permic Phag Phags_Pa Phli Inscriptional_Pahlavi Phlp
    Psalter_Pahlavi Phnx Phoenician Plrd Miao Prti Inscriptional_Parthian Rjng Rejang Rohg
    Hanifi_Rohingya Runr Runic Samr Samaritan Sarb Old_South_Arabian Saur Saurashtra Sgnw
    SignWriting Shaw Shavian Shrd Sharada Sidd Siddham Sind Khudawadi Sinh Sinhala Sogd
    Sogdian Sogo Old_Sogdian Sora Sora_Sompeng Soyo Soyombo Sund Sundanese Sunu Sunuwar Sylo
    Syloti_Nagri Syrc Syriac Tagb Tagbanwa Takr Takri Tale Tai_Le Talu New_Tai_Lue Taml Tamil
    Tang Tangut Tavt Tai_Viet Telu Telugu Tfng Tifinagh Tglg Tagalog Thaa Thaana Thai Tibt
    Tibetan Tirh Tirhuta Tnsa Tangsa Todr Todhri Toto Tutg Tulu_Tigalari Ugar Ugaritic Vaii
    Vai Vith Vithkuqi Wara Warang_Citi Wcho Wancho Xpeo Old_Persian Xsux Cuneiform Yezi
    Yezidi Yiii Yi Zanb Zanabazar_Square Zinh Inherited Qaai Zyyy Common Zzzz Unknown"""
)
_CATEGORY_NAMES = frozenset({"General_Category", "gc"})
_SCRIPT_NAMES = frozenset({"Script", "sc", "Script_Extensions", "scx"})
# Valid ECMA-262 properties the engine has no table for.
_ENGINE_LACKS = frozenset({"Changes_When_NFKC_Casefolded", "CWKCF", "Zzzz", "Unknown"})
# General_Category=Surrogate: no Unicode scalar value (all the engine can see) is in it.
_SURROGATE_CATEGORY = frozenset({"Cs", "Surrogate"})


class PatternError(ValueError):
    """A ``pattern`` that cannot be used.

    ``unsupported`` is False when the pattern is not ECMA-262 at all, True when it is
    ECMA-262 but uses a construct the engine cannot reproduce with ECMA-262's meaning.
    """

    def __init__(self, message: str, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.unsupported = unsupported


class Translation(NamedTuple):
    source: str
    """The pattern as the schema wrote it."""
    target: str
    """The same pattern in the engine's syntax."""
    backtracking: bool
    """Needs the backtracking engine (lookaround or back-reference): its matches are
    bounded by the backtrack limit; the other patterns run in linear time."""
    cost: int
    """A rough estimate of the engine's work to compile the pattern (about 0.2 µs a
    unit): repetitions multiply, Unicode classes and properties weigh most."""


# --- syntax tree --------------------------------------------------------------------------


class _Property:
    __slots__ = ("negated", "text")

    def __init__(self, negated: bool, text: str) -> None:
        self.negated = negated
        self.text = text  # "Name" or "Name=Value", as written (checked against ECMA-262)


_ClassItem = Union[_Range, _Property]


class _Disjunction:
    __slots__ = ("alternatives",)

    def __init__(self, alternatives: list[_Alternative]) -> None:
        self.alternatives = alternatives


class _Alternative:
    __slots__ = ("terms",)

    def __init__(self, terms: list[_Term]) -> None:
        self.terms = terms


class _Char:
    __slots__ = ("cp",)

    def __init__(self, cp: int) -> None:
        self.cp = cp


class _Dot:
    __slots__ = ()


class _Class:
    __slots__ = ("items", "negated")

    def __init__(self, negated: bool, items: list[_ClassItem]) -> None:
        self.negated = negated
        self.items = items


class _Assertion:
    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind  # "^", "$", "b" or "B"


class _Look:
    __slots__ = ("behind", "body", "negative")

    def __init__(self, behind: bool, negative: bool, body: _Disjunction) -> None:
        self.behind = behind
        self.negative = negative
        self.body = body


class _Group:
    __slots__ = ("body", "index")

    def __init__(self, index: int | None, body: _Disjunction) -> None:
        self.index = index  # None: non-capturing
        self.body = body


class _Quantifier:
    __slots__ = ("atom", "lazy", "maximum", "minimum")

    def __init__(self, atom: _Term, minimum: int, maximum: int | None, lazy: bool) -> None:
        self.atom = atom
        self.minimum = minimum
        self.maximum = maximum
        self.lazy = lazy


class _Reference:
    __slots__ = ("always_empty", "index", "name")

    def __init__(self, index: int | None, name: str | None) -> None:
        self.index = index
        self.name = name
        self.always_empty = False


_Term = Union[_Char, _Dot, _Class, _Assertion, _Look, _Group, _Quantifier, _Reference, _Disjunction]
_Node = Union[_Term, _Alternative]


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
