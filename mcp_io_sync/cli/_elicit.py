"""``mcp-proto``'s elicitation handler: a tool that asks the user for input (spec
2025-11-25 client/elicitation; ELIC rows in docs/requirements.md).

On a terminal (stdin and stderr both one), the user is asked on stderr, so stdout stays
the tool's result:

* form mode: the message, then one question per property of ``requestedSchema`` (in
  its order): strings, numbers, integers, booleans, single- and multi-select enums
  (``enum``, ``enumNames``, ``oneOf``/``anyOf`` of ``const``+``title``), required or
  optional, with their defaults. Each answer is checked against its property's schema
  with the project's JSON Schema validator (``mcp_proto.schema``), and the whole answer
  against ``requestedSchema``, before it is sent; a rejected answer is asked again.
  The user can decline or cancel before the form and before sending it; end of input
  (Ctrl-D) cancels.
* URL mode: the message, the URL's host and the full URL; nothing is opened or fetched
  for the user (spec: the client must not without consent), who is asked whether they
  will open it: yes accepts, no declines.

Elsewhere (stdin not a terminal: a script, a pipe) nobody can answer: the handler says
so in one warning line and answers ``cancel`` (no user made a choice, so not
``decline``).

Server text is shown cleaned of control characters (a server could otherwise move the
cursor or rewrite what the terminal shows). The answer is read with ``select`` polling
so that an interrupted call (Ctrl-C, a timeout) ends the questions at once instead of
leaving a thread blocked on the terminal.
"""

from __future__ import annotations

import logging
import math
import os
import select
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any, TextIO
from urllib.parse import urlsplit

from . import _render as render
from ._log import HANDLER

__all__ = ["Asker"]

_LOGGER = logging.getLogger("mcp_io_sync.cli")

_YES = frozenset({"y", "yes", "true", "t", "1", "on"})
_NO = frozenset({"n", "no", "false", "f", "0", "off"})


class _Stopped(Exception):
    """The questions end without an answer: end of input, or the call is over."""


def stdin_is_terminal() -> bool:
    return render.stream_is_tty(sys.stdin) and render.stream_is_tty(sys.stderr)


