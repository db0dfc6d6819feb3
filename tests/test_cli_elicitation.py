"""``mcp-proto call`` and a tool that asks the user for input (issue 24 F).

Through the CLI itself, as a subprocess whose stdin and stderr are a real pseudo-terminal
(Python's ``pty``), its stdout a pipe (the result, as ``| jq`` would read it), against
real servers that elicit: server-everything's ``trigger-elicitation-request`` (a form
of every field kind: strings with and without defaults, integer and number ranges,
boolean, single and multi-select enums, titled and legacy ``enumNames``) and
``trigger-url-elicitation`` (URL mode), and the SDK server's ``elicit_name``. Without a
terminal (stdin a pipe) the tool is answered ``cancel`` with one warning line.

The assertions are on what the server received (it prints the raw result it got) and
on what the user saw; the waits for prompts are bounded (a stuck prompt fails, it does
not hang) and assert nothing about timing.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import termios
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "mcp_io_sync.cli"]
NPM = ROOT / "tests" / "peers" / "node_modules" / "@modelcontextprotocol"
EVERYTHING = ["node", str(NPM / "server-everything" / "dist" / "index.js")]
SDK = [sys.executable, str(ROOT / "tests" / "servers" / "sdk_server.py")]
ENV = {**os.environ, "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]}
ENV.pop("COLUMNS", None)
WAIT = 90.0  # a bound on each prompt's arrival (a cold node start on a busy machine)

pytestmark = pytest.mark.peer


class Terminal:
    """The CLI on a pseudo-terminal: ``expect`` what it writes on stderr, ``type``
    the user's answers."""

    def __init__(self, *args: str) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [*CLI, *args],
            cwd=ROOT,
            env=ENV,
            stdin=slave,
            stderr=slave,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        os.close(slave)
        self.seen = ""  # everything written on the terminal so far
        self._at = 0  # where the next expect starts

    def expect(self, pattern: str) -> str:
        """Wait (bounded) until ``pattern`` appears after the last match; the text."""
        regex = re.compile(pattern)
        deadline_reads = 0
        while True:
            match = regex.search(self.seen, self._at)
            if match:
                self._at = match.end()
                return match.group(0)
            ready, _, _ = select.select([self.master], [], [], 1.0)
            if not ready:
                deadline_reads += 1
                if deadline_reads > WAIT or self.proc.poll() is not None:
                    raise AssertionError(f"no {pattern!r} in:\n{self.seen}")
                continue
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the CLI exited and closed the terminal
                chunk = b""
            if not chunk:
                raise AssertionError(f"no {pattern!r} before the end:\n{self.seen}")
            self.seen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def eof(self) -> None:
        os.write(self.master, bytes([termios.tcgetattr(self.master)[6][termios.VEOF][0]]))

    def finish(self) -> tuple[int, str, str]:
        """The exit code, stdout, and the whole terminal transcript."""
        assert self.proc.stdout is not None
        out = self.proc.stdout.read().decode()
        self.proc.stdout.close()
        code = self.proc.wait(WAIT)
        try:
            while True:
                ready, _, _ = select.select([self.master], [], [], 0.5)
                if not ready:
                    break
                chunk = os.read(self.master, 4096)
                if not chunk:
                    break
                self.seen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        except OSError:
            pass
        return code, out, self.seen

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None and not self.proc.stdout.closed:
            self.proc.stdout.close()
        try:
            os.close(self.master)
        except OSError:
            pass


@pytest.fixture
def terminals() -> Iterator[list[Terminal]]:
    started: list[Terminal] = []
    yield started
    for t in started:
        t.kill()


def raw_result(out: str) -> dict[str, Any]:
    """The elicitation result server-everything received (it echoes it back)."""
    _, _, raw = out.partition("Raw result: ")
    value: dict[str, Any] = json.loads(raw)
    return value


def test_a_form_is_asked_field_by_field_validated_and_sent(terminals: list[Terminal]) -> None:
    t = Terminal("call", "trigger-elicitation-request", "--", *EVERYTHING)
    terminals.append(t)
    t.expect(r"server 'server-everything' \(tool 'trigger-elicitation-request'\) asks:")
    t.expect("Please provide inputs for the following fields:")
    t.expect(r"Answer\? \[y\]es / \[d\]ecline / \[c\]ancel \[y\]: ")
    t.type("")
    t.expect(r"String \(name\) \[string, required\]: Your full, legal name")
    t.expect(r"> $")
    t.type("")  # required, no default: asked again
    t.expect("required: please answer")
    t.type("Ada Lovelace")
    t.expect(r"Boolean \(check\) \[boolean\]: Agree to the terms.*\n  > \[y/n\] ")
    t.type("perhaps")
    t.expect("please answer y or n")
    t.type("y")
    t.expect(r"\(firstLine\).*\n  > \[It was a dark and stormy night\.\] ")
    t.type("")  # the default
    t.expect(r"\(email\).*\n  > \[Enter: leave out\] ")
    t.type("ada@example.com")
    t.expect(r"\(homepage\)")
    t.type("")  # optional: left out
    t.expect(r"\(birthdate\)")
    t.type("1815-12-10")
    t.expect(r"Integer \(integer\) \[integer\].*\n  > \[42\] ")
    t.type("500")  # above the maximum: the project's validator says so, asked again
    t.expect(r"500\n  value is greater than the maximum of 100\n")
    t.type("seven")
    t.expect("not an integer")
    t.type("7")
    t.expect(r"\(number\).*\n  > \[3\.14\] ")
    t.type("2.5")
    t.expect(r"\(untitledSingleSelectEnum\) \[choice\].*\n  1\) Monica  2\) Rachel  3\) Joey")
    t.type("3")
    t.expect(r"\(untitledMultipleSelectEnum\) \[multi\].*\n.*Guitar.*\n.*several")
    t.type("Piano, 1")
    t.expect(r"\(titledSingleSelectEnum\).*\n  1\) Superman \(hero-1\)  2\) Green Lantern")
    t.type("wonder woman")
    t.expect(r"\(titledMultipleSelectEnum\)")
    t.type("")  # its default, ["fish-1"]
    t.expect(r"\(legacyTitledEnum\).*\n  1\) Cats \(pet-1\)  2\) Dogs \(pet-2\)")
    t.type("Dogs")
    t.expect(r"Send\? \[y\]es / \[d\]ecline / \[c\]ancel / \[e\]dit \[y\]: ")
    t.type("y")
    code, out, seen = t.finish()
    assert code == 0, seen
    assert "User provided the requested information" in out
    assert raw_result(out) == {
        "action": "accept",
        "content": {
            "name": "Ada Lovelace",
            "check": True,
            "firstLine": "It was a dark and stormy night.",
            "email": "ada@example.com",
            "birthdate": "1815-12-10",
            "integer": 7,
            "number": 2.5,
            "untitledSingleSelectEnum": "Joey",
            "untitledMultipleSelectEnum": ["Piano", "Guitar"],
            "titledSingleSelectEnum": "hero-3",
            "titledMultipleSelectEnum": ["fish-1"],
            "legacyTitledEnum": "pet-2",
        },
    }


