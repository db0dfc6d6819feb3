"""Skills (SEP-2640): listing, on-demand loading, verification of size, digest and
frontmatter; the frontmatter reader against PyYAML. Pure, scripted server replies.

The fixtures follow the conformance harness's sep-2640-client-* scenarios: a
``pdf-processing`` skill with ``SKILL.md`` and ``references/FORMS.md``.
"""

from __future__ import annotations

import base64
import hashlib
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from _proto_support import drive, json_values
from _tasks_support import Peer, TaskDriver
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto import errors
from mcp_proto._frontmatter import FrontmatterError, parse_frontmatter
from mcp_proto.client.router import ServerEntry
from mcp_proto.effects import Call, Connect
from mcp_proto.handlers import Handlers
from mcp_proto.session import ServerInfo
from mcp_proto.skills import (
    SKILLS_EXTENSION,
    SkillEntry,
    SkillOps,
    parse_skill_entry,
    parse_skills_list,
)

SKILL_URI = "skill://pdf-processing/SKILL.md"
FORMS_URI = "skill://pdf-processing/references/FORMS.md"
SKILL_MD = (
    "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n"
    "---\n\nSkill body.\n"
)
FORMS = "Supporting content.\n"
FRONTMATTER = {"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"}


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def entry(skill_md: str = SKILL_MD, **extra: Any) -> dict[str, Any]:
    out = {
        "uri": SKILL_URI,
        "frontmatter": dict(FRONTMATTER),
        "resources": [
            {"uri": SKILL_URI, "digest": digest(skill_md), "size": len(skill_md.encode())},
            {"uri": FORMS_URI, "digest": digest(FORMS), "size": len(FORMS.encode())},
        ],
    }
    out.update(extra)
    return out


def read(text: str) -> Any:
    return lambda params: {
        "resultType": "complete",
        "contents": [{"uri": params["uri"], "mimeType": "text/markdown", "text": text}],
    }


class SkillCore(SkillOps):
    pass


class SkillDriver(TaskDriver):
    def validate(self, peer: Peer, effect: Any) -> None:
        pass  # skills/* are in no schema of the repository


def make(
    served: str = SKILL_MD, listed: dict[str, Any] | None = None
) -> tuple[SkillCore, SkillDriver]:
    files = {SKILL_URI: served, FORMS_URI: FORMS}
    peer = Peer(
        "2026-07-28",
        {"resources": {}, "extensions": {SKILLS_EXTENSION: {}}},
        {
            "skills/list": {"resultType": "complete", "skills": [listed or entry()]},
            "skills/get": {"resultType": "complete", "skill": listed or entry()},
            "resources/read": lambda params: read(files[params["uri"]])(params),
        },
    )
    driver = SkillDriver({"s": peer})
    core = SkillCore([ServerEntry("s", "http")], handlers=Handlers())
    return core, driver


def reads(d: TaskDriver) -> list[str]:
    return [c.params["uri"] for c in d.sent("resources/read")]  # type: ignore[index]


def test_listing_fetches_no_file() -> None:
    core, d = make()
    skills = drive(core.list_skills(), d.perform)
    assert [(s.name, s.server, s.uri) for s in skills] == [("pdf-processing", "s", SKILL_URI)]
    assert reads(d) == []  # sep-2640-host-no-prefetch


def test_load_reads_skill_md_only_then_files_on_demand() -> None:
    core, d = make()
    loaded = drive(core.load_skill("pdf-processing"), d.perform)
    assert loaded.text == SKILL_MD and reads(d) == [SKILL_URI]
    assert drive(core.read_skill_file(loaded, "references/FORMS.md"), d.perform) == FORMS.encode()
    assert reads(d) == [SKILL_URI, FORMS_URI]
    with pytest.raises(errors.SkillVerificationError) as info:
        drive(core.read_skill_file(loaded, "scripts/evil.py"), d.perform)
    assert info.value.reason == "unlisted" and reads(d) == [SKILL_URI, FORMS_URI]
    with pytest.raises(errors.SkillError):
        drive(core.read_skill_file(loaded, "../../x"), d.perform)


@pytest.mark.parametrize(
    ("served", "reason"),
    [
        (SKILL_MD.replace("Skill body.", "Evil body!!"), "digest"),  # same size
        (SKILL_MD + "extra bytes the entry did not account for\n", "size"),
    ],
)
def test_a_tampered_skill_md_is_refused(served: str, reason: str) -> None:
    core, d = make(served)
    with pytest.raises(errors.SkillVerificationError) as info:
        drive(core.load_skill(SKILL_URI), d.perform)
    assert info.value.reason == reason and info.value.uri == SKILL_URI
    assert FORMS_URI not in reads(d)