class Asker:
    """The CLI's ``elicitation_handler``: ``(message, schema_or_url_info, metadata)`` ->
    the elicitation result (``mcp_proto.handlers`` normalises and checks it).

    ``interactive``: whether the user can be asked (a terminal). ``tool`` and ``server``
    name what is asking, for the questions (set by ``call`` before the call).
    :meth:`stop` ends questions in progress (the call ended)."""

    def __init__(
        self,
        *,
        interactive: bool,
        read_fd: int | None = None,
        out: TextIO | None = None,
    ) -> None:
        self.interactive = interactive
        self._fd = read_fd
        self._out = out
        self._stop = threading.Event()
        self._lock = threading.Lock()  # one form at a time on the terminal
        self.tool = ""
        self.server = ""

    # ---------------------------------------------------------------- the handler

    def __call__(self, message: str, detail: Any, metadata: Any) -> dict[str, Any]:
        is_url = isinstance(detail, Mapping) and detail.get("mode") == "url"
        if not self.interactive or self._stop.is_set():
            what = f"tool {self.tool!r}" if self.tool else f"server {self.server or '?'!r}"
            asks = "asks the user to open a URL" if is_url else "needs input from the user"
            _LOGGER.warning(
                "%s %s (%s), which the CLI can only ask for on a terminal: answered cancel",
                what,
                asks,
                render.one_line(message or "no message", 200),
            )
            return {"action": "cancel"}
        with self._lock, self._terminal():
            try:
                if is_url:
                    return self._url(message, detail.get("url"))
                return self._form(message, detail)
            except _Stopped:
                self._say("(no answer: cancelled)")
                return {"action": "cancel"}

    def stop(self) -> None:
        """The call is over (answered, failed or interrupted): questions still open end
        with ``cancel``, later ones are not asked."""
        self._stop.set()

    # ---------------------------------------------------------------- the terminal

    @property
    def out(self) -> TextIO:
        return self._out if self._out is not None else sys.stderr

    @contextmanager
    def _terminal(self) -> Iterator[None]:
        """Keep the progress line and log lines from drawing over the questions."""
        reporter = HANDLER.reporter
        with reporter.suspended() if reporter is not None else nullcontext():
            yield

    def _say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _ask(self, prompt: str) -> str:
        """One line typed by the user (without its newline)."""
        self.out.write(prompt)
        self.out.flush()
        fd = self._fd if self._fd is not None else sys.stdin.fileno()
        data = bytearray()
        while not data.endswith(b"\n"):
            if self._stop.is_set():
                raise _Stopped
            ready, _, _ = select.select([fd], [], [], 0.1)
            if not ready:
                continue
            chunk = os.read(fd, 4096)
            if not chunk:  # end of input (Ctrl-D)
                self._say("")
                raise _Stopped
            data += chunk
            if len(data) > 65536:
                break
        return data.decode("utf-8", "replace").rstrip("\r\n")

    def _choose(self, prompt: str, choices: Mapping[str, str], default: str) -> str:
        """One of ``choices``' values, by its key's first letter or whole word."""
        while True:
            answer = self._ask(prompt).strip().lower()
            if not answer:
                return default
            for key, value in choices.items():
                if answer in (key, key[0]):
                    return value
            self._say(f"  please answer {', '.join(choices)}")

    def _who(self) -> str:
        who = f"server {self.server!r}" if self.server else "the server"
        return who + (f" (tool {self.tool!r})" if self.tool else "")

    # ---------------------------------------------------------------- URL mode

    def _url(self, message: str, url: Any) -> dict[str, Any]:
        text = url if isinstance(url, str) else ""
        host = urlsplit(text).hostname if text else None
        self._say(f"{self._who()} asks you to open a URL:")
        if message:
            self._say("  " + render.clean(message, multiline=False))
        self._say(f"  host: {render.clean(host or '(none)', multiline=False)}")
        self._say(f"  URL:  {render.clean(text or '(none)', multiline=False)}")
        self._say("  (nothing is opened for you: open it in your browser if you agree)")
        action = self._choose(
            "Will you open it? [y]es / [n]o (decline) / [c]ancel [n]: ",
            {"yes": "accept", "no": "decline", "cancel": "cancel"},
            "decline",
        )
        return {"action": action}

    # ---------------------------------------------------------------- form mode

    def _form(self, message: str, schema: Any) -> dict[str, Any]:
        props = schema.get("properties") if isinstance(schema, Mapping) else None
        props = props if isinstance(props, Mapping) else {}
        required = schema.get("required") if isinstance(schema, Mapping) else None
        listed = required if isinstance(required, list) else []
        required_names = {r for r in listed if isinstance(r, str)}
        self._say(f"{self._who()} asks:")
        if message:
            for line in render.clean(message).splitlines() or [""]:
                self._say("  " + line)
        start = self._choose(
            "Answer? [y]es / [d]ecline / [c]ancel [y]: ",
            {"yes": "answer", "decline": "decline", "cancel": "cancel"},
            "answer",
        )
        if start != "answer":
            return {"action": start}
        while True:
            content: dict[str, Any] = {}
            for name, prop in props.items():
                if not isinstance(name, str) or not isinstance(prop, Mapping):
                    continue
                value = self._field(name, prop, name in required_names)
                if value is not _OMITTED:
                    content[name] = value
            problem = _violation(schema, content)
            if problem is not None:
                self._say(f"  the answer does not fit the form: {problem}; once more")
                continue
            action = self._choose(
                "Send? [y]es / [d]ecline / [c]ancel / [e]dit [y]: ",
                {"yes": "accept", "decline": "decline", "cancel": "cancel", "edit": "edit"},
                "accept",
            )
            if action == "edit":
                continue
            if action != "accept":
                return {"action": action}
            return {"action": "accept", "content": content}

    def _field(self, name: str, prop: Mapping[str, Any], required: bool) -> Any:
        kind = _kind(prop)
        choices = _choices(prop)
        title = prop.get("title") if isinstance(prop.get("title"), str) else None
        label = f"{title} ({name})" if title and title != name else name
        flags = [kind if kind != "enum" else "choice"]
        if required:
            flags.append("required")
        head = f"{label} [{', '.join(flags)}]"
        description = prop.get("description")
        if isinstance(description, str) and description.strip():
            head += ": " + description.strip()
        self._say(render.clean(head, multiline=False))
        if choices:
            listed = "  ".join(
                f"{i}) {render.clean(_shown(v, t), multiline=False)}"
                for i, (v, t) in enumerate(choices, 1)
            )
            self._say("  " + listed)
            if kind == "multi":
                self._say("  (several: numbers or values separated by commas)")
        has_default = "default" in prop
        default = prop.get("default")
        if has_default:
            hint = f" [{render.clean(_default_text(default, choices), multiline=False)}]"
        elif kind == "boolean":
            hint = " [y/n]"
        elif not required:
            hint = " [Enter: leave out]"
        else:
            hint = ""
        while True:
            text = self._ask(f"  >{hint} ")
            if not text.strip():
                if has_default:
                    return default
                if not required:
                    return _OMITTED
                self._say("  required: please answer")
                continue
            try:
                value = _parse(text, kind, choices)
            except ValueError as exc:
                self._say(f"  {exc}")
                continue
            problem = _violation(dict(prop), value)
            if problem is not None:
                self._say(f"  {render.clean(problem, multiline=False)}")
                continue
            return value


