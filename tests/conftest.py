"""Settings for the whole test run."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

from hypothesis import settings

# CI (CI=true) runs the property tests derandomized: a fixed sequence of examples, so a
# submission's verdict does not depend on which random cases one run happened to draw.
# Local runs stay random and keep finding new cases (and remember them in .hypothesis/).
settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# MCP_PROTO_JSON=json runs the suite on the standard json module alone, as an install
# without the "fast" extra would (`make test` runs the core's tests both ways).
if os.environ.get("MCP_PROTO_JSON"):
    from mcp_proto import jsonrpc

    jsonrpc.set_json_backend(os.environ["MCP_PROTO_JSON"])

# mcp-proto remembers the deprecation notices it showed in $XDG_STATE_HOME/mcp-proto/
# (issue 24 G): the suite's CLI runs (in process and as subprocesses, which inherit the
# environment) use a fresh folder of their own, never the user's, and every run starts
# with nothing remembered.
_STATE = tempfile.mkdtemp(prefix="mcp-proto-test-state-")
os.environ["XDG_STATE_HOME"] = _STATE
atexit.register(shutil.rmtree, _STATE, True)
