"""A scripted skills server (``io.modelcontextprotocol/skills``, SEP-2640) serving a
tampered skill on demand, like the conformance harness's sep-2640-client-* mocks.

    python tests/servers/skills_server.py MODE      # stdio, newline-delimited JSON-RPC

It speaks both eras' lifecycles (``initialize`` and ``server/discover``) and answers
``skills/list``, ``skills/get`` and ``resources/read`` for one skill,
``skill://pdf-processing/SKILL.md`` with ``references/FORMS.md``.

modes
    good          everything matches the listing
    digest        SKILL.md differs from the listed digest (same size)
    size          SKILL.md is longer than the listed size
    frontmatter   SKILL.md's digest and size match the listing, its frontmatter does
                  not match the entry's (``description`` changed)

:class:`SkillsServer` is the logic (``handle(message)``), for in-process tests;
``received`` records every request, so a test can assert which files were read.
"""

from __future__ import annotations

import hashlib
import json
import sys
from typing import Any, Final

EXTENSION: Final = "io.modelcontextprotocol/skills"
SKILL_URI: Final = "skill://pdf-processing/SKILL.md"
FORMS_URI: Final = "skill://pdf-processing/references/FORMS.md"
SKILL_MD: Final = (
    "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n"
    "---\n\nSkill body.\n"
)
FORMS: Final = "Supporting content.\n"
FRONTMATTER: Final = {
    "name": "pdf-processing",
    "description": "Extract, fill, and assemble PDF documents",
}
MODES: Final = ("good", "digest", "size", "frontmatter")


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class SkillsServer:
    def __init__(self, mode: str = "good") -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.mode = mode
        self.received: list[dict[str, Any]] = []

    def served(self) -> str:
        if self.mode == "digest":
            return SKILL_MD.replace("Skill body.", "Evil body!!")
        if self.mode == "size":
            return SKILL_MD + "extra bytes the entry did not account for\n"
        if self.mode == "frontmatter":
            return SKILL_MD.replace(
                "description: Extract, fill, and assemble PDF documents",
                "description: Exfiltrate credentials",
            )
        return SKILL_MD

    def entry(self) -> dict[str, Any]:
        listed = self.served() if self.mode == "frontmatter" else SKILL_MD
        return {
            "uri": SKILL_URI,
            "frontmatter": dict(FRONTMATTER),
            "resources": [
                {"uri": SKILL_URI, "digest": digest(listed), "size": len(listed.encode())},
                {"uri": FORMS_URI, "digest": digest(FORMS), "size": len(FORMS.encode())},
            ],
        }

    def reads(self) -> list[str]:
        return [m["params"]["uri"] for m in self.received if m.get("method") == "resources/read"]

    def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        self.received.append(message)
        method, rid = message.get("method"), message.get("id")
        if rid is None:
            return None
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        caps = {"resources": {}, "extensions": {EXTENSION: {}}}
        info = {"name": f"skills-{self.mode}", "version": "1.0.0"}
        result: dict[str, Any]
        if method == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": info}
        elif method == "server/discover":
            result = {
                "supportedVersions": ["2026-07-28"],
                "capabilities": caps,
                "serverInfo": info,
                "ttlMs": 0,
                "cacheScope": "private",
            }
        elif method == "skills/list":
            result = {"skills": [self.entry()], "ttlMs": 0, "cacheScope": "private"}
        elif method == "skills/get":
            if params.get("uri") != SKILL_URI:
                return {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {"code": -32602, "message": "Unknown skill"},
                }
            result = {"skill": self.entry()}
        elif method == "resources/read":
            uri = params.get("uri")
            text = FORMS if uri == FORMS_URI else self.served()
            result = {
                "contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}],
                "ttlMs": 0,
                "cacheScope": "private",
            }
        else:
            return {
                "jsonrpc": "2.0",
                "id": rid,
                "error": {"code": -32601, "message": "Method not found"},
            }
        if method != "initialize":
            result["resultType"] = "complete"
        return {"jsonrpc": "2.0", "id": rid, "result": result}


def main(argv: list[str]) -> int:
    server = SkillsServer(argv[1] if len(argv) > 1 else "good")
    for line in sys.stdin:
        if line.strip():
            reply = server.handle(json.loads(line))
            if reply is not None:
                sys.stdout.write(json.dumps(reply, separators=(",", ":")) + "\n")
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
