"""Messaging's checks for `rooms doctor`: orphan spawns, and finished spawns whose output never arrived.

An orphan is a spawn record still `starting`/`running` on this machine whose worker process is
gone (killed, machine rebooted): nobody will ever finish it until `rooms tick` (or `rooms wait`)
reaps it as lost and tells its parent. Records of other machines are not judged (their processes
are not visible here). A record that does not parse is reported by the file checks already.
"""

from __future__ import annotations

from rooms_cli.errors import RoomsError
from rooms_cli.findings import Finding
from rooms_cli.messaging.spawn import FINAL, load_spawn, record_path, worker_alive
from rooms_cli.store import layout


def check(project, config) -> list[Finding]:
    folder = layout.spawns_dir(project)
    findings = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            spawn = load_spawn(project, path.stem)
        except RoomsError:
            continue  # a broken record: check_files names it
        rel = project.relative(record_path(project, spawn.id))
        who = f"spawn {spawn.id} ({spawn.alias}, started by {spawn.parent})"
        if spawn.active and spawn.local and not worker_alive(project, spawn.id):
            findings.append(Finding(
                "warning", "spawn",
                f"{who} is {spawn.status} but its process (pid {spawn.pid}) is gone: an orphan",
                f"rooms tick   (marks it lost and tells {spawn.parent}; its output will never arrive)", rel))
        elif spawn.status in FINAL and spawn.delivered is None:
            findings.append(Finding(
                "warning", "spawn",
                f"{who} {spawn.status}, but no message about it reached {spawn.parent}'s inbox",
                f"its output and error are in {rel}; tell {spawn.parent} with: rooms send --to {spawn.parent} '…'", rel))
    return findings
