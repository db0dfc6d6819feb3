"""``mcp-proto`` output, naming and error wording (issue 8 items 9 and 10): helpers in
process, plus the command run as a subprocess where the behaviour is the process's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp_io_sync import cli
from mcp_io_sync.cli import _render as render
from mcp_io_sync.cli import _schema
from mcp_proto.results import PromptResult, ToolResult
from mcp_proto.types import Tool

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "mcp_io_sync.cli"]
NPM = ROOT / "tests" / "peers" / "node_modules" / "@modelcontextprotocol"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], cwd=ROOT, capture_output=True, text=True, timeout=60, input=""
    )


# ------------------------------------------------------------------ results


def test_a_wrapped_result_is_shown_once() -> None:
    # FastMCP: a scalar return value is the text "3" and {"result": 3}.
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": "3"}],
        "structuredContent": {"result": 3},
    }
    assert render.render_call_result(result) == "3"
    # A string: the text is the string itself, not its JSON.
    result = {
        "content": [{"type": "text", "text": "hello\n"}],
        "structuredContent": {"content": "hello\n"},
    }
    assert render.render_call_result(result) == "hello\n"
    # The text is the JSON of the one wrapped value (server-memory's entities).
    entities = [{"name": "Ada"}]
    result = {
        "content": [{"type": "text", "text": json.dumps(entities, indent=2)}],
        "structuredContent": {"entities": entities},
    }
    assert render.render_call_result(result) == json.dumps(entities, indent=2)
    # Not a copy: both are shown.
    result = {
        "content": [{"type": "text", "text": "the sum is 3"}],
        "structuredContent": {"result": 3},
    }
    assert render.render_call_result(result).splitlines() == [
        "the sum is 3",
        "{",
        '  "result": 3',
        "}",
    ]


def test_results_render_from_their_types() -> None:
    """The renderers read the typed results (issue 22 item 5): a blob resource is
    noted with its size, a kind this client does not know is named, a prompt message
    is its role and its one item."""
    result = ToolResult.from_wire(
        {
            "content": [
                {"type": "resource", "resource": {"uri": "demo://b", "blob": "AAAAAAAA"}},
                {"type": "hologram", "frames": 3},
            ],
            "isError": True,
        }
    )
    assert render.render_call_result(result).splitlines() == [
        "[resource: demo://b (6 B binary)]",
        "[hologram content]",
    ]
    prompt = PromptResult.from_wire(
        {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}
    )
    assert render.render_prompt_result(prompt) == "[user]\nhi"


# ------------------------------------------------------------------ tables


def test_middle_columns_are_cut_when_the_last_is_not_enough() -> None:
    rows = [
        ["list_directory_with_sizes", "path, sortBy?, " * 4, "read-only, closed-world", "Get"],
        ["x", "a", "destructive, idempotent, closed-world", "Write " * 20],
    ]
    text = render.table(["NAME", "ARGUMENTS", "HINTS", "DESCRIPTION"], rows, width=110)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 109
    assert lines[1].startswith("list_directory_with_sizes  ")  # the name is never cut
    assert "..." in lines[1]
    # Room enough: nothing is cut.
    assert "..." not in render.table(["A", "B"], [["x", "y" * 20]], width=80)


# ------------------------------------------------------------------ nested arguments


def test_nested_arguments_follow_refs_and_stop_on_cycles() -> None:
    tool = Tool.from_dict(
        {
            "name": "t",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "node": {"$ref": "#/$defs/Node"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "maybe": {"anyOf": [{"$ref": "#/$defs/Leaf"}, {"type": "null"}]},
                },
                "required": ["node"],
                "$defs": {
                    "Node": {
                        "type": "object",
                        "properties": {
                            "label": {"type": "string", "description": "shown"},
                            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                        },
                        "required": ["label"],
                    },
                    "Leaf": {"type": "object", "properties": {"v": {"type": "integer"}}},
                },
            },
        }
    )
    rows = _schema.arg_rows(tool)
    assert [row[0] for row in rows] == [
        "node",
        "node.label",
        "node.children",
        "tags",
        "maybe",
    ]
    assert rows[1] == ["node.label", "string", "yes", "shown"]
    assert rows[2][1] == "array"  # the recursive items are not unfolded again
    assert rows[3][1] == "array of string"


# ------------------------------------------------------------------ names and messages


def test_a_node_server_is_named_after_its_package(tmp_path: Path) -> None:
    script = NPM / "server-memory" / "dist" / "index.js"
    assert cli._server_name(["node", str(script)]) == "server-memory"
    package = tmp_path / "my-server"
    (package / "build").mkdir(parents=True)
    (package / "package.json").write_text('{"name": "@acme/weather-mcp"}')
    (package / "build" / "main.mjs").write_text("")
    assert cli._server_name(["node", str(package / "build" / "main.mjs")]) == "weather-mcp"
    # no package.json anywhere near: the file name, as before
    assert cli._server_name(["node", "/nonexistent/srv.js"]) == "srv"
    assert cli._server_name(["python", "examples/demo_server.py"]) == "demo_server"


def test_args_file_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    proc = run("call", "t", "--args", f"@{missing}", "--", "never-started")
    assert proc.returncode == cli.EXIT_USAGE
    assert proc.stderr == f"mcp-proto: cannot read {missing}: No such file or directory\n"


LIST_FAILS = """
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        caps = {"prompts": {}, "tools": {}}
        info = {"name": "locked", "version": "1"}
        result = {"protocolVersion": "2025-11-25", "capabilities": caps, "serverInfo": info}
        body = {"result": result}
    else:
        body = {"error": {"code": -32603, "message": "database is locked"}}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], **body}), flush=True)
"""


def test_a_failed_list_is_one_line(tmp_path: Path) -> None:
    """Item 10: a list the server answers with an error printed a warning and then the
    error, with two different prefixes. (A scripted server: the real ones do not fail
    their lists on demand.)"""
    server = tmp_path / "locked.py"
    server.write_text(LIST_FAILS)
    for command, what in (["prompts"], "prompts"), (["call", "anything"], "tools"):
        proc = run(*command, "--", sys.executable, str(server))
        assert proc.returncode == cli.EXIT_SERVER
        assert proc.stderr == (
            f"mcp-proto: listing {what} of server 'locked' failed: "
            "server error: database is locked (code -32603)\n"
        )
