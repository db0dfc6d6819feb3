"""The official JSON-Schema-Test-Suite against ``mcp_proto.schema`` (SCH-4..SCH-16).

Required tests of draft-07, 2019-09 and 2020-12 must all pass. The optional ECMA-262
regex files must pass too, except the cases listed, each with its reason, in
``ecmascript_regex_exceptions.json`` (those are skipped, naming case and reason).

Every schema is first compiled the way the client compiles a server's schema: no
resources, offline. A schema that needs ``http://localhost:1234/...`` (the suite's
remotes) must then fail as *external* (or, for a custom meta-schema, as an unsupported
dialect) — never fetched — and is compiled again with the suite's ``remotes/`` handed
over in-process through the test-only ``resources=`` registry.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from _schema_suite import REMOTE_BASE, SuiteTest, load_remotes, load_tests

from mcp_proto import schema

DIALECTS = {
    "draft7": schema.DIALECT_DRAFT_07,
    "draft2019-09": schema.DIALECT_2019_09,
    "draft2020-12": schema.DIALECT_2020_12,
}
ENGINE_DRAFTS = {
    "draft7": jsonschema_rs.Draft7,
    "draft2019-09": jsonschema_rs.Draft201909,
    "draft2020-12": jsonschema_rs.Draft202012,
}
EXCEPTIONS_FILE = Path(__file__).with_name("ecmascript_regex_exceptions.json")
EXCEPTIONS: list[dict[str, str]] = json.loads(EXCEPTIONS_FILE.read_text(encoding="utf-8"))[
    "exceptions"
]


def exception_for(test: SuiteTest) -> dict[str, str] | None:
    for entry in EXCEPTIONS:
        if (
            entry["draft"] in (test.draft, "*")
            and entry["file"] == test.file
            and entry["case"] == test.case
            and entry["test"] in (test.test, "*")
        ):
            return entry
    return None


_REMOTES: dict[str, dict[str, Any]] = {}


def remotes_for(root: Path, draft: str) -> dict[str, Any]:
    """The remotes a registry of ``draft`` can hold (TEST-ONLY, in-process).

    A document written for a later draft (say, an embedded ``$id`` under ``$defs``
    referenced from another remote) cannot be read under draft-07; such documents are
    left out, as the suite's own runners do.
    """
    if draft in _REMOTES:
        return _REMOTES[draft]
    remotes = load_remotes(root, draft)
    while True:
        try:
            jsonschema_rs.Registry(list(remotes.items()), draft=ENGINE_DRAFTS[draft])
            break
        except ValueError as exc:
            missing = re.search(r"Resource '([^']*)'", str(exc))
            assert missing is not None, exc
            name = missing.group(1).rsplit("/", 1)[-1]
            unreadable = [uri for uri, doc in remotes.items() if name in json.dumps(doc)]
            assert unreadable, exc
            for uri in unreadable:
                del remotes[uri]
    _REMOTES[draft] = remotes
    return remotes


@cache
def _validator(draft: str, file: str, case_index: int, root: Path) -> schema.Validator:
    case = next(t for t in load_cached(root) if t.key == (draft, file, case_index))
    dialect = DIALECTS[draft]
    try:
        return schema.compile(case.schema, default_dialect=dialect)
    except (schema.ExternalReferenceError, schema.UnsupportedDialectError) as exc:
        # The product path refused it; only a schema that needs the suite's remotes may.
        needed = getattr(exc, "reference", None) or getattr(exc, "dialect", None)
        assert isinstance(needed, str), exc
        assert needed.startswith(REMOTE_BASE), f"refused for another reason: {exc}"
    return schema.compile(case.schema, default_dialect=dialect, resources=remotes_for(root, draft))


@cache
def load_cached(root: Path) -> tuple[SuiteTest, ...]:
    return tuple(load_tests(root))


def test_suite(suite_test: SuiteTest, suite_dir: Path) -> None:
    exception = exception_for(suite_test) if suite_test.optional else None
    if exception is not None:
        pytest.skip(f"ECMA-262 exception: {exception['case']}: {exception['reason']}")
    validator = _validator(suite_test.draft, suite_test.file, suite_test.case_index, suite_dir)
    got = validator.is_valid(suite_test.data)
    assert got is suite_test.valid, (
        f"{suite_test.case} / {suite_test.test}: expected"
        f" {'valid' if suite_test.valid else 'invalid'}"
    )
    if not suite_test.valid:
        violations = validator.violations(suite_test.data)
        assert violations and all(v.reason for v in violations)


def test_every_listed_exception_exists(suite_dir: Path) -> None:
    """No stale entries: each exception names a real optional regex case."""
    tests = load_cached(suite_dir)
    for entry in EXCEPTIONS:
        assert entry["reason"].strip(), entry
        assert any(t.optional and exception_for(t) is entry for t in tests), entry


def test_suite_counts(suite_dir: Path) -> None:
    """The suite really ran: the required tests of the three drafts are all there."""
    tests = load_cached(suite_dir)
    for draft in DIALECTS:
        required = [t for t in tests if t.draft == draft and not t.optional]
        regex = [t for t in tests if t.draft == draft and t.file.endswith("ecmascript-regex.json")]
        assert len(required) > 800, draft
        assert len(regex) > 50, draft


def test_remote_references_are_refused_without_resources(suite_dir: Path) -> None:
    """refRemote.json on the product path: every case needing a remote is external."""
    for draft, dialect in DIALECTS.items():
        cases = json.loads(
            (suite_dir / "tests" / draft / "refRemote.json").read_text(encoding="utf-8")
        )
        refused = 0
        for case in cases:
            if REMOTE_BASE not in json.dumps(case["schema"]):
                continue
            try:
                schema.compile(case["schema"], default_dialect=dialect)
            except schema.ExternalReferenceError as exc:
                assert exc.reference is not None and exc.reference.startswith(REMOTE_BASE)
                refused += 1
        assert refused >= 8, draft
