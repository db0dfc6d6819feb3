"""``mcp-proto call --task``, ``tasks``, ``task``, ``skills``, ``skill`` (issue 23) as a
user runs them: the CLI as a process, against server-everything (its 2025-11-25 task
API) and the scripted skills server (tests/servers/skills_server.py)."""

from __future__ import annotations

import json
import sys

import pytest
from test_cli_real import EVERYTHING, ROOT, one_line_error, run

pytestmark = pytest.mark.peer

SKILLS = [sys.executable, str(ROOT / "tests" / "servers" / "skills_server.py")]


def test_call_task_shows_the_status_then_prints_the_result() -> None:
    proc = run("call", "--task", "simulate-research-query", "topic=cli", server=EVERYTHING)
    assert proc.returncode == 0, proc.stderr
    assert "# Research Report: cli" in proc.stdout
    notes = [line for line in proc.stderr.splitlines() if ": task " in line]
    assert notes[0].endswith(": working") and "completed" in notes[-1]
    assert len(notes) == len(set(notes))  # each status change once


def test_tasks_and_task_get_of_an_unknown_id() -> None:
    proc = run("tasks", server=EVERYTHING)
    assert proc.returncode == 0 and proc.stdout.strip() == "(no tasks)", proc.stderr
    proc = run("--json", "tasks", server=EVERYTHING)
    assert json.loads(proc.stdout) == {"tasks": [], "nextCursor": None}
    proc = run("task", "get", "no-such-task", server=EVERYTHING)
    assert proc.returncode == 4 and "tasks/get" in one_line_error(proc)


def test_skills_and_a_verified_skill() -> None:
    proc = run("skills", server=[*SKILLS, "good"])
    assert proc.returncode == 0 and "pdf-processing" in proc.stdout, proc.stderr
    proc = run("skill", "pdf-processing", server=[*SKILLS, "good"])
    assert proc.returncode == 0 and proc.stdout.startswith("---\nname: pdf-processing")
    proc = run("skill", "pdf-processing", server=[*SKILLS, "digest"])
    assert proc.returncode == 4 and "digest does not match" in one_line_error(proc)
