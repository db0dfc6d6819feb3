"""``${VAR}`` placeholders in server definition files, expanded from an environment.

Definition files written for other MCP hosts keep secrets and machine-specific paths
out of the file with placeholders, and those hosts expand them when they read it:

* Claude Code (``.mcp.json``): ``${VAR}`` and ``${VAR:-default}`` in ``command``,
  ``args``, ``env``, ``url`` and ``headers``;
* VS Code and Cursor (``mcp.json``): ``${env:VAR}``, and ``${userHome}``.

Sent as they are, ``"Authorization": "Bearer ${API_KEY}"`` would reach the server with
the placeholder instead of the key. So the same fields (and ``cwd``) are expanded here,
from an environment the shell passes in (this module reads no process state):

* ``${VAR}`` and ``${env:VAR}``: the variable's value (empty if set empty); unset is
  an error naming it;
* ``${VAR:-default}``: the value, or ``default`` when the variable is unset or empty
  (the shell's ``:-``);
* ``${userHome}``: ``HOME``;
* ``${workspaceFolder}`` and ``${workspaceFolderBasename}``, in a workspace's own file
  (``<folder>/.vscode/mcp.json``, ``<folder>/.cursor/mcp.json``): that folder, the one
  above ``.vscode/`` as VS Code defines it (:func:`workspace_folder` finds it from the
  file's path; the shell passes it in).

Anything else written ``${...}`` (VS Code's ``${input:id}`` prompts, ``${workspaceFolder}``
in a file that belongs to no workspace...) is an error naming it, never sent as it is,
and so is a nested (``${A:-${B}}``) or
unclosed ``${``. A bare ``$VAR`` is not a placeholder
(as in Claude Code). Expansion is one pass: a value that itself contains ``${...}`` is
used as it is, never expanded again. Errors name the variable and where it was, never
a value (values are often secrets).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

__all__ = ["EXPANDED_FIELDS", "expand_entry", "expand_text", "workspace_folder"]

#: The fields of a server entry whose strings are expanded (the string itself, each
#: string of a list, each value of a mapping).
EXPANDED_FIELDS: Final = (
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "base_url",
    "serverUrl",
    "httpUrl",
    "headers",
)

_PLACEHOLDER: Final = re.compile(r"\$\{([^{}]*)\}")
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# VS Code / Cursor predefined variables: named in the error, since they are not
# environment variables.
_EDITOR_VARIABLES: Final = frozenset(
    {"workspaceFolder", "workspaceFolderBasename", "workspaceRoot", "pathSeparator", "/"}
)
_WORKSPACE_VARIABLES: Final = frozenset({"workspaceFolder", "workspaceFolderBasename"})


#: The folders a workspace keeps its editor's files in: the workspace is the folder
#: above (VS Code: ``${workspaceFolder}``, "the path of the folder opened in VS Code";
#: Cursor fills it in the same way for its project file).
_WORKSPACE_DIRS: Final = frozenset({".vscode", ".cursor"})


def _split(path: str) -> tuple[str, str]:
    """``(folder, name)`` of a path written with ``/`` or ``\\`` (pure string work: the
    core reads no file and imports no path module)."""
    path = path.rstrip("/\\") or path
    cut = max(path.rfind("/"), path.rfind("\\"))
    if cut < 0:
        return "", path
    return (path[:cut] or path[: cut + 1]), path[cut + 1 :]


def workspace_folder(path: str, home: str | None = None) -> str | None:
    """The workspace folder of the definition file at ``path`` (absolute): the folder
    above its ``.vscode/`` or ``.cursor/`` folder, or None for a file that belongs to
    no workspace. ``~/.cursor/mcp.json`` (``home``: the user's home folder) is Cursor's
    global file, used with whatever project is open: None too."""
    if not path.startswith(("/", "\\")) and not re.match(r"[A-Za-z]:[/\\]", path):
        return None  # relative: the shell passes an absolute path
    folder, _ = _split(path)
    workspace, kind = _split(folder)
    if kind not in _WORKSPACE_DIRS or not workspace:
        return None
    if kind == ".cursor" and home is not None and _split(home + "/x")[0] == workspace:
        return None
    return workspace


def expand_text(text: str, environ: Mapping[str, str], workspace: str | None = None) -> str:
    """``text`` with its placeholders replaced from ``environ`` (and ``workspace``,
    the file's :func:`workspace_folder`, for ``${workspaceFolder}``).

    Raises:
        ValueError: an unset variable without a default, a placeholder this client
            does not expand, a nested or unclosed ``${``; the message names it (never
            a value).
    """
    if "${" not in text:
        return text  # (most strings: no regex pass)
    if "${" in _PLACEHOLDER.sub("", text):
        # ``${A:-${B}}`` or an unclosed ``${``: never sent half expanded.
        raise ValueError("a nested or unclosed ${ (write ${VAR} or ${VAR:-default})")

    def one(match: re.Match[str]) -> str:
        body = match.group(1)
        default: str | None = None
        if workspace is not None and body in _WORKSPACE_VARIABLES:
            return workspace if body == "workspaceFolder" else _split(workspace)[1]
        if body.startswith("env:"):
            name = body[4:]
        elif body == "userHome":
            name = "HOME"
        else:
            name, sep, rest = body.partition(":-")
            if sep:
                default = rest
        if not _NAME.fullmatch(name):
            raise ValueError(_unsupported(body))
        value = environ.get(name)
        if default is not None:
            return value if value else default
        if value is None:
            if body in _EDITOR_VARIABLES:
                raise ValueError(_unsupported(body))
            raise ValueError(f"environment variable {name} (in ${{{body}}}) is not set")
        return value

    return _PLACEHOLDER.sub(one, text)


def _unsupported(body: str) -> str:
    if body.startswith("input:"):
        return (
            f"${{{body}}}: VS Code input prompts are not supported; "
            "write the value into the file or an environment variable (${env:NAME})"
        )
    if body in _WORKSPACE_VARIABLES:
        return (
            f"${{{body}}} is known only in a workspace's own file "
            "(<folder>/.vscode/mcp.json or <folder>/.cursor/mcp.json)"
        )
    shown = body if len(body) <= 40 else body[:40] + "..."
    return (
        f"${{{shown}}} is not a placeholder this client expands "
        "(${VAR}, ${VAR:-default}, ${env:VAR}, ${userHome})"
    )


def expand_entry(
    entry: Mapping[str, Any], environ: Mapping[str, str], workspace: str | None = None
) -> Mapping[str, Any]:
    """A server entry of a definition file with the placeholders of
    :data:`EXPANDED_FIELDS` expanded (the entry itself when it has none). Values
    that are not strings (a malformed field) are left for the entry's own checks.

    Raises:
        ValueError: as :func:`expand_text`, the message prefixed with the field
            (``'headers'.'Authorization': environment variable API_KEY is not set``).
    """
    out: dict[str, Any] | None = None
    for field in EXPANDED_FIELDS:
        value = entry.get(field)
        if value is None:
            continue
        expanded = _expand_value(value, environ, repr(field), workspace)
        if expanded is not value:
            if out is None:
                out = dict(entry)
            out[field] = expanded
    return entry if out is None else out


def _expand_value(value: Any, environ: Mapping[str, str], where: str, workspace: str | None) -> Any:
    """``value`` expanded (a new object if anything changed, else ``value`` itself)."""
    if isinstance(value, str):
        try:
            expanded = expand_text(value, environ, workspace)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
        return value if expanded == value else expanded
    if isinstance(value, list):
        items = [_expand_value(v, environ, f"{where}[{i}]", workspace) for i, v in enumerate(value)]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return items if changed else value
    if isinstance(value, Mapping):
        pairs = {
            k: _expand_value(v, environ, f"{where}.{str(k)!r}", workspace) for k, v in value.items()
        }
        changed = any(pairs[k] is not v for k, v in value.items())
        return pairs if changed else value
    return value
