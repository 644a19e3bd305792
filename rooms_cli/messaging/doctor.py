"""Messaging's checks for `rooms doctor`: orphan spawns, finished spawns whose output never arrived,
and one alias given to two spawns in two clones (a git merge brought them together).

An orphan is a spawn record still `starting`/`running` on this machine whose worker process is
gone (killed, machine rebooted): nobody will ever finish it until `rooms tick` (or `rooms wait`)
reaps it as lost and tells its parent. Records of other machines are not judged (their processes
are not visible here). A record that does not parse is reported by the file checks already.
"""

from __future__ import annotations

import os

from rooms_cli.core.errors import InvalidData, RoomsError
from rooms_cli.core.findings import Finding
from rooms_cli.messaging.spawn import FINAL, load_spawn, record_path, spawn_ids, worker_alive
from rooms_cli.store import layout, schema

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project


def check(project: Project, config: Config) -> list[Finding]:
    findings: list[Finding] = []
    by_alias: dict[str, list[Any]] = {}
    for spawn_id in spawn_ids(project):
        path = record_path(project, spawn_id)
        try:
            spawn = load_spawn(project, spawn_id)
        except InvalidData as err:  # JSON, but not a spawn record: every reader skips it
            # a file that does not parse is named by check_files, a wrong-typed field by _typed_findings
            if _parses(path) and not schema.file_problems("spawn", path):
                findings.append(Finding("error", "spawn", f"{err.message}: readers skip it",
                                        f"repair {project.relative(path)} from git, or remove it", project.relative(path)))
            continue
        except RoomsError:
            continue  # a broken record: check_files names it
        if spawn.id != spawn_id:
            rel = project.relative(path)
            findings.append(Finding("error", "spawn", f"{rel}: its id is {spawn.id!r}, not its file name: readers skip it",
                                    f"the file was copied or renamed: restore {rel} from git, or remove it", rel))
            continue
        by_alias.setdefault(spawn.alias, []).append(spawn)
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
    for alias, spawns in sorted(by_alias.items()):
        if len(spawns) > 1:
            # one clone never reuses an alias (the alias registry): two clones chose it offline
            who = "; ".join(f"{s.id} by {s.parent} ({s.status})" for s in spawns)
            findings.append(Finding(
                "warning", "spawn",
                f"alias {alias} names {len(spawns)} spawns made in different clones ({who}): their messages and status share "
                f"one inbox and one status log",
                f"nothing is lost; read {alias}'s inbox knowing it mixes both (`rooms inbox --peek --as {alias}`), "
                f"and tell them apart by spawn id in `rooms agents --json`", project.relative(record_path(project, spawns[-1].id))))
    findings.extend(_status_findings(project))
    findings.extend(_typed_findings(project))
    return findings


def _parses(path: str) -> bool:
    import json

    from rooms_cli.store import files

    try:
        json.loads(files.read_bytes(path))
    except (OSError, ValueError):
        return False
    return True


def _typed_findings(project: Project) -> list[Finding]:
    """Inbox lines, read marks and spawn records whose fields have the wrong type (store/schema.py)."""
    from rooms_cli.core.findings import typed_findings
    from rooms_cli.messaging.inbox import inbox_owners

    inbox, owners = layout.inbox_dir(project), inbox_owners(project)
    read = layout.record_names(project, os.path.join(inbox, "read"), ".jsonl", "agent id")
    return (typed_findings(project, "inbox", "inbox", [layout.inbox_file(project, a) for a in owners], key="id")
            + typed_findings(project, "inbox", "inbox-read", [layout.inbox_read_file(project, a) for a in read], key="id")
            + typed_findings(project, "spawn", "spawn", [record_path(project, s) for s in spawn_ids(project)]))


def _status_findings(project: Project) -> list[Finding]:
    """Status logs whose fields have the wrong type (store/schema.py)."""
    from rooms_cli.core.findings import typed_findings, unreadable_findings
    from rooms_cli.messaging.status import read_status, status_names

    names = status_names(project)
    findings = typed_findings(project, "status", "status", [layout.status_log(project, a) for a in names], key="id")
    named = {f.file for f in findings if f.severity == "error"}
    return findings + [f for f in unreadable_findings(
        "status", names, lambda agent: read_status(project, agent), lambda agent, err: err.message,
        lambda rel: f"fix or delete the record in {rel} (`rooms status set` writes a new one)") if f.file not in named]
