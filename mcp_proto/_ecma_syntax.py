"""The vocabulary of :mod:`mcp_proto._ecma_regex`: ECMA-262's character sets and the
Unicode property names it accepts (exact spelling), the translator's error and result
types, and the syntax tree the parser (:mod:`mcp_proto._ecma_parser`) builds and the
emitter writes out. Pure code."""

from __future__ import annotations

from typing import NamedTuple, Union

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
