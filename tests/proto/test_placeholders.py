"""``${VAR}`` placeholders in definition files (``mcp_proto.placeholders``): the syntaxes
Claude Code (``${VAR}``, ``${VAR:-default}``), VS Code and Cursor (``${env:VAR}``,
``${userHome}``) expand, the fields they expand, and the errors for the rest."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.config import parse_server_definitions
from mcp_proto.placeholders import expand_entry, expand_text, workspace_folder

ENV = {"TOKEN": "s3cret", "EMPTY": "", "HOME": "/home/ada", "TZ_NAME": "Europe/Paris"}


@pytest.mark.parametrize(
    ("text", "expanded"),
    [
        ("Bearer ${TOKEN}", "Bearer s3cret"),
        ("Bearer ${env:TOKEN}", "Bearer s3cret"),
        ("${userHome}/servers", "/home/ada/servers"),
        ("${EMPTY}", ""),
        ("${MISSING:-fallback}", "fallback"),
        ("${EMPTY:-fallback}", "fallback"),  # the shell's ":-": unset or empty
        ("${TOKEN:-fallback}", "s3cret"),
        ("${MISSING:-}", ""),
        ("${TZ_NAME}/${TOKEN}", "Europe/Paris/s3cret"),
        ("$TOKEN and $${TOKEN}", "$TOKEN and $s3cret"),  # a bare $VAR is not one
        ("no placeholders", "no placeholders"),
        ("{TOKEN}", "{TOKEN}"),
    ],
)
def test_the_syntaxes_other_hosts_expand(text: str, expanded: str) -> None:
    assert expand_text(text, ENV) == expanded


def test_an_unset_variable_is_an_error_naming_it() -> None:
    with pytest.raises(
        ValueError, match=r"^environment variable API_KEY \(in \$\{API_KEY\}\) is not set$"
    ):
        expand_text("Bearer ${API_KEY}", ENV)
    with pytest.raises(ValueError, match="environment variable API_KEY"):
        expand_text("${env:API_KEY}", ENV)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("${input:api-key}", "VS Code input prompts are not supported"),
        ("${workspaceFolder}/server.py", "known only in a workspace's own file"),
        ("${workspaceRoot}", "not a placeholder this client expands"),
        ("${env:not a name}", "not a placeholder this client expands"),
        ("${1ABC}", "not a placeholder this client expands"),
        ("${}", "not a placeholder this client expands"),
    ],
)
def test_what_is_not_expanded_is_an_error_never_sent_as_it_is(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        expand_text(text, ENV)


@pytest.mark.parametrize(
    ("path", "workspace"),
    [
        # VS Code: ${workspaceFolder} is the folder opened, the one above .vscode/.
        ("/home/u/proj/.vscode/mcp.json", "/home/u/proj"),
        ("/.vscode/mcp.json", "/"),
        ("C:\\Users\\u\\proj\\.vscode\\mcp.json", "C:\\Users\\u\\proj"),
        # A project's .cursor/mcp.json; the user's global one belongs to no workspace.
        ("/home/u/proj/.cursor/mcp.json", "/home/u/proj"),
        ("/home/u/.cursor/mcp.json", None),
        # Files outside an editor folder, and relative paths (the shell resolves them).
        ("/home/u/proj/.mcp.json", None),
        ("/home/u/proj/mcp.json", None),
        (".vscode/mcp.json", None),
    ],
)
def test_the_workspace_folder_of_a_definition_file(path: str, workspace: str | None) -> None:
    assert workspace_folder(path, "/home/u") == workspace


def test_workspace_placeholders_expand_in_a_workspace_file() -> None:
    text = "${workspaceFolder}/server.py --name ${workspaceFolderBasename}"
    assert expand_text(text, ENV, "/home/u/proj") == "/home/u/proj/server.py --name proj"
    # The environment never stands in for it in a workspace file.
    assert expand_text("${workspaceFolder}", {"workspaceFolder": "/w"}, "/p") == "/p"
    configs, warnings = parse_server_definitions(
        {"servers": {"s": {"command": "python", "args": ["${workspaceFolder}/s.py"]}}},
        environ={},
        workspace="/home/u/proj",
    )
    assert [c.command for c in configs] == [("python", "/home/u/proj/s.py")]
    configs, warnings = parse_server_definitions(
        {"servers": {"s": {"command": "python", "args": ["${workspaceFolder}/s.py"]}}},
        environ={},
    )
    assert configs == []
    assert "known only in a workspace's own file" in warnings[0]


def test_a_variable_named_like_an_editor_one_is_used_when_set() -> None:
    assert expand_text("${workspaceFolder}", {"workspaceFolder": "/w"}) == "/w"


def test_expansion_is_one_pass() -> None:
    # A value holding a placeholder is used as it is: an environment value can never
    # pull in another variable.
    env = {"A": "${B}", "B": "secret"}
    assert expand_text("${A}", env) == "${B}"


@pytest.mark.parametrize("text", ["${A:-${B}}", "${MISSING:-${B}", "${TOKEN", "price ${ 5"])
def test_a_nested_or_unclosed_placeholder_is_an_error(text: str) -> None:
    with pytest.raises(ValueError, match=r"^a nested or unclosed \$\{"):
        expand_text(text, {"A": "a", "B": "b", "TOKEN": "t"})


_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True)


@given(st.dictionaries(_NAMES, st.text(max_size=30), max_size=5), st.data())
def test_each_placeholder_becomes_exactly_its_value(env: dict[str, str], data: Any) -> None:
    names = sorted(env)
    if not names:
        return
    name = data.draw(st.sampled_from(names))
    prefix = data.draw(st.text(alphabet=st.characters(blacklist_characters="$"), max_size=10))
    assert expand_text(f"{prefix}${{{name}}}{prefix}", env) == f"{prefix}{env[name]}{prefix}"
    assert expand_text(f"${{env:{name}}}", env) == env[name]


@given(st.text(max_size=60))
def test_text_without_a_placeholder_is_unchanged(text: str) -> None:
    if "${" not in text:
        assert expand_text(text, {}) is text


# ---------------------------------------------------------------- entries


def test_the_fields_claude_code_expands_and_cwd() -> None:
    entry = {
        "command": "${HOME}/bin/server",
        "args": ["--tz", "${TZ_NAME}", 3],
        "env": {"API_KEY": "${TOKEN}", "LEVEL": "debug"},
        "cwd": "${userHome}",
        "url": "https://h/${TOKEN}",
        "headers": {"Authorization": "Bearer ${TOKEN}"},
        "description": "uses ${TOKEN}",  # not a field that is expanded
        "name": "${TOKEN}",
    }
    out = expand_entry(entry, ENV)
    assert out == {
        "command": "/home/ada/bin/server",
        "args": ["--tz", "Europe/Paris", 3],
        "env": {"API_KEY": "s3cret", "LEVEL": "debug"},
        "cwd": "/home/ada",
        "url": "https://h/s3cret",
        "headers": {"Authorization": "Bearer s3cret"},
        "description": "uses ${TOKEN}",
        "name": "${TOKEN}",
    }
    assert entry["headers"] == {"Authorization": "Bearer ${TOKEN}"}  # not changed in place


def test_an_entry_without_placeholders_is_returned_as_it_is() -> None:
    entry = {"command": "server", "args": ["-v"], "env": {"A": "1"}}
    assert expand_entry(entry, ENV) is entry


def test_an_entry_error_names_the_field_and_never_a_value() -> None:
    entry = {
        "url": "https://h/mcp",
        "headers": {"Authorization": "Bearer ${API_KEY}", "X": "${TOKEN}"},
    }
    with pytest.raises(ValueError) as caught:
        expand_entry(entry, ENV)
    message = str(caught.value)
    assert (
        message
        == "'headers'.'Authorization': environment variable API_KEY (in ${API_KEY}) is not set"
    )
    assert "s3cret" not in message


def test_a_definition_file_is_expanded_and_a_bad_entry_skipped() -> None:
    document = {
        "mcpServers": {
            "remote": {
                "type": "http",
                "url": "https://h/mcp",
                "headers": {"Authorization": "Bearer ${TOKEN}"},
            },
            "local": {"command": "server", "args": ["--key", "${API_KEY}"]},
            "time": {"command": "mcp-server-time", "args": ["--local-timezone", "${TZ_NAME:-UTC}"]},
        }
    }
    configs, warnings = parse_server_definitions(document, environ=ENV)
    assert [c.name for c in configs] == ["remote", "time"]
    assert configs[0].headers == {"Authorization": "Bearer s3cret"}
    assert configs[1].command == ("mcp-server-time", "--local-timezone", "Europe/Paris")
    skipped = [w for w in warnings if w.startswith("server 'local'")]
    assert skipped == [
        "server 'local': skipped, invalid: 'args'[1]: environment variable API_KEY "
        "(in ${API_KEY}) is not set"
    ]
    assert not any("s3cret" in w for w in warnings)


def test_without_an_environment_nothing_is_expanded() -> None:
    document = {"mcpServers": {"s": {"command": "server", "args": ["${API_KEY}"]}}}
    (config,), _ = parse_server_definitions(document)
    assert config.command == ("server", "${API_KEY}")


# ---------------------------------------------------------------- the file's bytes


def test_a_definition_file_is_utf8_json_with_an_optional_bom() -> None:
    from mcp_proto.config import decode_definition_file

    assert decode_definition_file(b'{"mcpServers": {}}') == {"mcpServers": {}}
    assert decode_definition_file(b'\xef\xbb\xbf{"mcpServers": {}}') == {"mcpServers": {}}


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "is not valid JSON: nested too deeply"),
        (b"\xff\xfe{}", "is not UTF-8 text (byte 0)"),
        (b"{not json", "is not valid JSON: Expecting property name"),
        (b"\x00" * (16 * 1024 * 1024 + 1), "is larger than 16 MiB"),
    ],
    ids=["deep", "utf16", "garbage", "huge"],
)
def test_a_bad_definition_file_is_one_clear_value_error(data: bytes, reason: str) -> None:
    from mcp_proto.config import decode_definition_file

    with pytest.raises(ValueError) as caught:
        decode_definition_file(data)
    assert str(caught.value).startswith(reason)
    assert "\n" not in str(caught.value)
