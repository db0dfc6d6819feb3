"""The Task handle and the wire parsers of both eras (TASK-2, TASK-16)."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest
from _proto_support import json_values
from _tasks_support import legacy_task, modern_task
from hypothesis import given
from hypothesis import strategies as st

from mcp_proto.errors import RemoteProtocolError
from mcp_proto.tasks import (
    Task,
    TaskStatus,
    parse_create_result,
    parse_list_result,
    parse_task,
)
from mcp_proto.tasks.ops import task_of_notification


def test_status_enum_and_predicates() -> None:
    task = Task("t", "input_required")
    assert task.is_input_required and task.is_active and not task.is_terminal
    assert Task("t", "completed").is_completed and Task("t", "failed").is_terminal
    with pytest.raises(ValueError):
        Task("t", "done")
    assert Task("t", "working") == Task("t", TaskStatus.WORKING, server="x")  # id + status
    assert Task("t", "working") != Task("t", "completed")


def test_legacy_parse_is_tolerant_of_what_the_schema_allows() -> None:
    task = parse_task(legacy_task(ttl=None, pollInterval=5000.0, extra={"x": 1}), era="legacy")
    assert task.ttl is None and task.poll_interval == 5000
    bare = parse_task({"taskId": "a", "status": "working"}, era="legacy")
    assert bare.created_at is None and bare.ttl_ms is None
    assert parse_task(legacy_task(ttl=-5), era="legacy").ttl_ms == 0


@pytest.mark.parametrize(
    "bad",
    [
        None,
        [],
        {"status": "working"},
        {"taskId": 1, "status": "working"},
        {"taskId": "a", "status": "sleeping"},
        {"taskId": "a", "status": ["working"]},
        {"taskId": "a", "status": "working", "ttl": "60s"},
        {"taskId": "a", "status": "working", "ttl": 1.5},
        {"taskId": "a", "status": "working", "ttl": 10**400},
        {"taskId": "a", "status": "working", "pollInterval": True},
        {"taskId": "a", "status": "working", "createdAt": 5},
    ],
)
def test_garbage_is_a_remote_protocol_error(bad: Any) -> None:
    with pytest.raises(RemoteProtocolError):
        parse_task(bad, era="legacy")


def test_modern_detailed_tasks() -> None:
    done = parse_task(modern_task(status="completed", result={"content": []}), era="modern")
    assert done.result == {"content": []}
    with pytest.raises(RemoteProtocolError, match="no result"):
        parse_task(modern_task(status="completed"), era="modern")
    with pytest.raises(RemoteProtocolError, match="no error"):
        parse_task(modern_task(status="failed"), era="modern")
    with pytest.raises(RemoteProtocolError, match="inputRequests"):
        parse_task(modern_task(status="input_required"), era="modern")
    with pytest.raises(RemoteProtocolError, match="no method"):
        parse_task(modern_task(status="input_required", inputRequests={"k": {}}), era="modern")
    with pytest.raises(RemoteProtocolError, match="pollIntervalMs is null"):
        parse_task(modern_task(pollIntervalMs=None), era="modern")
    assert parse_task(modern_task(ttlMs=None), era="modern").ttl_ms is None


def test_create_results_of_both_eras() -> None:
    assert parse_create_result({"task": legacy_task()}, era="legacy").task_id == "t1"
    with pytest.raises(RemoteProtocolError):
        parse_create_result({"content": []}, era="legacy")
    assert parse_create_result(modern_task(resultType="task"), era="modern").era == "modern"
    with pytest.raises(RemoteProtocolError, match="not 'task'"):
        parse_create_result(modern_task(), era="modern")


def test_list_result() -> None:
    page = parse_list_result({"tasks": [legacy_task()], "nextCursor": "n"}, server="s")
    assert page.tasks[0].server == "s" and page.next_cursor == "n"
    for bad in ({}, {"tasks": {}}, {"tasks": [], "nextCursor": 3}, {"tasks": [{"taskId": 1}]}):
        with pytest.raises(RemoteProtocolError):
            parse_list_result(bad)


def test_status_notifications_announce_only() -> None:
    task = task_of_notification("s", "notifications/tasks/status", legacy_task(), era="legacy")
    assert task is not None and task.server == "s"
    assert task_of_notification("s", "notifications/tasks", {"x": 1}, era="modern") is None
    assert task_of_notification("s", "notifications/message", {}, era="legacy") is None


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_to_dict_from_dict_round_trip(era: str) -> None:
    wire = legacy_task() if era == "legacy" else modern_task(status="completed", result={"a": 1})
    task = parse_task(wire, era=era, server="srv")  # type: ignore[arg-type]
    task = Task.from_dict(task.to_dict() | {"tool": {"name": "x"}, "answered": ["k"]})
    again = Task.from_dict(json.loads(json.dumps(task.to_dict())))
    assert again.to_dict() == task.to_dict()
    assert (again.server, again.era, again.answered, again.tool) == (
        "srv",
        era,
        {"k"},
        {"name": "x"},
    )
    assert ("ttl" if era == "legacy" else "ttlMs") in again.to_dict()  # always present
    assert Task.from_dict(again.to_dict(), server="other").server == "other"  # TASK-7


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_handle_read_back_from_its_json_text(era: str) -> None:
    # TASK-16: what one process writes (to_json) another reads (from_json, §E1), as
    # text or bytes; it is the same handle, not a task whose id is the text.
    wire = (
        legacy_task()
        if era == "legacy"
        else modern_task(status="input_required", inputRequests={"k": {"method": "roots/list"}})
    )
    task = attrs.evolve(parse_task(wire, era=era, server="srv"), answered=frozenset({"k"}))  # type: ignore[arg-type]
    text = task.to_json()
    assert json.loads(text) == task.to_dict()
    for data in (text, text.encode(), " \n" + text, task.to_dict()):
        again = Task.from_json(data)
        assert again.to_dict() == task.to_dict() and again.task_id == task.task_id
    assert Task.from_json(text, server="other").server == "other"
    assert Task.from_json("t-1", server="s").task_id == "t-1"  # a bare id, as from_dict
    with pytest.raises(ValueError):
        Task.from_json("{not json")


def test_from_dict_refuses_garbage_with_value_error() -> None:
    for bad in ({"taskId": 1}, {"taskId": "a", "status": "x"}, {**legacy_task(), "tool": 3}):
        with pytest.raises(ValueError):
            Task.from_dict(bad)
    assert Task.from_dict("bare", server="s").status is TaskStatus.WORKING


@given(json_values, st.sampled_from(["legacy", "modern"]))
def test_any_json_parses_or_is_a_remote_protocol_error(value: Any, era: str) -> None:
    for data in (value, {"taskId": "t", "status": "working", "x": value}, {"task": value}):
        try:
            parse_task(data, era=era)  # type: ignore[arg-type]
            parse_create_result(data, era=era)  # type: ignore[arg-type]
        except RemoteProtocolError:
            pass
