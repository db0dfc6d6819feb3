"""mcp_io_sync: the blocking shell of mcp-proto (pipes, processes, threads).

from mcp_io_sync import connect

with connect("python server.py") as client:
    print([t.name for t in client.list_tools()])
    print(client.call_tool("echo", {"text": "hi"}))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_io_common.lazy import SHELL_EXPORTS, shell_lazy
from mcp_proto import __version__ as __version__  # (one version: the distribution's)
from mcp_proto import deprecations as deprecations
from mcp_proto._util import export_order as _export_order
from mcp_proto.exports import *  # noqa: F403 (errors, value types, results, config helpers)
from mcp_proto.exports import __all__ as __all__  # (for mypy: those names are exported)

from ._client import Client as Client
from ._connect import connect as connect
from ._connect import create_client as create_client
from ._stdio import StdioServer as StdioServer

# The names all of mcp-proto exports (mcp_proto.exports), then this shell's own.
__all__ = sorted([*__all__, *SHELL_EXPORTS], key=_export_order)

if TYPE_CHECKING:
    from mcp_proto.modern.cache import CacheInfo as CacheInfo
    from mcp_proto.modern.headers import header_params as header_params
    from mcp_proto.modern.mrtr import InputRequiredWait as InputRequiredWait

    from ._listen import Subscription as Subscription
    from ._oauth import BrowserOAuth as BrowserOAuth
    from ._oauth import oauth_client as oauth_client
else:  # the 2026-07-28 revision's names load at first use, not with the package
    __getattr__ = shell_lazy(__name__)
