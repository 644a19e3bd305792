"""The reservations' checks for `rooms doctor`: expired but still held (unrecorded), merged overlaps."""

from __future__ import annotations

from rooms_cli.core.findings import Finding
from rooms_cli.reservations.ledger import lapsed_unrecorded, load, log_path


def check(project, config) -> list[Finding]:
    path = log_path(project)
    if not path.exists():
        return []
    rel = project.relative(path)
    findings = [Finding("warning", "reservations",
                        f"reservation {r.id} of {r.agent} ({' '.join(r.patterns)}) expired at {r.expires_at} but was never "
                        "released (it no longer holds anything)",
                        f"rooms tick   (records the expiry), or rooms files release --all --as {r.agent}", rel)
                for r in lapsed_unrecorded(project)]
    findings += [Finding("warning", "reservations",
                         f"reservation {r.id} of {r.agent} ({' '.join(r.patterns)}) overlaps {r.lost_to}, granted first in "
                         "another clone; it is not enforced",
                         f"rooms files release {r.id} --as {r.agent}, then reserve again once the other is released", rel)
                 for r in load(project).values() if r.lost_to and r.released is None]
    return findings
