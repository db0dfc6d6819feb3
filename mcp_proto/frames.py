"""Facts about an outgoing frame, read cheaply from its head.

The shells sometimes need to know which request a queued frame carries (HTTP maps a
failed POST to that request's method; it reads a request's own deadline). Our encoder
(``jsonrpc.encode_*``) always writes ``jsonrpc`` first, then ``id``, then ``method``, so
the head of the bytes tells without decoding a possibly large body.
"""

from __future__ import annotations

import json
import re
from typing import Final

from .jsonrpc import RequestId

__all__ = ["frame_info"]

_HEAD: Final = re.compile(
    rb'^\{"jsonrpc":"2\.0",(?:"id":(-?\d+|"(?:[^"\\]|\\.)*"),)?(?:"method":"((?:[^"\\]|\\.)*)")?'
)


def frame_info(frame: bytes) -> tuple[RequestId | None, str | None]:
    """``(id, method)`` of a frame we encoded: a request has both, a notification only
    a method, a response only an id."""
    match = _HEAD.match(frame, 0, 512)
    if match is None:
        return None, None
    raw_id, raw_method = match.group(1), match.group(2)
    request_id: RequestId | None = None
    if raw_id is not None:
        request_id = json.loads(raw_id)
    method = json.loads(b'"' + raw_method + b'"') if raw_method is not None else None
    return request_id, method
