"""The board's checks for `rooms doctor`: merge conflicts, lapsed leases not yet recorded, headless logs,
the same line twice, files in `tasks/` that are no task log, leases claiming to run longer than the
longest lease allows (a writer whose clock ran ahead), and dependencies no task can get past (a cycle
a merge made; a dependency failed, cancelled, archived or missing)."""

from __future__ import annotations

import os

from rooms_cli.board import store
from rooms_cli.board.deps import NEEDS_PERSON
from rooms_cli.board.model import Task
from rooms_cli.board.tasks import load_board, whole_graph
from rooms_cli.core.findings import Finding

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project


def check(project: Project, config: Config | None) -> list[Finding]:
    findings = _create_findings(project)
    for room in store.list_board_rooms(project):
        board = load_board(project, room, archived=True, keep_headless=True)
        findings.extend(_dependency_findings(project, room, board))
        for task in board:
            rel = project.relative(store.task_path(project, room, task.id))
            if not task.created_at:
                findings.append(Finding("error", "board", f"{rel} has no create event: the task cannot be shown",
                                        "restore the file from git, or remove it if the task never existed", rel))
            lines = None
            for conflict in task.conflicts:
                lines = _event_lines(store.task_path(project, room, task.id)) if lines is None else lines
                at = lines.get(_event_key(conflict.event))
                where = f"{rel} line {at}: " if at else ""
                # a double claim (two clones claimed it: two workers think it is theirs) and an event no
                # replay can apply are errors; a stale write (a lease that had lapsed) is recorded history
                severity = "error" if conflict.kind in ("double_claim", "invalid_event") else "warning"
                findings.append(Finding(severity, "board", f"{where}task {task.id} in room {room}: {conflict.message}",
                                        f"rooms task show {task.id} --room {room}; then rooms task resolve {task.id} --room {room}",
                                        rel))
            if task.lapsed_lease is not None and not task.expiry_recorded:
                lease = task.lapsed_lease
                findings.append(Finding("warning", "board",
                                        f"task {task.id} in room {room}: lease {lease.lease_id} of {lease.plate or lease.holder} "
                                        f"lapsed at {lease.expires_at} (the task reads as todo)",
                                        "rooms tick   (records the expiry)", rel))
    return findings


def _dependency_findings(project: Project, room: str, board: list[Task]) -> list[Finding]:
    """A dependency cycle among open tasks (error: none of them can become ready; only a merge makes
    one), and an open task waiting on a dependency that will not get done by itself (warning)."""
    graph = whole_graph(project, room, [t.to_json() for t in board])
    findings = []
    for cycle in graph.cycles():
        path = " → ".join(cycle)
        findings.append(Finding("error", "board", f"room {room}: dependency cycle {path}: none of these tasks can become ready",
                                f"drop one of its dependencies: rooms task update {cycle[0]} --depends-on … --room {room}",
                                project.relative(store.task_path(project, room, cycle[0]))))
    for task in board:
        for dep in [] if task.archived else task.blocked_by:
            info = graph.info(dep)
            if info["status"] not in NEEDS_PERSON:
                continue
            what = "not on the board" if info["status"] == "missing" else info["status"]
            findings.append(Finding("warning", "board",
                                    f"task {task.id} in room {room} waits on {dep}, which is {what}: it cannot become ready",
                                    f"retry or replace {dep}, or drop the dependency: rooms task update {task.id} "
                                    f"--depends-on … --room {room}", project.relative(store.task_path(project, room, task.id))))
    return findings


def _create_findings(project: Project) -> list[Finding]:
    """A create naming another task than its file, and one task id created in two logs. (A create
    whose fields break store/schema.py — a lane that escapes — is a conflict of the replay, above.)
    And per log: the same line twice, a claim or renewal claiming a longer lease than allowed; per
    room: a file in `tasks/` that is no task log (every reader skips it)."""
    from rooms_cli.store import schema

    findings = []
    seen: dict[str, str] = {}
    for room in store.list_board_rooms(project):
        findings += _strays(project, room)
        for task_id in store.list_task_ids(project, room):
            path = store.task_path(project, room, task_id)
            rel = project.relative(path)
            records = list(schema.records(path))
            findings += _repeats(rel, records) + _long_leases(rel, records)
            for line, event in records:
                if not isinstance(event, dict) or event.get("ev") != "create":
                    continue
                named = event.get("task", task_id)
                if isinstance(named, str) and named != task_id:
                    findings.append(Finding("error", "board", f"{rel} line {line}: create event names task {named}, not {task_id}",
                                            f"the file was copied or renamed: restore {rel} from git, or remove it", rel))
                key = str(named)
                if key in seen and seen[key] != rel:
                    findings.append(Finding("error", "board", f"task id {key} is created in two logs: {seen[key]} and {rel}",
                                            f"keep one: remove the copy ({rel}) after checking its events", rel))
                seen.setdefault(key, rel)
    return findings


