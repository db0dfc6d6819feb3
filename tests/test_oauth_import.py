"""OAuth costs nothing to a client that does not use it (issue 21 item 7): importing a
shell loads neither ``mcp_proto.oauth`` nor JOSE, and importing ``mcp_proto.oauth``
loads no JOSE library nor ``cryptography`` until a ``JoseKey`` is made. Asserted on the
modules loaded, never on time."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("joserfc", "jwt", "cryptography")


def loaded_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return set(json.loads(out.stdout))


@pytest.mark.parametrize("shell", ["mcp_io_sync", "mcp_io_trio"])
def test_a_shell_loads_no_oauth_and_no_jose(shell: str) -> None:
    loaded = loaded_after(f"import {shell}")
    assert not [m for m in loaded if m.startswith("mcp_proto.oauth")]
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]


def test_the_oauth_core_loads_jose_only_for_a_key() -> None:
    loaded = loaded_after("import mcp_proto.oauth, mcp_io_common.oauth_storage")
    assert not [m for m in loaded if m.split(".")[0] in HEAVY]
    loaded = loaded_after("import mcp_proto.oauth as o\no.JoseKey.generate('ES256')")
    assert "joserfc" in loaded
