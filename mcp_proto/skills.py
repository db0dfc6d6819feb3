"""Skills served over MCP (``io.modelcontextprotocol/skills``, SEP-2640), pure.

A server declaring the extension lists its skills with ``skills/list`` (paginated) and
answers ``skills/get`` for one skill by the URI of its ``SKILL.md``; each entry is a
complete manifest: the ``frontmatter`` of the ``SKILL.md`` rendered as JSON and every
file of the skill as ``{uri, digest, size}`` (or ``"dynamic"``). Files are read with
``resources/read``. The host rules this module keeps (SEP-2640 § Integrity and
verification, § Limits, § Names):

- **No prefetch.** Listing reads only the listing. :meth:`SkillOps.load_skill` reads
  the ``SKILL.md`` alone; a supporting file is read when
  :meth:`SkillOps.read_skill_file` asks for it, never before.
- **Verification on read.** A file's byte length must equal the entry's ``size``
  (checked first: "whether or not the host goes on to compute the digest") and its
  SHA-256 the entry's ``digest``; a ``SKILL.md``'s YAML frontmatter must equal the
  entry's ``frontmatter`` field by field. Any mismatch is a
  :class:`~mcp_proto.errors.SkillVerificationError` and the content is not used; a
  file the entry does not list is one too.
- **Limits** (512 files, 16 MiB per skill) are checked from the entry before anything
  is fetched; a ``"dynamic"`` skill (no digests) is loaded only when the caller opts
  in, its frontmatter still compared.
- **Identity** is the pair (server, ``uri``); names may collide and are never resolved
  by guessing.

Not yet reachable from ``Client`` or the CLI (see docs/tasks.md).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping
from typing import Any, Final, Literal, Union

import attrs

from ._frontmatter import FrontmatterError, parse_frontmatter
from ._util import shown
from .client.router import Router
from .effects import Call, Connect, Op
from .errors import (
    CapabilityError,
    RemoteProtocolError,
    SkillError,
    SkillVerificationError,
)
from .session import ServerInfo

__all__ = [
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "SKILLS_EXTENSION",
    "LoadedSkill",
    "SkillEntry",
    "SkillFile",
    "SkillOps",
    "frontmatter_matches",
    "parse_skill_entry",
    "parse_skills_list",
    "verify_file",
]

SKILLS_EXTENSION: Final = "io.modelcontextprotocol/skills"
#: SEP-2640 § Limits: hosts MUST support skills up to these (and may refuse beyond).
MAX_SKILL_FILES: Final = 512
MAX_SKILL_BYTES: Final = 16 * 1024 * 1024
_DIGEST: Final = re.compile(r"sha256:[0-9a-f]{64}")
_MAX_PAGES: Final = 100
_SKILL_MD: Final = "SKILL.md"


@attrs.frozen
class SkillFile:
    """One file of a skill's ``resources``: its URI, ``sha256:`` digest and size."""

    uri: str
    digest: str
    size: int


@attrs.frozen
class SkillEntry:
    """A skill as its server lists it. ``resources`` is the complete file list, or
    ``"dynamic"`` (no digests: content generated on demand)."""

    uri: str
    frontmatter: Mapping[str, Any]
    resources: Union[tuple[SkillFile, ...], Literal["dynamic"]]
    server: str | None = None

    @property
    def name(self) -> str:
        """The frontmatter ``name`` (a label, not an identity: SEP-2640 § Names)."""
        name = self.frontmatter.get("name")
        return name if isinstance(name, str) else ""

    @property
    def description(self) -> str:
        value = self.frontmatter.get("description")
        return value if isinstance(value, str) else ""

    @property
    def root(self) -> str:
        """The skill's directory URI (``SKILL.md`` removed, no trailing slash)."""
        return self.uri[: -len(_SKILL_MD) - 1]

    @property
    def is_dynamic(self) -> bool:
        return self.resources == "dynamic"

    def file(self, uri: str) -> SkillFile | None:
        if self.resources == "dynamic":
            return None
        return next((f for f in self.resources if f.uri == uri), None)

    def resolve(self, path: str) -> str:
        """A relative reference of the ``SKILL.md`` (``references/GUIDE.md``) resolved
        against the skill's root (SEP-2640 § Reading); ``..`` may not leave it."""
        if "://" in path:
            return path
        parts: list[str] = []
        for part in path.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if not parts:
                    raise SkillError(f"{path!r} leaves the skill's directory")
                parts.pop()
            else:
                parts.append(part)
        return self.root + "/" + "/".join(parts)