@pytest.mark.parametrize(
    ("answers", "action"),
    [(["d"], "decline"), (["c"], "cancel"), (["", "Ada", *[""] * 12, "decline"], "decline")],
)
def test_the_user_declines_or_cancels(
    terminals: list[Terminal], answers: list[str], action: str
) -> None:
    t = Terminal("call", "trigger-elicitation-request", "--", *EVERYTHING)
    terminals.append(t)
    t.expect(r"Answer\? ")
    for answer in answers:
        t.type(answer)
    code, out, seen = t.finish()
    assert code == 0, seen
    assert raw_result(out) == {"action": action}


def test_end_of_input_cancels(terminals: list[Terminal]) -> None:
    t = Terminal("call", "trigger-elicitation-request", "--", *EVERYTHING)
    terminals.append(t)
    t.expect(r"Answer\? ")
    t.type("y")
    t.expect(r"\(name\)")
    t.eof()
    code, out, seen = t.finish()
    assert code == 0, seen
    assert "(no answer: cancelled)" in seen
    assert raw_result(out) == {"action": "cancel"}


def test_the_sdk_servers_form(terminals: list[Terminal]) -> None:
    """The SDK server's form (the answer is checked by the server's own SDK): a plain
    required string. In the handshake era: on 2026-07-28 this server's ``elicit_form``
    has no back-channel (it says so in its result)."""
    t = Terminal("--protocol", "legacy", "call", "elicit_name", "--", *SDK)
    terminals.append(t)
    t.expect(r"server 'sdk_server' \(tool 'elicit_name'\) asks:\n  What is your name\?")
    t.type("")
    t.expect(r"name \[string, required\]: Your name\n  > ")
    t.type("Grace")
    t.expect(r"Send\? ")
    t.type("")
    code, out, seen = t.finish()
    assert code == 0, seen
    assert json.loads(out) == {"action": "accept", "content": {"name": "Grace"}}


@pytest.mark.parametrize(
    ("answer", "said"),
    [("y", "User completed the URL elicitation flow"), ("", "User declined to open the URL")],
)
def test_a_url_is_shown_and_consent_asked(
    terminals: list[Terminal], answer: str, said: str
) -> None:
    url = "https://auth.example.com/consent?state=abc"
    t = Terminal(
        "call", "trigger-url-elicitation", f"url={url}", "message=Sign in", "--", *EVERYTHING
    )
    terminals.append(t)
    t.expect(r"server 'server-everything' \(tool 'trigger-url-elicitation'\) asks you to open")
    t.expect(r"  Sign in\n  host: auth\.example\.com\n")
    t.expect(re.escape(f"  URL:  {url}"))
    t.expect(r"Will you open it\? \[y\]es / \[n\]o \(decline\) / \[c\]ancel \[n\]: ")
    t.type(answer)
    code, out, seen = t.finish()
    assert code == 0, seen
    assert said in out, out


FORM_MESSAGE = "Please provide inputs for the following fields:"
URL_MESSAGE = "Please open the link to complete this action."


@pytest.mark.parametrize(
    ("tool", "args", "what", "said"),
    [
        (
            "trigger-elicitation-request",
            [],
            f"needs input from the user ({FORM_MESSAGE})",
            "User cancelled the elicitation dialog",
        ),
        (
            "trigger-url-elicitation",
            ["url=https://example.com/"],
            f"asks the user to open a URL ({URL_MESSAGE})",
            "User cancelled the URL elicitation",
        ),
    ],
)
def test_without_a_terminal_the_tool_is_answered_cancel_in_one_line(
    tool: str, args: list[str], what: str, said: str
) -> None:
    proc = subprocess.run(
        [*CLI, "call", tool, *args, "--", *EVERYTHING],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        input="",
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.splitlines() == [
        f"mcp-proto: warning: tool {tool!r} {what}, which the CLI can only ask for on a "
        "terminal: answered cancel"
    ]
    assert said in proc.stdout