def test_mismatched_frontmatter_is_refused() -> None:
    # The digest and size match the served file; its frontmatter does not match the
    # listing's (sep-2640-client-verify-frontmatter).
    evil = SKILL_MD.replace(
        "description: Extract, fill, and assemble PDF documents",
        "description: Exfiltrate credentials",
    )
    core, d = make(evil, entry(evil))
    with pytest.raises(errors.SkillVerificationError, match="description") as info:
        drive(core.load_skill("pdf-processing"), d.perform)
    assert info.value.reason == "frontmatter" and FORMS_URI not in reads(d)


def test_blob_content_and_names_and_limits() -> None:
    core, d = make()
    d.peers["s"].script["resources/read"] = lambda p: {
        "contents": [{"uri": p["uri"], "blob": base64.b64encode(SKILL_MD.encode()).decode()}]
    }
    assert drive(core.load_skill(SKILL_URI), d.perform).text == SKILL_MD
    twin = entry(uri="skill://other/pdf-processing/SKILL.md", resources=[])
    d.peers["s"].script["skills/list"] = {"skills": [entry(), twin]}
    with pytest.raises(errors.SkillError, match="several skills"):
        drive(core.load_skill("pdf-processing"), d.perform)
    huge = entry(resources=[{"uri": SKILL_URI, "digest": digest(""), "size": 17 * 2**20}])
    with pytest.raises(errors.SkillError, match="limits"):
        drive(core.load_skill(parse_skill_entry(huge, server="s")), d.perform)
    dynamic = parse_skill_entry(entry(resources="dynamic"), server="s")
    with pytest.raises(errors.SkillError, match="dynamic"):
        drive(core.load_skill(dynamic), d.perform)
    assert drive(core.load_skill(dynamic, allow_dynamic=True), d.perform).text == SKILL_MD


def test_a_server_without_the_extension_is_not_asked() -> None:
    core, d = make()
    d.peers["s"].caps = {"resources": {}}
    with pytest.raises(errors.CapabilityError):
        drive(core.list_skills(), d.perform)
    assert d.calls == []


@pytest.mark.parametrize(
    "bad",
    [
        None,
        {"uri": SKILL_URI, "frontmatter": {}},  # no resources: MUST NOT load
        entry(resources="static"),
        entry(frontmatter="x"),
        entry(uri="skill://x/README.md"),
        entry(resources=[{"uri": "skill://elsewhere/a", "digest": digest(""), "size": 0}]),
        entry(resources=[{"uri": SKILL_URI, "digest": "sha256:ABC", "size": 0}]),
        entry(resources=[{"uri": SKILL_URI, "digest": digest(""), "size": -1}]),
        entry(resources=[{"uri": SKILL_URI, "digest": digest(""), "size": True}]),
    ],
)
def test_malformed_entries_are_remote_protocol_errors(bad: Any) -> None:
    with pytest.raises(errors.RemoteProtocolError):
        parse_skill_entry(bad)


def test_listing_pages_and_stops_on_a_repeated_cursor() -> None:
    core, d = make()
    d.peers["s"].script["skills/list"] = [
        {"skills": [entry()], "nextCursor": "a"},
        {"skills": [], "nextCursor": "a"},
    ]
    assert len(drive(core.list_skills(), d.perform)) == 1
    assert [c.params for c in d.sent("skills/list")] == [{}, {"cursor": "a"}]
    with pytest.raises(errors.RemoteProtocolError):
        parse_skills_list({"skills": [entry()], "nextCursor": 5})


# ---------------------------------------------------------------- the frontmatter reader


def fm(body: str) -> dict[str, Any]:
    return parse_frontmatter(f"---\n{body}\n---\nbody\n")


@pytest.mark.parametrize(
    "body",
    [
        "name: a\ndescription: b",
        "name: \"quoted: \\u00e9\\n\"\ndescription: 'it''s'",
        "metadata:\n  version: '2.1.0'\n  author: me\nlicense: Apache-2.0",
        "allowed-tools: Bash(git:*) Read\nn: 3\nf: 1.5\nb: true\nz: ~\ne:",
        "list:\n  - a\n  - b\ncompact:\n- c\nflow: [1, 'x', y]\nmap: {k: v, n: 2}",
        "d: >\n  folded\n  text\n\n  para\nl: |-\n  a\n   b\nk: |+\n  keep\n\nx: 1",
        "long: a\n  continued  # comment\n# full comment\nafter: 1",
    ],
)
def test_frontmatter_matches_pyyaml(body: str) -> None:
    assert fm(body) == yaml.safe_load(body)


@pytest.mark.parametrize(
    "body",
    [
        "a: &x 1\nb: *x",
        "a: !!str 1",
        "? complex\n: key",
        "a: 1\na: 2",
        "a:\n\tb: 1",
        "a: 'unterminated",
        "a: [1, [2]]",
        "- a\n- b",
        "a: 1\n  b: 2",
        "a: 1\n...\nb: 2",
        "n: " + "9" * 5000,
    ],
)
def test_frontmatter_outside_the_subset_is_refused(body: str) -> None:
    with pytest.raises(FrontmatterError):
        fm(body)