@attrs.frozen
class LoadedSkill:
    """A loaded skill: its entry (held while acting on the skill) and the verified
    ``SKILL.md`` text. Supporting files are read through
    :meth:`SkillOps.read_skill_file`."""

    entry: SkillEntry
    text: str


# ---------------------------------------------------------------- parsing


def _bad(where: str, problem: str) -> RemoteProtocolError:
    return RemoteProtocolError(f"{where}: {problem}")


def parse_skill_entry(
    data: Any, *, server: str | None = None, where: str = "a skill"
) -> SkillEntry:
    """One ``skills/list`` / ``skills/get`` entry. Malformed (no ``uri``, no
    ``frontmatter`` object, ``resources`` missing or neither a list nor
    ``"dynamic"``, a bad digest or size, a uri that is not a ``.../SKILL.md``, a file
    outside the skill) is a ``RemoteProtocolError``: hosts MUST NOT load it."""
    if not isinstance(data, Mapping):
        raise _bad(where, f"not an object: {shown(data)}")
    uri = data.get("uri")
    if not isinstance(uri, str) or "://" not in uri or not uri.endswith("/" + _SKILL_MD):
        raise _bad(where, f"uri {shown(uri)} is not the URI of a SKILL.md")
    where = f"skill {uri!r}"
    frontmatter = data.get("frontmatter")
    if not isinstance(frontmatter, Mapping):
        raise _bad(where, "frontmatter is missing or not an object")
    raw = data.get("resources")
    resources: Union[tuple[SkillFile, ...], Literal["dynamic"]]
    if raw == "dynamic":
        resources = "dynamic"
    elif isinstance(raw, list):
        files = []
        root = uri[: -len(_SKILL_MD)]
        for i, item in enumerate(raw):
            if not isinstance(item, Mapping):
                raise _bad(where, f"resources[{i}] is not an object")
            f_uri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
            if not isinstance(f_uri, str) or not (f_uri == uri or f_uri.startswith(root)):
                raise _bad(where, f"resources[{i}].uri {shown(f_uri)} is not within the skill")
            if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
                raise _bad(where, f"resources[{i}].digest is not sha256:<64 lowercase hex>")
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise _bad(where, f"resources[{i}].size is not a byte count")
            files.append(SkillFile(f_uri, digest, size))
        if len({f.uri for f in files}) != len(files):
            raise _bad(where, "resources lists a file twice")
        resources = tuple(files)
    else:
        raise _bad(where, "resources is missing or neither a list nor 'dynamic'")
    return SkillEntry(uri, dict(frontmatter), resources, server)


def parse_skills_list(
    result: Any, *, server: str | None = None
) -> tuple[list[SkillEntry], str | None]:
    """One ``skills/list`` page: its entries and ``nextCursor``. A malformed entry
    fails the page (it is a manifest the user may approve: never half-read)."""
    if not isinstance(result, Mapping) or not isinstance(result.get("skills"), list):
        raise _bad("the skills/list result", "skills is missing or not a list")
    cursor = result.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise _bad("the skills/list result", "nextCursor is not a string")
    entries = [
        parse_skill_entry(e, server=server, where=f"skills[{i}]")
        for i, e in enumerate(result["skills"])
    ]
    return entries, cursor or None


# ---------------------------------------------------------------- verification


