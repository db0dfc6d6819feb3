"""The environment's proxy variables, read for both shells (the rules that use them are
the core's: mcp_proto/proxy_env.py; the core reads no environment)."""

from __future__ import annotations

import os

from mcp_proto.proxy_env import proxy_variables

__all__ = ["proxy_environment"]


def proxy_environment() -> dict[str, str]:
    """``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY`` (either case) and
    ``REQUEST_METHOD`` as the process has them now (read when a client is built)."""
    return proxy_variables(os.environ)
