"""List the tools of any MCP server: a command line or a URL.

    python examples/server_tools.py python examples/demo_server.py
    python examples/server_tools.py npx -y @modelcontextprotocol/server-everything
    MCP_BEARER_TOKEN=... python examples/server_tools.py https://example.com/mcp

``mcp_io_sync.connect`` takes either: a command line is started as a stdio server, a URL
is tried as Streamable HTTP, then HTTP+SSE. A token in ``MCP_BEARER_TOKEN`` is sent as
``Authorization: Bearer ...`` to a URL (``examples/run_all.py`` sets it from
``MCP_SERVER_TOKEN`` or ``ZAPIER_MCP_TOKEN``). Prints one line per tool, then
``✅ server-tools: N tools``.
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any

from mcp_io_sync import connect


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    target = argv[0] if len(argv) == 1 else shlex.join(argv)
    options: dict[str, Any] = {}
    token = os.environ.get("MCP_BEARER_TOKEN")
    if token and "://" in target:
        options["headers"] = {"Authorization": f"Bearer {token}"}
    with connect(target, **options) as client:
        tools = client.list_tools()
        for tool in tools:
            about = (tool.description or "").strip().splitlines()
            print(f"  {tool.name}: {about[0] if about else ''}")
        server = client.servers[0]
        print(f"✅ server-tools: {len(tools)} tools from {server.name} ({server.protocol_version})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