def verify_file(file: SkillFile, content: bytes) -> None:
    """Size first, then digest (SEP-2640 § Resources, § Integrity)."""
    if len(content) != file.size:
        raise SkillVerificationError(
            f"{file.uri}: {len(content)} bytes read, the listing says {file.size}",
            uri=file.uri,
            reason="size",
        )
    digest = "sha256:" + hashlib.sha256(content).hexdigest()
    if digest != file.digest:
        raise SkillVerificationError(
            f"{file.uri}: the content's digest does not match the listing's",
            uri=file.uri,
            reason="digest",
        )


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        keys = set(a) | set(b)
        return all(_same(a.get(k), b.get(k)) for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def frontmatter_matches(entry: SkillEntry, text: str) -> list[str]:
    """The fields where the ``SKILL.md``'s frontmatter differs from the entry's (a
    missing field reads as null, as in the listing's JSON); raises
    ``SkillVerificationError`` when the frontmatter cannot be read."""
    try:
        parsed = parse_frontmatter(text)
    except FrontmatterError as exc:
        raise SkillVerificationError(
            f"{entry.uri}: frontmatter unreadable: {exc}", uri=entry.uri, reason="frontmatter"
        ) from None
    keys = sorted(set(parsed) | set(entry.frontmatter))
    return [k for k in keys if not _same(parsed.get(k), entry.frontmatter.get(k))]


def _content_bytes(result: Any, uri: str) -> bytes:
    """The raw bytes of a ``resources/read`` result for ``uri`` (text as UTF-8, a blob
    base64-decoded)."""
    contents = result.get("contents") if isinstance(result, Mapping) else None
    if not isinstance(contents, list) or not contents:
        raise RemoteProtocolError(f"resources/read of {uri} returned no contents")
    items = [c for c in contents if isinstance(c, Mapping) and c.get("uri") == uri] or contents
    item = items[0]
    if not isinstance(item, Mapping):
        raise RemoteProtocolError(f"resources/read of {uri}: malformed contents")
    if isinstance(item.get("text"), str):
        return str(item["text"]).encode("utf-8", "surrogatepass")
    if isinstance(item.get("blob"), str):
        try:
            return base64.b64decode(item["blob"], validate=True)
        except (binascii.Error, ValueError):
            raise RemoteProtocolError(f"resources/read of {uri}: blob is not base64") from None
    raise RemoteProtocolError(f"resources/read of {uri}: neither text nor blob")


# ---------------------------------------------------------------- operations


class SkillOps(Router):
    """The skill operations of a client core (a feature class on the router, in the
    style of :class:`~mcp_proto.client.tools.ToolOps`)."""

    def _skills_server(self, server: Any) -> Op[str]:
        owner = self._default_server(server)
        info: ServerInfo = yield Connect(owner)
        if not info.has_capability("extensions", SKILLS_EXTENSION):
            raise CapabilityError(f"server {owner!r} does not offer {SKILLS_EXTENSION}")
        return owner

    def list_skills(self, *, server: Any = None) -> Op[list[SkillEntry]]:
        """Every ``skills/list`` page (a repeated cursor or more than 100 pages stop
        the listing). Reads the listing only: no skill file is fetched (SEP-2640: not
        on connection, not on listing)."""
        owner = yield from self._skills_server(server)
        out: list[SkillEntry] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(_MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else {}
            entries, cursor = parse_skills_list(
                (yield Call(owner, "skills/list", params)), server=owner
            )
            out.extend(entries)
            if cursor is None or cursor in seen:
                return out
            seen.add(cursor)
        return out

    def get_skill(self, uri: str, *, server: Any = None) -> Op[SkillEntry]:
        """``skills/get``: one skill's entry by its ``SKILL.md`` URI, listed or not."""
        owner = yield from self._skills_server(server)
        result = yield Call(owner, "skills/get", {"uri": uri})
        skill = result.get("skill") if isinstance(result, Mapping) else None
        entry = parse_skill_entry(skill, server=owner, where="the skills/get result")
        if entry.uri != uri:
            raise RemoteProtocolError(f"skills/get for {uri} answered about {entry.uri}")
        return entry

    def load_skill(
        self,
        skill: SkillEntry | str,
        *,
        server: Any = None,
        allow_dynamic: bool = False,
    ) -> Op[LoadedSkill]:
        """Load a skill: fetch its ``SKILL.md`` (only that file), verify size, digest
        and frontmatter against the entry, and return it. ``skill`` is an entry (from
        :meth:`list_skills`), a ``SKILL.md`` URI (its entry is fetched with
        ``skills/get``) or a name, looked up in the listing (several skills of that
        name: ``SkillError``, never a guess)."""
        entry = yield from self._entry_for(skill, server)
        owner = entry.server or self._default_server(server)
        if entry.is_dynamic and not allow_dynamic:
            raise SkillError(
                f"skill {entry.uri} is dynamic (no digests to verify it): pass allow_dynamic"
            )
        if entry.resources != "dynamic":
            total = sum(f.size for f in entry.resources)
            if len(entry.resources) > MAX_SKILL_FILES or total > MAX_SKILL_BYTES:
                raise SkillError(
                    f"skill {entry.uri} is over the limits ({len(entry.resources)} files,"
                    f" {total} bytes; at most {MAX_SKILL_FILES} and {MAX_SKILL_BYTES})"
                )
        content = yield from self._read(owner, entry, entry.uri)
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            raise SkillVerificationError(
                f"{entry.uri}: not UTF-8 text", uri=entry.uri, reason="frontmatter"
            ) from None
        differs = frontmatter_matches(entry, text)
        if differs:
            raise SkillVerificationError(
                f"{entry.uri}: the file's frontmatter differs from the listing's in "
                + ", ".join(repr(k) for k in differs[:8]),
                uri=entry.uri,
                reason="frontmatter",
            )
        return LoadedSkill(entry, text)

    def read_skill_file(self, skill: LoadedSkill, path: str) -> Op[bytes]:
        """A supporting file of a loaded skill, on demand: ``path`` is relative to the
        skill's root (or a full URI). Only files the held entry lists are read, each
        verified (an unlisted one is a verification failure: SEP-2640)."""
        entry = skill.entry
        uri = entry.resolve(path)
        owner = entry.server or self._default_server(None)
        return (yield from self._read(owner, entry, uri))

    def _entry_for(self, skill: SkillEntry | str, server: Any) -> Op[SkillEntry]:
        if isinstance(skill, SkillEntry):
            if (
                server is not None
                and skill.server is not None
                and self.select_server(server) != skill.server
            ):
                raise SkillError(f"skill {skill.uri} belongs to server {skill.server!r}")
            return skill
        if not isinstance(skill, str) or not skill:
            raise TypeError("skill must be a SkillEntry, a SKILL.md URI or a name")
        if "://" in skill:
            return (yield from self.get_skill(skill, server=server))
        listed = yield from self.list_skills(server=server)
        named = [e for e in listed if e.name == skill]
        if len(named) > 1:
            uris = ", ".join(e.uri for e in named)
            raise SkillError(f"several skills are named {skill!r} ({uris}): pass the URI")
        if not named:
            raise SkillError(f"no skill named {skill!r} in the server's listing")
        return named[0]

    def _read(self, owner: str, entry: SkillEntry, uri: str) -> Op[bytes]:
        file = entry.file(uri)
        if file is None and not entry.is_dynamic:
            raise SkillVerificationError(
                f"{uri} is not among the files of skill {entry.uri}", uri=uri, reason="unlisted"
            )
        result = yield Call(owner, "resources/read", {"uri": uri})
        content = _content_bytes(result, uri)
        if file is not None:
            verify_file(file, content)
        elif len(content) > MAX_SKILL_BYTES:
            raise SkillError(f"{uri}: more than {MAX_SKILL_BYTES} bytes")
        return content
