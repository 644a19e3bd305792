"""The roundtable checks for `rooms doctor`: the schedule parses, queued roundtables that failed, and a
scheduled occurrence that ran in two clones.

Two clones whose `rooms tick` both fired one slot occurrence offline each ran it; after the merge
the queue holds both items (the second, if it had not run, is replayed as a duplicate and not run).
A double run cannot be undone, only avoided: run the schedule from one clone.
"""

from __future__ import annotations

from rooms_cli.core.errors import RoomsError
from rooms_cli.core.findings import Finding
from rooms_cli.core.text import count

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project


def check(project: Project, config: Config) -> list[Finding]:
    from rooms_cli.roundtable import queue, schedule

    findings = []
    try:
        schedule.load_slots(config)
    except RoomsError as err:
        findings.append(Finding("error", "schedule", err.message, "fix the slot named in the message", ".rooms.yaml"))
    rel = project.relative(queue.queue_path(project))
    items = queue.list_items(project)
    for item in items:
        if item.duplicate_of:
            continue  # resolved by the replay: never run
        if item.status == "failed":
            findings.append(Finding("warning", "roundtable", f"roundtable {item.id} ({item.request.format}) failed after "
                                    f"{count(item.attempts, 'attempt')}: {item.error}",
                                    f"fix the cause, then queue it again: rooms roundtable queue {item.request.format}", rel))
        elif item.status == "pending" and item.not_before:
            findings.append(Finding("warning", "roundtable", f"roundtable {item.id} ({item.request.format}) failed "
                                    f"attempt {item.attempts}/{queue.MAX_ATTEMPTS} ({item.error}); "
                                    f"a tick retries it after {item.not_before}",
                                    "fix the cause (often a provider that is down: rooms models test AGENT)", rel))
    by_key: dict[str, list[Any]] = {}
    for item in items:
        if item.key is not None and (item.status in ("running", "done") or item.attempts):
            by_key.setdefault(item.key, []).append(item)
    findings.extend(
        Finding("warning", "schedule",
                f"scheduled roundtable {key} ran {len(runs)} times ({', '.join(i.id for i in runs)}): "
                f"rooms tick fired it in more than one clone before they merged",
                "keep both transcripts (nothing is lost); to avoid it, run `rooms tick` (cron) in one clone only", rel)
        for key, runs in sorted(by_key.items()) if len(runs) > 1
    )
    return findings + _typed_findings(project)


def _typed_findings(project: Project) -> list[Finding]:
    """The queue, the fired log and memories: records whose fields have the wrong type (store/schema.py)."""
    from rooms_cli.agents.memories import agents_with_lessons
    from rooms_cli.core.findings import typed_findings
    from rooms_cli.store import layout

    return (typed_findings(project, "roundtable", "roundtable-queue", [layout.roundtable_queue_file(project)])
            + typed_findings(project, "schedule", "schedule-fired", [layout.schedule_fired_log(project)], key="id")
            + typed_findings(project, "memories", "memory", [layout.memories_file(project, a) for a in agents_with_lessons(project)],
                             key="id"))
