"""``mcp_io_common.http11.Http11``: the client side of one plain HTTP/1.1 keep-alive
connection, without I/O. Bytes in, bytes and events out, as the pools of both shells
drive it (``_plain.PlainConnection``); the errors are httpcore's, which the shells map
to the machine's failure kinds."""

from __future__ import annotations

import httpcore
import pytest

from mcp_io_common.http11 import END, MAX_HEAD, Http11

HEAD = [(b"Host", b"h"), (b"Content-Length", b"2")]


def started(body: bytes = b"{}") -> tuple[Http11, bytes]:
    http = Http11()
    headers = [(b"Host", b"h"), (b"Content-Length", b"%d" % len(body))]
    return http, http.request(b"POST", b"/mcp", headers, body)


def body_of(http: Http11) -> list[bytes]:
    out: list[bytes] = []
    while True:
        chunk = http.chunk()
        if chunk is END:
            return out
        assert isinstance(chunk, bytes), chunk
        out.append(chunk)


def test_a_request_is_one_write_holding_head_and_body() -> None:
    _, data = started(b'{"a":1}')
    assert data == b'POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 7\r\n\r\n{"a":1}'


def test_a_get_has_no_body() -> None:
    data = Http11().request(b"GET", b"/mcp", [(b"Host", b"h")], None)
    assert data == b"GET /mcp HTTP/1.1\r\nHost: h\r\n\r\n"


def test_head_needs_data_until_the_blank_line_and_keeps_the_header_case() -> None:
    http, _ = started()
    assert http.head() is None
    for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n":
        http.receive(bytes([byte]))
        assert http.head() is None
    http.receive(b"\r\n{}")
    assert http.head() == (200, [(b"Content-Type", b"application/json"), (b"Content-Length", b"2")])
    assert body_of(http) == [b"{}"]


def test_informational_responses_are_skipped() -> None:
    http, _ = started()
    http.receive(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
    assert http.head() == (202, [(b"Content-Length", b"0")])
    assert http.chunk() is END


def test_a_chunked_body_comes_in_pieces_then_the_connection_is_reused() -> None:
    http, _ = started()
    http.receive(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
    assert http.head() is not None
    assert http.chunk() == b"hello"
    assert http.chunk() is None  # the next chunk is not here yet
    http.receive(b"1\r\n!\r\n0\r\n\r\n")
    assert body_of(http) == [b"!"]
    assert http.reuse()
    # The next request on the same connection.
    assert http.request(b"POST", b"/mcp", HEAD, b"{}").startswith(b"POST /mcp HTTP/1.1")
    http.receive(b"HTTP/1.1 204 No Content\r\n\r\n")
    assert http.head() == (204, [])
    assert http.chunk() is END and http.reuse()


def test_held_is_what_was_received_and_not_handed_out() -> None:
    # (The blocking shell reads on in place when what is held is the body's end.)
    http, _ = started()
    http.receive(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n")
    assert http.head() is not None
    assert http.chunk() == b"ab"
    assert http.held() == b"\r\n0\r\n\r\n"
    assert http.chunk() is END
    assert http.held() == b""


def test_connection_close_or_an_unread_body_is_never_reused() -> None:
    http, _ = started()
    http.receive(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
    assert http.head() is not None and http.chunk() is END
    assert not http.reuse()
    http, _ = started()
    http.receive(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
    assert http.head() is not None and http.chunk() == b"abc"
    assert not http.reuse()  # the body did not end


def test_a_server_closing_before_the_response_is_httpcores_error() -> None:
    http, _ = started()
    with pytest.raises(httpcore.RemoteProtocolError, match="without sending a response"):
        http.receive(b"")


def test_a_server_closing_in_the_body_is_a_protocol_error() -> None:
    http, _ = started()
    http.receive(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
    assert http.head() is not None and http.chunk() == b"abc"
    http.receive(b"")
    with pytest.raises(httpcore.RemoteProtocolError):
        http.chunk()


@pytest.mark.parametrize(
    "answer",
    [
        b"garbage\r\n\r\n",
        b"HTTP/1.1 abc OK\r\n\r\n",
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n",
    ],
)
def test_a_broken_or_unasked_head_is_a_protocol_error(answer: bytes) -> None:
    http, _ = started()
    http.receive(answer)
    with pytest.raises(httpcore.RemoteProtocolError):
        http.head()


def test_a_head_larger_than_the_bound_is_refused() -> None:
    http, _ = started()
    http.receive(b"HTTP/1.1 200 OK\r\n")
    filler = b"X-Pad: " + b"a" * 1000 + b"\r\n"
    with pytest.raises(httpcore.RemoteProtocolError):
        for _ in range(MAX_HEAD // len(filler) + 2):
            http.receive(filler)
            assert http.head() is None


def test_a_body_that_contradicts_its_content_length_is_a_local_error() -> None:
    with pytest.raises(httpcore.LocalProtocolError):
        Http11().request(b"POST", b"/", [(b"Host", b"h"), (b"Content-Length", b"5")], b"{}")
