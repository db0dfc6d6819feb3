"""HTTP redirects (``mcp_proto.http.redirect_target``, ``connection/_redirects.py``): a
307/308 to the same origin sends the same request again at the new URL (a server
mounted under a path answers ``POST /mcp`` with 307 ``/mcp/``); any other redirect is an
error naming where it pointed. Pure: time is a number."""

from __future__ import annotations

import pytest
from _machine_driver import SSE_HEAD, Harness, body_of, init_result, result

from mcp_proto.config import streamable_http_config
from mcp_proto.connection import (
    AbortExchange,
    CallFailed,
    CallSucceeded,
    Connected,
    ConnectFailed,
    OpenTransport,
    StartExchange,
)
from mcp_proto.errors import ServerError
from mcp_proto.http import MAX_REDIRECTS, redirect_target

URL = "http://127.0.0.1:9/mcp"


@pytest.mark.parametrize(
    ("status", "location", "expected"),
    [
        (307, "/mcp/", "http://127.0.0.1:9/mcp/"),
        (308, "http://127.0.0.1:9/v2/mcp", "http://127.0.0.1:9/v2/mcp"),
        (307, "mcp/", "http://127.0.0.1:9/mcp/"),  # relative to /mcp: /mcp/
        (307, " /mcp/ ", "http://127.0.0.1:9/mcp/"),
        (301, "/mcp/", None),  # 301/302/303 may turn the POST into a GET
        (302, "/mcp/", None),
        (303, "/mcp/", None),
        (307, "https://127.0.0.1:9/mcp/", None),  # another scheme: another origin
        (307, "http://127.0.0.1:10/mcp/", None),
        (307, "http://evil.example/mcp", None),
        (307, "//evil.example/mcp", None),
        (307, "/mcp/\r\nX: y", None),
        (307, "", None),
        (307, None, None),
        (200, "/mcp/", None),
    ],
)
def test_which_redirects_are_followed(status: int, location: str | None, expected: str) -> None:
    assert redirect_target(URL, status, location) == expected


def harness() -> Harness:
    return Harness(streamable_http_config(URL))


def open_post(h: Harness) -> StartExchange:
    h.conn.connect(h.now)
    assert h.take_frames() == [OpenTransport()]
    h.conn.transport_opened(h.now)
    (post,) = h.exchanges()
    return post


def test_a_307_sends_the_same_request_again_and_later_ones_go_there() -> None:
    h = harness()
    post = open_post(h)
    h.conn.exchange_head(post.xid, 307, [("Location", "/mcp/")], h.now)
    frames = h.take_frames()
    assert AbortExchange(post.xid) in frames  # its body is not read
    (again,) = [f for f in frames if isinstance(f, StartExchange)]
    assert again.url == "http://127.0.0.1:9/mcp/"
    assert (again.method, again.body, again.headers) == (post.method, post.body, post.headers)
    assert again.xid != post.xid
    # The old exchange's late input is ignored.
    h.conn.exchange_end(post.xid, h.now)
    init = body_of(again)
    h.reply_json(again, init_result(init["id"]), headers=[("Mcp-Session-Id", "s1")])
    note, get = h.exchanges()
    # The connection's URL is the new one: no second redirect for each request.
    assert (note.url, get.url) == ("http://127.0.0.1:9/mcp/", "http://127.0.0.1:9/mcp/")
    h.reply_status(note, 202)
    h.conn.exchange_head(get.xid, 405, [], h.now)
    assert Connected in [type(e) for e in h.take_events()]
    cid = h.conn.start_call("tools/list", now=h.now)
    (call,) = h.exchanges()
    assert call.url == "http://127.0.0.1:9/mcp/"
    h.reply_json(call, result(body_of(call)["id"], {"tools": []}))
    assert h.take_events(CallSucceeded) == [CallSucceeded(cid, "tools/list", {"tools": []})]


def test_the_get_stream_is_redirected_too() -> None:
    h = harness()
    post = open_post(h)
    h.reply_json(post, init_result(body_of(post)["id"]), headers=[("Mcp-Session-Id", "s1")])
    note, get = h.exchanges()
    h.reply_status(note, 202)
    h.conn.exchange_head(get.xid, 308, [("Location", "/events")], h.now)
    (again,) = h.exchanges()
    assert (again.method, again.url, again.streaming) == ("GET", "http://127.0.0.1:9/events", True)
    h.conn.exchange_head(again.xid, 200, SSE_HEAD, h.now)  # the stream is open
    assert Connected in [type(e) for e in h.take_events()]
    # Only the stream moved: requests still go to the connection's URL.
    h.conn.start_call("tools/list", now=h.now)
    (call,) = h.exchanges()
    assert call.url == URL


def test_redirects_in_a_loop_end_in_an_error_naming_the_location() -> None:
    h = harness()
    post = open_post(h)
    current = post
    for hop in range(MAX_REDIRECTS):
        target = "/mcp/" if hop % 2 else "/mcp"
        h.conn.exchange_head(current.xid, 307, [("Location", target)], h.now)
        (current,) = h.exchanges()
    h.reply_status(current, 307, headers=[("Location", "/mcp")])
    (failed,) = h.take_events(ConnectFailed)
    assert isinstance(failed.error, ServerError)
    # A same-origin loop is what it is, not a redirect "not followed" (issue 24 E).
    assert str(failed.error) == (
        f"HTTP 307 from the server: too many redirects ({MAX_REDIRECTS} followed, the last "
        "to '/mcp'); the server redirects in a loop"
    )
    assert failed.error.http_status == 307


@pytest.mark.parametrize(
    ("status", "location"),
    [(307, "https://other.example/mcp"), (301, "/mcp/"), (302, "http://127.0.0.1:9/mcp/")],
)
def test_a_redirect_not_followed_names_where_it_points(status: int, location: str) -> None:
    h = harness()
    post = open_post(h)
    h.reply_status(post, status, headers=[("Location", location)])
    assert h.exchanges() == []  # nothing sent there
    (failed,) = h.take_events(ConnectFailed)
    message = str(failed.error)
    assert f"HTTP {status} from the server, a redirect to {location!r}" in message
    assert message.endswith("connect to that URL")


def test_a_redirect_of_a_call_keeps_its_id_and_body() -> None:
    h = harness()
    post = open_post(h)
    h.reply_json(post, init_result(body_of(post)["id"]))
    note, get = h.exchanges()
    h.reply_status(note, 202)
    h.conn.exchange_head(get.xid, 405, [], h.now)
    h.take_events()
    cid = h.conn.start_call("tools/call", {"name": "t", "arguments": {}}, now=h.now)
    (call,) = h.exchanges()
    h.conn.exchange_head(call.xid, 307, [("Location", "/moved")], h.now)
    (again,) = h.exchanges()
    assert again.body == call.body and again.url == "http://127.0.0.1:9/moved"
    h.reply_status(again, 500)
    (failed,) = h.take_events(CallFailed)
    assert failed.call_id == cid  # the answer to the re-sent request is the call's