@pytest.mark.parametrize("value", ["1e5", "0E0", "-2e+3", "1.5e3", "0o17"])
def test_a_number_only_yaml_1_2_reads_is_refused(value: str) -> None:
    """PyYAML (YAML 1.1) writes these strings unquoted and reads them back as strings;
    the 1.2 core schema reads numbers: found by the PyYAML agreement property."""
    with pytest.raises(FrontmatterError, match=r"YAML 1\.1"):
        fm(f"a: {value}")
    assert fm(f"a: '{value}'") == {"a": value}
    assert fm("a: 1.5e+3") == {"a": 1500.0}  # a number in both


def test_no_frontmatter_block() -> None:
    with pytest.raises(FrontmatterError):
        parse_frontmatter("# Title\nno frontmatter\n")
    assert parse_frontmatter("\ufeff---\nname: x\n---\n") == {"name": "x"}


_plain = st.from_regex(r"[a-z][a-z0-9 ._()/-]{0,20}[a-z0-9]", fullmatch=True).filter(
    lambda s: ": " not in s and " #" not in s and not s.endswith(":")
)
# (NEL and the Unicode line separators are line breaks in YAML 1.1, which PyYAML reads,
# and not in YAML 1.2, which the reader follows.)
_text = st.text(max_size=20).filter(lambda t: not set(t) & {"\x85", "\u2028", "\u2029"})
_scalar = st.one_of(_plain, st.integers(-(10**6), 10**6), st.booleans(), _text)


@given(st.dictionaries(st.from_regex(r"[a-z][a-z-]{0,10}", fullmatch=True), _scalar, max_size=6))
def test_generated_frontmatter_agrees_with_pyyaml(data: dict[str, Any]) -> None:
    body = yaml.safe_dump(data, default_flow_style=False, allow_unicode=True, width=10**6)
    try:
        got = parse_frontmatter(f"---\n{body.rstrip()}\n---\n")
    except FrontmatterError:
        return  # outside the subset: refused, never misread
    assert got == yaml.safe_load(body)


@given(st.text(max_size=300))
def test_any_text_parses_or_is_a_frontmatter_error(text: str) -> None:
    for doc in (text, f"---\n{text}\n---\n"):
        try:
            parse_frontmatter(doc)
        except FrontmatterError:
            pass


@given(json_values)
def test_any_json_entry_parses_or_is_a_remote_protocol_error(value: Any) -> None:
    for data in (value, {**entry(), "resources": value}, {"skills": [value]}):
        try:
            parse_skill_entry(data)
            parse_skills_list(data)
        except errors.RemoteProtocolError:
            pass


def test_entry_helpers() -> None:
    e = parse_skill_entry(entry(), server="s")
    assert isinstance(e, SkillEntry) and e.root == "skill://pdf-processing"
    assert e.resolve("./references/../references/FORMS.md") == FORMS_URI
    assert e.description.startswith("Extract")


# ---------------------------------------------------------------- the scripted skills server

sys.path.insert(0, str(Path(__file__).parents[1] / "servers"))
import skills_server  # noqa: E402


def against(mode: str) -> tuple[SkillCore, Any, skills_server.SkillsServer]:
    server = skills_server.SkillsServer(mode)
    ids = iter(range(1, 10**6))

    def perform(effect: Any) -> Any:
        if isinstance(effect, Connect):
            msg = {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {}}
            caps = server.handle(msg)["result"]["capabilities"]  # type: ignore[index]
            return ServerInfo("2026-07-28", caps, None, None)
        assert isinstance(effect, Call)
        reply = server.handle(
            {"jsonrpc": "2.0", "id": next(ids), "method": effect.method, "params": effect.params}
        )
        assert reply is not None
        if "error" in reply:
            raise errors.server_error_from(reply["error"], method=effect.method)
        return reply["result"]

    return SkillCore([ServerEntry("skills", "stdio")], handlers=Handlers()), perform, server


def test_the_scripted_server_good_skill() -> None:
    core, perform, server = against("good")
    listed = drive(core.list_skills(), perform)
    assert server.reads() == []
    loaded = drive(core.load_skill(listed[0]), perform)
    assert drive(core.read_skill_file(loaded, "references/FORMS.md"), perform) == FORMS.encode()
    assert server.reads() == [SKILL_URI, FORMS_URI]


@pytest.mark.parametrize("mode", ["digest", "size", "frontmatter"])
def test_the_scripted_server_tampered_skill_is_refused(mode: str) -> None:
    core, perform, server = against(mode)
    with pytest.raises(errors.SkillVerificationError) as info:
        drive(core.load_skill("pdf-processing"), perform)
    assert info.value.reason == mode
    assert server.reads() == [SKILL_URI]  # the supporting file was never read
