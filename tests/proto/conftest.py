"""The pure tests' shared setup."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcp_proto import deprecations


@pytest.fixture(autouse=True)
def _notices_due() -> Iterator[None]:
    """Every test starts with every deprecation notice due (issue 22 item 7): the
    process's ledger is the one piece of process-wide state the core keeps (DEP-9), and
    a test's notices must not depend on which tests ran before it."""
    deprecations.reset()
    yield
