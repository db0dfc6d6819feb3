"""Fuzz target: skill listings and SKILL.md files (``mcp_proto.skills``, SEP-2640).

Feeds, structure-aware: ``skills/list`` results and entries built from the keys of
SEP-2640 (``uri``, ``frontmatter``, ``resources`` with ``digest`` and ``size``) and
SKILL.md texts (YAML-ish frontmatter blocks with anchors, tags, quotes, block scalars,
tabs); JSON text is used directly, other bytes also as a SKILL.md.

Contract: ``parse_skill_entry`` / ``parse_skills_list`` return or raise
``RemoteProtocolError``; ``parse_frontmatter`` returns a dict or raises
``FrontmatterError``; ``frontmatter_matches`` returns a list or raises
``SkillVerificationError``; ``verify_file`` passes exactly when size and digest match.
"""

from __future__ import annotations

import hashlib
from typing import Any

from _fuzzlib import Reader, Target, json_input, json_value

from mcp_proto._frontmatter import FrontmatterError, parse_frontmatter
from mcp_proto.errors import RemoteProtocolError, SkillVerificationError
from mcp_proto.skills import (
    SkillFile,
    frontmatter_matches,
    parse_skill_entry,
    parse_skills_list,
    verify_file,
)

KEYS = ("uri", "frontmatter", "resources", "digest", "size", "name", "description",
        "metadata", "skills", "nextCursor", "license")  # fmt: skip
STRINGS = (
    "skill://pdf-processing/SKILL.md", "skill://pdf-processing/references/FORMS.md",
    "skill://x/README.md", "dynamic", "sha256:" + "0" * 64, "sha256:ABC", "pdf-processing",
    0, -1, 10**400, True, None,
)  # fmt: skip
YAML_BITS = ("name: ", "description: ", "metadata:\n", "  ", "- ", "&a ", "*a", "!!str ",
             "'", '"', "\\u00e9", "|-\n", ">\n", "#", "\t", "[", "]", "{", "}", ", ", "\n",
             "? ", "---\n", "...\n", "9" * 80)  # fmt: skip


def _document(reader: Reader) -> Any:
    files = [
        {"uri": reader.choice(STRINGS[:3]), "digest": reader.choice(STRINGS[4:6]),
         "size": reader.choice((0, 5, -1, True, 10**400))}
        for _ in range(reader.below(3))
    ]  # fmt: skip
    entry: Any = {
        "uri": reader.choice(STRINGS[:3]),
        "frontmatter": json_value(reader, KEYS, STRINGS, max_depth=2),
        "resources": files if reader.flag() else reader.choice(STRINGS),
    }
    if reader.flag():
        entry = {"skills": [entry, json_value(reader, KEYS, STRINGS, max_depth=2)]}
    return entry


def _skill_md(data: bytes) -> str:
    reader = Reader(data)
    body = "".join(reader.choice(YAML_BITS) + reader.text(6) for _ in range(reader.below(24)))
    return f"---\n{body}\n---\nbody\n"


def check(data: bytes) -> None:
    document = json_input(data, _document)
    entry = None
    for parse in (parse_skill_entry, parse_skills_list):
        try:
            value = parse(document)
        except RemoteProtocolError as exc:
            assert str(exc)
            continue
        entry = value if not isinstance(value, tuple) else (value[0] or [None])[0]
    texts = [_skill_md(data), data.decode("utf-8", "replace")]
    for text in texts:
        try:
            assert isinstance(parse_frontmatter(text), dict)
        except FrontmatterError:
            pass
        if entry is not None:
            try:
                assert isinstance(frontmatter_matches(entry, text), list)
            except SkillVerificationError as exc:
                assert exc.reason == "frontmatter"
    content = texts[0].encode()
    good = SkillFile(
        "skill://a/SKILL.md", "sha256:" + hashlib.sha256(content).hexdigest(), len(content)
    )
    verify_file(good, content)
    for bad in (content + b"x", content[:-1] + b"?"):
        try:
            verify_file(good, bad)
        except SkillVerificationError:
            continue
        raise AssertionError("a changed file passed verification")


TARGET = Target(
    name="skills",
    description="skills/list entries and SKILL.md frontmatter -> parsers and verification",
    check=check,
    seeds=(
        b'{"uri":"skill://pdf-processing/SKILL.md","frontmatter":{"name":"pdf-processing",'
        b'"description":"d"},"resources":[{"uri":"skill://pdf-processing/SKILL.md",'
        b'"digest":"sha256:' + b"0" * 64 + b'","size":3}]}',
        b'{"skills":[{"uri":"skill://x/SKILL.md","frontmatter":{},"resources":"dynamic"}],'
        b'"nextCursor":""}',
        b"---\nname: a\nmetadata:\n  k: &x v\n  j: *x\nl: |+\n  t\n\n---\n",
        b"\x00\x05\x02\x09\x11\x03",
    ),
    max_len=4096,
)

if __name__ == "__main__":
    from run import main

    main(["skills"])
