"""Protocol revisions and what each one has, as data (not if-chains)."""

from __future__ import annotations

from typing import Final, Literal

from ._record import Record

__all__ = [
    "ERAS",
    "FEATURES",
    "LATEST_LEGACY",
    "LEGACY_VERSIONS",
    "MODERN_VERSIONS",
    "Era",
    "Features",
    "features_of",
]


#: Handshake-era revisions, newest first. The client offers the first in ``initialize``
#: and accepts any of them in the answer (2025-11-25, Lifecycle § Version Negotiation).
LEGACY_VERSIONS: Final = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_LEGACY: Final = LEGACY_VERSIONS[0]
#: Stateless revisions (``server/discover``, per-request ``_meta``).
MODERN_VERSIONS: Final = ("2026-07-28",)

#: The two eras of the protocol (the seeds' names): ``"legacy"``, the handshake era
#: (``initialize``, the revisions of :data:`LEGACY_VERSIONS`), and ``"modern"``, the
#: stateless 2026-07-28 era (``server/discover``, :data:`MODERN_VERSIONS`). A
#: ``Literal``: ``mypy --strict`` refuses a comparison with any other string. A
#: connection decides its era (LIFE-4); operations learn it from it.
Era = Literal["modern", "legacy"]
#: Every era, the newer first.
ERAS: Final[tuple[Era, ...]] = ("modern", "legacy")


class Features(Record):
    """What a negotiated revision allows on the wire."""

    __slots__ = (
        "audio",
        "batches",
        "completions",
        "elicitation",
        "elicitation_url",
        "sampling_tools",
        "structured_content_object_only",
        "structured_output",
    )
    #: JSON-RPC batches may be received (2025-03-26 only added them; 2025-06-18 removed).
    batches: bool
    #: ``structuredContent`` / ``outputSchema`` exist (2025-06-18+).
    structured_output: bool
    #: Elicitation exists (2025-06-18+); URL mode from 2025-11-25.
    elicitation: bool
    elicitation_url: bool
    #: Audio content and completions (2025-03-26+).
    audio: bool
    completions: bool
    #: Tool-use in sampling (SEP-1577, 2025-11-25).
    sampling_tools: bool
    #: Only an object counts as structured content (SCH-18): true up to 2025-11-25.
    structured_content_object_only: bool

    def __init__(
        self,
        batches: bool,
        structured_output: bool,
        elicitation: bool,
        elicitation_url: bool,
        audio: bool,
        completions: bool,
        sampling_tools: bool,
        structured_content_object_only: bool,
    ) -> None:
        _set = object.__setattr__
        _set(self, "batches", batches)
        _set(self, "structured_output", structured_output)
        _set(self, "elicitation", elicitation)
        _set(self, "elicitation_url", elicitation_url)
        _set(self, "audio", audio)
        _set(self, "completions", completions)
        _set(self, "sampling_tools", sampling_tools)
        _set(self, "structured_content_object_only", structured_content_object_only)


FEATURES: Final[dict[str, Features]] = {
    "2024-11-05": Features(False, False, False, False, False, False, False, True),
    "2025-03-26": Features(True, False, False, False, True, True, False, True),
    "2025-06-18": Features(False, True, True, False, True, True, False, True),
    "2025-11-25": Features(False, True, True, True, True, True, True, True),
    "2026-07-28": Features(False, True, True, True, True, True, True, False),
}


def features_of(version: str) -> Features:
    """Feature set of a known revision; ``KeyError`` never escapes (unknown → latest)."""
    return FEATURES.get(version, FEATURES[LATEST_LEGACY])
