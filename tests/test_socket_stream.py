"""What both shells' lean plain-TCP streams share (``mcp_io_common.socket_stream``): a
read tried without waiting, httpcore's errors, and ``is_readable`` for the pool's check
of an idle keep-alive connection, on a real socket pair."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpcore
import pytest

from mcp_io_common.socket_stream import SocketStreamBase


class _Stream(SocketStreamBase):
    def __init__(self, sock: socket.socket) -> None:
        self._setup(sock)


@pytest.fixture
def pair() -> Iterator[tuple[_Stream, socket.socket]]:
    ours, peer = socket.socketpair()
    try:
        yield _Stream(ours), peer
    finally:
        ours.close()
        peer.close()


def test_a_read_does_not_wait_nothing_yet_is_none(
    pair: tuple[_Stream, socket.socket],
) -> None:
    stream, peer = pair
    assert stream._sock.getblocking() is False
    assert stream._recv(1024) is None
    assert stream.get_extra_info("is_readable") is False
    peer.sendall(b"abc")
    assert stream.get_extra_info("is_readable") is True
    assert stream._recv(2) == b"ab"
    assert stream._recv(1024) == b"c"
    assert stream._recv(1024) is None


def test_the_peer_closing_reads_as_empty_and_readable(
    pair: tuple[_Stream, socket.socket],
) -> None:
    stream, peer = pair
    peer.close()
    assert stream.get_extra_info("is_readable") is True  # an idle one: never reused
    assert stream._recv(1024) == b""


def test_a_closed_socket_is_httpcores_read_error_and_readable(
    pair: tuple[_Stream, socket.socket],
) -> None:
    stream, _peer = pair
    stream._sock.close()
    with pytest.raises(httpcore.ReadError):
        stream._recv(1024)
    assert stream.get_extra_info("is_readable") is True


def test_extra_info_is_httpcores(pair: tuple[_Stream, socket.socket]) -> None:
    stream, _peer = pair
    assert stream.get_extra_info("socket") is stream._sock
    assert stream.get_extra_info("client_addr") == stream._sock.getsockname()
    assert stream.get_extra_info("server_addr") == stream._sock.getpeername()
    assert stream.get_extra_info("ssl_object") is None
