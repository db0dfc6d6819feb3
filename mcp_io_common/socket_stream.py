"""What both shells' lean plain-TCP streams share (``_pool._FastStream`` in each shell):
a raw non-blocking socket, a read tried before any wait, httpcore's errors, and
httpcore's ``get_extra_info``. Waiting until the socket is ready is the shell's (a
``poll`` in the blocking shell, ``trio.lowlevel.wait_readable`` in the Trio shell), and
so is writing (the blocking shell holds writes back while the pool is busy; see
``mcp_io_sync/_pool.py``).
"""

from __future__ import annotations

import select
import socket
from typing import Any

import httpcore

__all__ = ["SocketStreamBase"]


class SocketStreamBase:
    """A connected non-blocking socket, read without waiting first; a shell's stream
    adds the waits. ``_sock`` is the socket (closed by the shell's ``close``/``aclose``)."""

    _sock: socket.socket
    # For is_readable only (a poll object the shell waits with may be set to POLLOUT):
    # select() fails on descriptors >= 1024.
    _readable: select.poll

    def _setup(self, sock: socket.socket) -> None:
        sock.setblocking(False)
        self._sock = sock
        self._readable = select.poll()
        self._readable.register(sock.fileno(), select.POLLIN)

    def _recv(self, max_bytes: int) -> bytes | None:
        """What the socket holds now, up to ``max_bytes`` (``b""``: the peer closed it),
        or ``None``: nothing yet, wait until it is readable.

        Raises:
            httpcore.ReadError: the socket failed (reset, closed under us).
        """
        try:
            return self._sock.recv(max_bytes)
        except BlockingIOError:
            return None
        except OSError as exc:
            raise httpcore.ReadError(str(exc)) from exc

    def get_extra_info(self, info: str) -> Any:
        """httpcore's ``NetworkStream.get_extra_info`` for a plain TCP socket."""
        sock = self._sock
        if info == "socket":
            return sock
        if info == "is_readable":  # an idle keep-alive socket readable = closed by the peer
            # A closed descriptor polls as POLLNVAL: readable, so never reused.
            return sock.fileno() == -1 or bool(self._readable.poll(0))
        if info == "client_addr":
            return sock.getsockname()
        if info == "server_addr":
            return sock.getpeername()
        return None