def _strays(project: Project, room: str) -> list[Finding]:
    """Files in a board's `tasks/` whose name is no task log (`notes.jsonl`): the board never reads them."""
    from rooms_cli.store import files
    from rooms_cli.store.ids import is_valid_name

    folder = store.tasks_dir(project, room)
    found = []
    for name in files.names(folder):
        if name.startswith("."):
            continue  # a temp file: the file checks name it
        stem = name[: -len(store.SUFFIX)] if name.endswith(store.SUFFIX) else ""
        if not (stem.lower().startswith("t-") and is_valid_name(stem.lower())):
            from rooms_cli.core import terminal

            rel = terminal.safe(project.relative(os.path.join(folder, name)))
            found.append(Finding("error", "stray", f"{rel} is not read by rooms: a board's tasks/ holds only task logs "
                                 "(t-<id>.jsonl), so every reader skips it",
                                 "move it out of .rooms/ (or, if it holds a task's events, name it after its task id)", rel))
    return found


def _repeats(rel: str, records: list[tuple[int | None, Any]]) -> list[Finding]:
    """The same line twice in a task log: replay counts it once (a warning, as in every other log)."""
    first: dict[str, int] = {}
    found = []
    for line, event in records:
        if line is None or not isinstance(event, dict):
            continue
        key = _event_key(event)
        if key in first:
            found.append(Finding("warning", "board", f"{rel} line {line} repeats line {first[key]} (the same event twice: "
                                 "counted once)", f"nothing is lost; to tidy, delete line {line} of {rel}", rel))
        else:
            first[key] = line
    return found


def _long_leases(rel: str, records: list[tuple[int | None, Any]]) -> list[Finding]:
    """A claim or renewal whose lease ends later than the longest lease allows after its own stamp, or
    after the record before it when its own stamp is beyond the allowed skew ahead of now: replay holds
    it only that long (board/replay.bounded_expiry); its writer's clock ran ahead."""
    from rooms_cli.board.replay import bounded_expiry
    from rooms_cli.store import order
    from rooms_cli.store.clock import in_force, now_iso

    found = []
    before = ""
    now = now_iso()
    lines = {id(event): line for line, event in records}
    for event in order.ordered([event for _, event in records if isinstance(event, dict)]):
        expires, at = event.get("expires_at"), event.get("at")
        if event.get("ev") in ("claim", "renew") and isinstance(expires, str) and isinstance(at, str) and before:
            held = bounded_expiry(expires, max(before, at))
            if not in_force(at, now):
                held = bounded_expiry(held, before)
            if held != expires:
                where = f"{rel} line {lines[id(event)]}" if lines.get(id(event)) else rel
                found.append(Finding("error", "board", f"{where}: lease {event.get('lease_id')} of {event.get('holder', '?')} "
                                     f"claims to run until {expires}, longer than the longest lease allows after the record "
                                     f"before it ({before}); it holds until {held}",
                                     "check the clock of the machine that wrote it (it ran ahead); rooms task release, "
                                     "then claim again from a machine with the right time", rel))
        if isinstance(event.get("at"), str):
            before = event["at"]
    return found


def _event_key(event: dict[str, Any]) -> str:
    import json

    return json.dumps(event, sort_keys=True, default=str)


def _event_lines(path: str) -> dict[str, int]:
    """Each event of a task log (as replay saw it) -> its line: a conflict is named by file and line."""
    from rooms_cli.store import schema

    return {_event_key(event): line for line, event in schema.records(path) if isinstance(event, dict) and line is not None}
