"""Fetching and reading the official JSON-Schema-Test-Suite (never vendored).

The suite ships in the ``jsonschema`` sdist (folder ``json/``). The first run downloads
that sdist from PyPI with pip, checks its SHA-256, and unpacks ``json/`` into the pytest
cache (``.pytest_cache/d/json-schema-test-suite``; ``tests/.cache/`` when the cache
plugin is off). Later runs reuse it.

``conftest.py`` turns every test of the suite into one pytest item (``suite_test``):
the required tests of draft-07, 2019-09 and 2020-12, plus the optional ECMA-262 regex
files.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

SUITE_DISTRIBUTION = "jsonschema"
SUITE_VERSION = "4.26.0"
SUITE_SHA256 = "0c26707e2efad8aa1bfc5b7ce170f3fccc2e4918ff85989ba9ffa9facb2be326"
DRAFTS = ("draft7", "draft2019-09", "draft2020-12")
OPTIONAL_FILES = ("ecmascript-regex.json", "non-bmp-regex.json")
REMOTE_BASE = "http://localhost:1234/"


@dataclass(frozen=True)
class SuiteTest:
    draft: str
    file: str  # "ref.json" or "optional/ecmascript-regex.json"
    case_index: int
    case: str  # the case's description
    schema: Any
    test: str  # the test's description
    data: Any
    valid: bool

    @property
    def optional(self) -> bool:
        return self.file.startswith("optional/")

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.draft, self.file, self.case_index)


def _cache_dir(config: pytest.Config) -> Path:
    cache = getattr(config, "cache", None)
    if cache is not None:
        return Path(cache.mkdir("json-schema-test-suite"))
    path = Path(__file__).resolve().parent.parent / ".cache" / "json-schema-test-suite"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _safe_members(archive: tarfile.TarFile, prefix: str) -> list[tarfile.TarInfo]:
    members = []
    for member in archive.getmembers():
        name = member.name
        if not name.startswith(prefix) or ".." in Path(name).parts or name.startswith("/"):
            continue
        if not (member.isfile() or member.isdir()):
            continue
        members.append(member)
    return members


def fetch_suite(config: pytest.Config) -> Path:
    """The suite's ``json/`` folder, downloading and unpacking it on first use."""
    base = _cache_dir(config)
    target = base / f"{SUITE_DISTRIBUTION}-{SUITE_VERSION}"
    if (target / "json" / "tests").is_dir():
        return target / "json"
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        try:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--no-deps",
                    "--no-binary",
                    ":all:",
                    f"{SUITE_DISTRIBUTION}=={SUITE_VERSION}",
                    "-d",
                    tmp,
                ],
                check=True,
                timeout=600,
                capture_output=True,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            stderr = getattr(exc, "stderr", b"") or b""
            raise pytest.UsageError(
                "could not download the JSON-Schema-Test-Suite (the jsonschema"
                f" {SUITE_VERSION} sdist) from PyPI: {stderr.decode(errors='replace')[-500:]}"
            ) from exc
        (sdist,) = Path(tmp).glob(f"{SUITE_DISTRIBUTION}-{SUITE_VERSION}.tar.gz")
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
        if digest != SUITE_SHA256:
            raise pytest.UsageError(f"unexpected SHA-256 {digest} for {sdist.name}")
        unpacked = Path(tmp) / "unpacked"
        prefix = f"{SUITE_DISTRIBUTION}-{SUITE_VERSION}/json/"
        with tarfile.open(sdist) as archive:
            members = _safe_members(archive, prefix)
            if hasattr(tarfile, "data_filter"):
                archive.extractall(unpacked, members=members, filter="data")
            else:  # pragma: no cover - Python < 3.11.4
                archive.extractall(unpacked, members=members)  # members checked above
        try:
            os.replace(unpacked / f"{SUITE_DISTRIBUTION}-{SUITE_VERSION}", target)
        except OSError:
            if not (target / "json" / "tests").is_dir():  # not a concurrent winner
                raise
            shutil.rmtree(unpacked, ignore_errors=True)
    return target / "json"


_LOADED: dict[str, Any] = {}


def suite_root(config: pytest.Config) -> Path:
    if "root" not in _LOADED:
        _LOADED["root"] = fetch_suite(config)
    root: Path = _LOADED["root"]
    return root


def load_tests(root: Path) -> list[SuiteTest]:
    out: list[SuiteTest] = []
    for draft in DRAFTS:
        folder = root / "tests" / draft
        files = sorted(p.name for p in folder.glob("*.json"))
        files += [f"optional/{name}" for name in OPTIONAL_FILES]
        for file in files:
            cases = json.loads((folder / file).read_text(encoding="utf-8"))
            for ci, case in enumerate(cases):
                for test in case["tests"]:
                    out.append(
                        SuiteTest(
                            draft,
                            file,
                            ci,
                            case["description"],
                            case["schema"],
                            test["description"],
                            test["data"],
                            test["valid"],
                        )
                    )
    return out


def load_remotes(root: Path, draft: str) -> dict[str, Any]:
    """``remotes/`` as URI -> document: the shared files and the draft's own folder.

    TEST-ONLY: these documents reach the validator through ``compile(resources=...)``,
    in-process; the product never passes resources and never fetches anything.
    """
    remotes: dict[str, Any] = {}
    folder = root / "remotes"
    for path in sorted(folder.rglob("*.json")):
        relative = path.relative_to(folder).as_posix()
        top = relative.split("/", 1)[0]
        if top.startswith("draft") and top != draft:
            continue  # another draft's documents (and draft-next / draft3)
        remotes[REMOTE_BASE + relative] = json.loads(path.read_text(encoding="utf-8"))
    return remotes
