"""The deprecation rows that are documentation only (DEP-8, DEP-17): the docs say what
the registry does, and HTTP+SSE is labelled deprecated wherever the docs offer it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_proto import deprecations

ROOT = Path(__file__).resolve().parents[1]


def _read(name: str) -> str:
    return (ROOT / name).read_text()


def _paragraphs(text: str) -> list[str]:
    """Prose paragraphs, table rows and code lines: the units a reader sees at once."""
    units: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines = block.splitlines()
        if any(line.startswith(("|", "```")) for line in lines):
            units.extend(lines)  # a table or a code block: each line stands alone
        else:
            units.append(" ".join(lines))
    return units


# ---------------------------------------------------------------------- DEP-8


def test_earliest_removal_names_a_revision_never_a_date() -> None:
    """DEP-8: no deprecation's "earliest removal" is a date to plan around; the
    2026-07-28 ones wait for the first revision published on or after 2027-07-28."""
    registry = deprecations.registry()
    assert registry
    for key, d in registry.items():
        assert not re.fullmatch(r"\s*\d{4}-\d{2}-\d{2}\s*", d.earliest_removal), key
        if d.deprecated_since == "2026-07-28":
            assert d.earliest_removal == "the first revision published on or after 2027-07-28"


def test_the_docs_say_removal_is_a_revision_and_the_maintainers_decision() -> None:
    usage = " ".join(_read("docs/usage.md").split())
    assert '"Earliest removal" names a revision, not a date' in usage
    assert "first revision published on or after 2027-07-28" in usage
    assert "actual removal is a maintainers' decision" in usage
    source = " ".join(_read("mcp_proto/deprecations.py").split())
    assert '"Earliest removal" names a revision, not a date (DEP-8)' in source


# ---------------------------------------------------------------------- DEP-17

#: A unit of text that offers HTTP+SSE to the reader: a URL ending in /sse, the
#: transport's name in a table, the ``sse`` type of a definition file.
_OFFERS_SSE = re.compile(r"/sse\b|^\|\s*(HTTP\+SSE|`sse`)")


@pytest.mark.parametrize(
    "doc", ["README.md", "docs/http.md", "docs/usage.md", "docs/cli.md", "docs/embedding.md"]
)
def test_every_place_offering_http_sse_says_it_is_deprecated(doc: str) -> None:
    """DEP-17: the detection tables, the transport tables, the definition-file type
    table and the examples label HTTP+SSE deprecated where they offer it."""
    offers = [u for u in _paragraphs(_read(doc)) if _OFFERS_SSE.search(u)]
    assert offers, f"{doc} no longer mentions HTTP+SSE: update this test"
    unlabelled = [u[:120] for u in offers if "deprecated" not in u.lower()]
    assert unlabelled == []


def test_the_http_guide_says_to_prefer_streamable_http() -> None:
    text = _read("docs/http.md")
    rows = [line for line in text.splitlines() if line.startswith("| HTTP+SSE")]
    assert rows and all("prefer Streamable HTTP" in row for row in rows)
    detection = [line for line in text.splitlines() if line.startswith("| path ends `/sse`")]
    assert detection and "prefer Streamable HTTP" in detection[0]
    usage = [line for line in _read("docs/usage.md").splitlines() if line.startswith("| `sse`")]
    assert usage and "prefer Streamable HTTP" in usage[0]
