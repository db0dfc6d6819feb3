"""A real forward proxy for the shell suites: PyPI ``proxy.py`` (the ``test`` extra) run as
its console script ``proxy``, one acceptor and one worker thread, and what went through it
read back from its access log (tests/shells/test_websocket_proxy.py, test_http_custom.py)."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path
from typing import Any

from ._http_support import http_peers
from .conftest import text_of

PROXY = Path(sys.executable).parent / "proxy"
USER, PASSWORD = "mcp-user", "s3cr3t:pass"  # a colon in the password: percent-encoded
# proxy.py writes a request's line when it ends (a tunnel's when it closes, a moment after
# the client's close): the log is polled this long before a test says it was not there.
LOG_WAIT = 20.0
# An access log line: "... access_log:393 - 127.0.0.1:49912 - POST 127.0.0.1:43491/mcp - ...".
_REQUEST = re.compile(r" - [A-Z]+ (\S+) - ")
_CONNECT = re.compile(r" - CONNECT (\S+) - ")
SKIP_REASON = f"{PROXY} is missing: `make install` (the test extra)"


class Proxy:
    def __init__(self, peer: http_peers.Peer, scheme: str = "http") -> None:
        self.peer = peer
        self.url = f"{scheme}://127.0.0.1:{peer.port}"

    def with_credentials(self, user: str, password: str) -> str:
        scheme, rest = self.url.split("://")
        return f"{scheme}://{user}:{password.replace(':', '%3A')}@{rest}"

    def log(self) -> str:
        return Path(self.peer.log_path).read_text(errors="replace")

    def connects(self) -> list[str]:
        """The ``CONNECT`` targets in the access log (the tunnels), in order."""
        return [m.group(1) for m in _CONNECT.finditer(self.log())]

    def requests_to(self, target: str) -> int:
        """How many requests the access log names for ``target`` (host:port): tunnels
        (``CONNECT host:port``) and forwarded requests (``GET host:port/path``)."""
        named = (match.group(1) for match in _REQUEST.finditer(self.log()))
        return sum(1 for name in named if name == target or name.startswith(target + "/"))

    def saw(self, target: str, more_than: int = 0) -> bool:
        """Whether the access log names ``target`` more than ``more_than`` times (polled:
        a line is written when its request or tunnel ends)."""
        end = time.monotonic() + LOG_WAIT
        while self.requests_to(target) <= more_than:
            if time.monotonic() > end:
                return False
            time.sleep(0.05)
        return True


def proxy_py(*extra: str) -> Any:
    """A context manager: proxy.py on a free port, ``extra`` on its command line."""
    return http_peers._process_peer(
        lambda port: [
            str(PROXY),
            "--hostname",
            "127.0.0.1",
            "--port",
            str(port),
            "--num-acceptors",
            "1",
            "--num-workers",
            "1",
            "--threaded",
            *extra,
        ],
        path="",
        kind="proxy.py",
        mode="proxy",
        timeout=http_peers.SDK_STARTUP_TIMEOUT,
    )


def target(url: str) -> str:
    """``host:port`` of ``url``, as the access log names it."""
    return url.split("://", 1)[1].split("/", 1)[0]


async def echo(c: Any) -> str:
    return text_of(await c.call_tool("echo", {"text": "via proxy"}))
