"""``python -m mcp_io_sync.cli``: the ``mcp-proto`` command."""

import sys

from . import main

sys.exit(main())
