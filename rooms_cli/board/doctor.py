"""The board's checks for `rooms doctor`: merge conflicts, lapsed leases not yet recorded, headless logs."""

from __future__ import annotations

from rooms_cli.board import store
from rooms_cli.board.tasks import load_board
from rooms_cli.core.findings import Finding

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


def check(project, config) -> list[Finding]:
    findings = _create_findings(project)
    for room in store.list_board_rooms(project):
        for task in load_board(project, room, archived=True, keep_headless=True):
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


def _create_findings(project) -> list[Finding]:
    """A create naming another task than its file, and one task id created in two logs. (A create
    whose fields break store/schema.py — a lane that escapes — is a conflict of the replay, above.)"""
    from rooms_cli.store import schema

    findings = []
    seen: dict[str, str] = {}
    for room in store.list_board_rooms(project):
        for task_id in store.list_task_ids(project, room):
            path = store.task_path(project, room, task_id)
            rel = project.relative(path)
            for line, event in schema.records(path):
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


def _event_key(event: dict[str, Any]) -> str:
    import json

    return json.dumps(event, sort_keys=True, default=str)


def _event_lines(path) -> dict[str, int]:
    """Each event of a task log (as replay saw it) -> its line: a conflict is named by file and line."""
    from rooms_cli.store import schema

    return {_event_key(event): line for line, event in schema.records(path) if isinstance(event, dict) and line is not None}
