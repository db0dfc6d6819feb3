"""A transparent HTTP tap for tests: a recording reverse proxy in front of a real server.

    with http_tap(peer) as tap:          # peer: an http_peers.Peer (or any base URL)
        connect(tap.url)                 # the same path as peer.url, through the tap
        tap.recorder.posts("initialize") # every request exactly as the client sent it
        tap.answered[req.seq]            # when the server's response head came back

Every request the client sends is recorded at arrival (``RecordedRequest.t``, the body
complete; hostile_http's recorder), forwarded at once to the upstream server on a
connection of its own, and the upstream response is streamed back byte for byte (an SSE
stream stays open as long as the server keeps it). ``answered[seq]`` is the
``time.monotonic()`` at which the server's response head reached the tap, before the
client gets it.

So the order in which messages reach the server is on the record: a request recorded
(``t``) after ``answered`` of another reached the server after the server had answered
that one. Redirects and endpoints are not rewritten: a server announcing a relative
endpoint (both real HTTP+SSE servers in tests/servers do) keeps the client on the tap.
"""

from __future__ import annotations

import contextlib
import http.client
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import hostile_http

__all__ = ["HttpTap", "http_tap"]

#: Headers that belong to one hop (RFC 9110 § 7.6.1), never forwarded as they are.
_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "host"}
)
UPSTREAM_TIMEOUT = 120.0


class HttpTap(hostile_http.HostileHTTPServer):
    """hostile_http's server loop (h11, a thread per connection, its recorder) with a
    dispatch that forwards to ``upstream`` instead of answering."""

    def __init__(self, upstream: str) -> None:
        super().__init__("ok")
        split = urlsplit(upstream)
        assert split.hostname is not None and split.port is not None, upstream
        self.upstream_host = split.hostname
        self.upstream_port = split.port
        self.answered: dict[int, float] = {}
        self._upstreams: set[http.client.HTTPConnection] = set()
        self._up_lock = threading.Lock()

    def stop(self) -> None:
        # Streams the upstream keeps open would hold their threads: close them first.
        with self._up_lock:
            ups = list(self._upstreams)
        for up in ups:
            with contextlib.suppress(OSError):
                if up.sock is not None:
                    up.sock.shutdown(2)
        super().stop()

    def dispatch(self, ex: hostile_http.Exchange) -> None:
        req = ex.req
        headers = {k: v for k, v in req.headers if k not in _HOP and k != "content-length"}
        up = http.client.HTTPConnection(
            self.upstream_host, self.upstream_port, timeout=UPSTREAM_TIMEOUT
        )
        with self._up_lock:
            self._upstreams.add(up)
        try:
            try:
                up.request(req.method, req.target, body=req.body or None, headers=headers)
                resp = up.getresponse()
            except OSError as exc:
                self.recorder.note(f"upstream failed: {exc!r}")
                ex.respond_text(502, f"tap: upstream failed: {exc!r}")
                return
            self.answered[req.seq] = time.monotonic()
            out = [
                (k, v)
                for k, v in resp.getheaders()
                if k.lower() not in _HOP or k.lower() == "content-length"
            ]
            ex._head(resp.status, out)
            while True:
                try:
                    data = resp.read1(65536)
                except (OSError, http.client.HTTPException):
                    # The upstream broke off mid-body (a stream it closed at shutdown,
                    # say): so does the tap, without a terminating chunk.
                    ex.drop()
                    return
                if not data:
                    break
                ex.write(data)
            if resp.length:  # the upstream ended before its Content-Length: so do we
                ex.drop()
                return
            ex.end()
        finally:
            with self._up_lock:
                self._upstreams.discard(up)
            up.close()

    def wire(self, path_prefix: str = "") -> list[hostile_http.RecordedRequest]:
        """The POSTs (messages) in arrival order, optionally only those under a path."""
        return [r for r in self.recorder.posts() if r.path.startswith(path_prefix)]


class TapPeer(str):
    """The tap's base URL; ``url``: the upstream peer's endpoint, through the tap."""

    url: str
    tap: HttpTap

    def __new__(cls, base: str, url: str, tap: HttpTap) -> TapPeer:
        self = super().__new__(cls, base)
        self.url = url
        self.tap = tap
        return self

    @property
    def recorder(self) -> Any:
        return self.tap.recorder

    @property
    def answered(self) -> dict[int, float]:
        return self.tap.answered


@contextlib.contextmanager
def http_tap(peer: Any) -> Iterator[TapPeer]:
    """A tap in front of ``peer`` (its base URL; ``peer.url`` gives the path)."""
    base = str(peer)
    tap = HttpTap(base).start()
    try:
        path = urlsplit(getattr(peer, "url", base)).path
        yield TapPeer(tap.url_base, tap.url_base + path, tap)
    finally:
        tap.stop()