_OMITTED: Any = object()


def _kind(prop: Mapping[str, Any]) -> str:
    kind = prop.get("type")
    if kind == "array":
        return "multi"
    if "enum" in prop or "oneOf" in prop or "anyOf" in prop:
        return "enum"
    return kind if kind in ("string", "number", "integer", "boolean") else "string"


def _choices(prop: Mapping[str, Any]) -> list[tuple[Any, str | None]]:
    """The values a select offers, with their titles: ``enum`` (+ legacy
    ``enumNames``), ``oneOf``/``anyOf`` of ``{"const", "title"}``; for a multi-select,
    those of ``items``."""
    source: Any = prop
    if prop.get("type") == "array":
        source = prop.get("items")
        if not isinstance(source, Mapping):
            return []
    enum = source.get("enum")
    if isinstance(enum, list):
        names = source.get("enumNames") if isinstance(source.get("enumNames"), list) else []
        return [
            (v, names[i] if i < len(names) and isinstance(names[i], str) else None)
            for i, v in enumerate(enum)
        ]
    for key in ("oneOf", "anyOf"):
        options = source.get(key)
        if isinstance(options, list):
            return [
                (o["const"], o.get("title") if isinstance(o.get("title"), str) else None)
                for o in options
                if isinstance(o, Mapping) and "const" in o
            ]
    return []


def _shown(value: Any, title: str | None) -> str:
    text = value if isinstance(value, str) else repr(value)
    return f"{title} ({text})" if title and title != text else text


def _default_text(default: Any, choices: Sequence[tuple[Any, str | None]]) -> str:
    if isinstance(default, bool):
        return "yes" if default else "no"
    if isinstance(default, list):
        return ", ".join(str(d) for d in default)
    return str(default)


def _pick(text: str, choices: Sequence[tuple[Any, str | None]]) -> Any:
    text = text.strip()
    if text.isdigit() and 1 <= int(text) <= len(choices):
        return choices[int(text) - 1][0]
    for value, title in choices:
        if text == str(value) or text.lower() in (str(value).lower(), (title or "").lower()):
            return value
    raise ValueError(f"not one of the choices: {text!r}")


def _parse(text: str, kind: str, choices: Sequence[tuple[Any, str | None]]) -> Any:
    """The typed text as the property's JSON type (``ValueError``: it is not one)."""
    stripped = text.strip()
    if kind == "boolean":
        if stripped.lower() in _YES:
            return True
        if stripped.lower() in _NO:
            return False
        raise ValueError("please answer y or n")
    if kind in ("number", "integer"):
        try:
            return int(stripped)
        except ValueError:
            pass
        if kind == "integer":
            raise ValueError(f"not an integer: {stripped!r}")
        try:
            number = float(stripped)
        except ValueError:
            raise ValueError(f"not a number: {stripped!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"not a finite number: {stripped!r}")
        return number
    if kind == "enum" and choices:
        return _pick(stripped, choices)
    if kind == "multi":
        parts = [p for p in (s.strip() for s in text.split(",")) if p]
        return [_pick(p, choices) for p in parts] if choices else parts
    return text


def _violation(schema: Any, value: Any) -> str | None:
    """The first way ``value`` breaks ``schema`` (the project's validator), or None;
    an unusable schema checks nothing (the server's problem, reported by the library)."""
    from mcp_proto.schema import errors_for  # (jsonschema-rs: loaded when a form is shown)

    try:
        problems = errors_for(schema, value, limit=1)
    except ValueError:
        return None
    # (one property's value is the whole instance: "at (root)" says nothing to a user)
    return problems[0].removeprefix("at (root): ") if problems else None
