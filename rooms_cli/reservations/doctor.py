"""The reservations' checks for `rooms doctor`: a ledger that cannot be read, events its reader skips,
expired but still held (unrecorded), merged overlaps, reservations that claim to run too long."""

from __future__ import annotations

import os

from rooms_cli.core.errors import InvalidData
from rooms_cli.core.findings import Finding
from rooms_cli.reservations.ledger import log_path, read_events, replay, unrecorded_lapses, within_bound
from rooms_cli.store.clock import iso, now

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.store.paths import Project


def check(project: Project, config: object) -> list[Finding]:
    path = log_path(project)
    if not os.path.exists(path):
        return []
    rel = project.relative(path)
    try:
        events = read_events(project)
    except InvalidData as err:
        return [Finding("error", "reservations", err.message,
                        f"restore it from git (git checkout -- {rel}); meanwhile the commit guard refuses every commit", rel)]
    skipped: list[tuple[dict[str, Any], str]] = []
    found = replay(events, skipped)
    findings = []
    for ev, why in skipped:
        unknown = why.startswith("its reservation")
        findings.append(Finding(
            "warning" if unknown else "error", "reservations",
            f"{rel}: {ev.get('ev')!r} event {ev.get('eid', ev.get('id', '?'))} is skipped by every reader: {why}",
            "nothing to do if its reservation was never granted here; otherwise restore the ledger from git" if unknown
            else f"delete that line of {rel} (or fix it) and reserve again with rooms files reserve", rel))
    moment = iso(now())
    findings += [Finding("warning", "reservations",
                         f"reservation {r.id} of {r.agent} ({' '.join(r.patterns)}) expired at {r.expires_at} but was never "
                         "released (it no longer holds anything)",
                         f"rooms tick   (records the expiry), or rooms files release --all --as {r.agent}", rel)
                 for r in unrecorded_lapses(found, moment)]
    findings += [Finding("warning", "reservations",
                         f"reservation {r.id} of {r.agent} ({' '.join(r.patterns)}) overlaps {r.lost_to}, granted first in "
                         "another clone; it is not enforced",
                         f"rooms files release {r.id} --as {r.agent}, then reserve again once the other is released", rel)
                 for r in found.values() if r.lost_to and r.released is None]
    findings += [Finding("error", "reservations", f"reservation {r.id} of {r.agent} claims to hold until {r.claimed_until}, "
                         f"longer than the longest reservation allows from the record before it; it holds until {r.expires_at}",
                         "check the clock of the machine that wrote it (it ran ahead)", rel)
                 for r in found.values() if not within_bound(r)]
    return findings
