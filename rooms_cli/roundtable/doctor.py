"""The roundtable checks for `rooms doctor`: the schedule parses, and queued roundtables that failed."""

from __future__ import annotations

from rooms_cli.errors import RoomsError
from rooms_cli.findings import Finding


def check(project, config) -> list[Finding]:
    from rooms_cli.roundtable import queue, schedule

    findings = []
    try:
        schedule.load_slots(config)
    except RoomsError as err:
        findings.append(Finding("error", "schedule", err.message, "fix the slot named in the message", ".rooms.yaml"))
    rel = project.relative(queue.queue_path(project))
    for item in queue.list_items(project):
        if item.status == "failed":
            findings.append(Finding("warning", "roundtable", f"roundtable {item.id} ({item.request.format}) failed after "
                                    f"{item.attempts} attempts: {item.error}",
                                    f"fix the cause, then queue it again: rooms roundtable queue {item.request.format}", rel))
        elif item.status == "pending" and item.not_before:
            findings.append(Finding("warning", "roundtable", f"roundtable {item.id} ({item.request.format}) failed "
                                    f"attempt {item.attempts}/{queue.MAX_ATTEMPTS} ({item.error}); "
                                    f"a tick retries it after {item.not_before}",
                                    "fix the cause (often a provider that is down: rooms models test AGENT)", rel))
    return findings
