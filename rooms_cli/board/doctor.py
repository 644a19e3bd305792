"""The board's checks for `rooms doctor`: merge conflicts, lapsed leases not yet recorded, headless logs."""

from __future__ import annotations

from rooms_cli.board import store
from rooms_cli.board.tasks import load_board
from rooms_cli.findings import Finding


def check(project, config) -> list[Finding]:
    findings = []
    for room in store.list_board_rooms(project):
        for task in load_board(project, room, archived=True, keep_headless=True):
            rel = project.relative(store.task_path(project, room, task.id))
            if not task.created_at:
                findings.append(Finding("error", "board", f"{rel} has no create event: the task cannot be shown",
                                        "restore the file from git, or remove it if the task never existed", rel))
            for conflict in task.conflicts:
                findings.append(Finding("warning", "board", f"task {task.id} in room {room}: {conflict.message}",
                                        f"rooms task show {task.id} --room {room}; then rooms task resolve {task.id} --room {room}",
                                        rel))
            if task.lapsed_lease is not None and not task.expiry_recorded:
                lease = task.lapsed_lease
                findings.append(Finding("warning", "board",
                                        f"task {task.id} in room {room}: lease {lease.lease_id} of {lease.plate or lease.holder} "
                                        f"lapsed at {lease.expires_at} (the task reads as todo)",
                                        "rooms tick   (records the expiry)", rel))
    return findings
