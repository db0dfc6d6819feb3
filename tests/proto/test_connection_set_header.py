"""``Connection.set_header`` (a rotated ``Authorization``, CACHE-6): every request
built afterwards carries the new value, in a 2026-07-28 session and in the handshake
era alike; ``None`` removes the header; a stdio server and a value with CR/LF are
refused with ``ValueError`` before anything changes. Modern requests validate against
the 2026-07-28 schema (``posted``)."""

from __future__ import annotations

import pytest
from _machine_driver import Harness, body_of, header, init_result
from test_connection_modern_http import URL, connect_modern, harness, only, posted

from mcp_proto.config import stdio_config, streamable_http_config


def test_a_modern_session_sends_the_new_value_from_the_next_request_on() -> None:
    h = harness(headers={"Authorization": "Bearer one", "X-Other": "k"})
    connect_modern(h)
    h.conn.start_call("tools/list", now=h.now)
    before = only(posted(h))
    h.conn.set_header("authorization", "Bearer two")  # matched without case
    h.conn.start_call("tools/list", now=h.now)
    after = only(posted(h))
    assert header(before, "Authorization") == "Bearer one"
    assert header(after, "Authorization") == "Bearer two"
    assert header(after, "X-Other") == "k"
    assert [k for k, _ in after.headers if k.lower() == "authorization"] == ["authorization"]
    h.conn.set_header("Authorization", None)
    h.conn.start_call("tools/list", now=h.now)
    assert header(only(posted(h)), "Authorization") is None


def test_the_handshake_era_sends_the_new_value_too() -> None:
    h = Harness(streamable_http_config(URL, headers={"Authorization": "Bearer one"}))
    h.conn.connect(h.now)
    h.take_frames()
    h.conn.transport_opened(h.now)
    init = only(posted(h))
    assert header(init, "Authorization") == "Bearer one"
    h.conn.set_header("Authorization", "Bearer two")
    h.reply_json(init, init_result(body_of(init)["id"]), headers=[("mcp-session-id", "s1")])
    # notifications/initialized and the GET stream, both built after the change
    sent = posted(h)
    assert [x.method for x in sent] == ["POST", "GET"]
    assert [header(x, "Authorization") for x in sent] == ["Bearer two", "Bearer two"]


@pytest.mark.parametrize(
    ("config", "value"),
    [
        (stdio_config(["srv"]), "Bearer x"),
        (streamable_http_config(URL, headers={"Authorization": "Bearer one"}), "a\r\nX: y"),
    ],
)
def test_what_the_configuration_refuses_changes_nothing(config: object, value: str) -> None:
    h = Harness(config)  # type: ignore[arg-type]
    before = h.conn.config
    with pytest.raises(ValueError):
        h.conn.set_header("Authorization", value)
    assert h.conn.config is before
