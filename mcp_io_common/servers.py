"""What both shells do alike with their set of server objects (no waiting here): which
class serves a transport, and which failure of several servers' to raise."""

from __future__ import annotations

from collections.abc import Iterable
from importlib import import_module
from typing import Final, TypeVar

__all__ = ["SERVER_CLASSES", "raise_first", "server_class"]

#: Where a shell package keeps each transport's server class: (module, class). Looked
#: up when a server of that transport is configured, so the HTTP module (and with it
#: httpcore, TLS and h11) is imported only then: a stdio-only client starts faster and
#: smaller (tests/test_import_weight.py).
SERVER_CLASSES: Final = {
    "stdio": ("_stdio", "StdioServer"),
    "websocket": ("_websocket", "WebSocketServer"),
    "streamable_http": ("_http", "StreamableHttpServer"),
    "http": ("_http", "HttpServer"),
    "sse": ("_http", "SseServer"),
}

S = TypeVar("S")


def server_class(package: str, kind: str, base: type[S]) -> type[S]:
    """The server class of transport ``kind`` in the shell ``package`` (a subclass of
    ``base``, the shell's server class). Raises ``KeyError`` for an unknown kind."""
    module, name = SERVER_CLASSES[kind]
    cls = getattr(import_module(f"{package}.{module}"), name)
    if not (isinstance(cls, type) and issubclass(cls, base)):  # pragma: no cover - a bug
        raise TypeError(f"{package}.{module}.{name} is not a {base.__name__}")
    return cls


def raise_first(failures: Iterable[BaseException | None]) -> None:
    """Raise the first failure, in server order, of an action every server was given
    (``None`` where it succeeded): the others still ran to their end."""
    for failure in failures:
        if failure is not None:
            raise failure
