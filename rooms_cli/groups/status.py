"""Member states and the group label `▣ <name> [<busy>/<total> <state>]`.

A member is busy while it owes a reply to the broadcast in flight; errored when its reply to the
last gathered broadcast was an error; lost when its agent (or sub-group) no longer exists or it
timed out on the last gathered broadcast; idle otherwise. The label shows the worst state:
⛔ any lost, ⚠ any errored, ⏳ any busy, ✓ all idle.
"""

from __future__ import annotations

import os

from rooms_cli.core.errors import InvalidInput
from rooms_cli.groups import log
from rooms_cli.groups.model import ERROR, TIMEOUT, Group, Member
from rooms_cli.store import layout
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

EMOJI = {"lost": "⛔", "errored": "⚠", "busy": "⏳", "idle": "✓"}
_SEVERITY = ("lost", "errored", "busy", "idle")


def _exists(project: Project, m: Member) -> bool:
    if m.sub_group:
        return log.exists(project, m.sub_group)
    try:
        return os.path.exists(layout.agent_file(project, m.profile))
    except InvalidInput:
        return False


def member_states(project: Project, group: Group) -> dict[str, str]:
    inflight = group.in_flight
    last = next((b for b in reversed(group.broadcasts) if b.status == "gathered" and b.result), None)
    result = (last.result if last else None) or {}
    last_status = {h: r.get("status") for h, r in (result.get("by_member") or {}).items()}
    states = {}
    for m in group.members:
        if not _exists(project, m) or last_status.get(m.handle) == TIMEOUT:
            state = "lost"
        elif inflight and inflight.member(m.handle) and m.handle not in inflight.replies:
            state = "busy"
        elif last_status.get(m.handle) == ERROR:
            state = "errored"
        else:
            state = "idle"
        states[m.handle] = state
    return states


def label(name: str, states: dict[str, str]) -> str:
    busy = sum(1 for s in states.values() if s == "busy")
    worst = next((s for s in _SEVERITY if s in states.values()), "idle")
    return f"▣ {name} [{busy}/{len(states)} {EMOJI[worst]}]"


def status(project: Project, name: str, recent: int = 5) -> dict[str, Any]:
    """Members with their state, the broadcast in flight, recent broadcasts, and the label."""
    group = log.load(project, name, head=recent <= log.HEAD_BROADCASTS)  # the newest broadcasts are enough
    states = member_states(project, group)
    inflight = group.in_flight
    return {
        "name": name,
        "label": label(name, states),
        "ephemeral": group.ephemeral,
        "members": [{**m.to_json(), "state": states[m.handle]} for m in group.members],
        "in_flight": {**inflight.summary(), "pending": [m.handle for m in inflight.pending()]} if inflight else None,
        # another broadcast still in flight (two clones broadcast at once, then merged) shows here
        "recent": [b.summary() for b in reversed(group.broadcasts[-recent:]) if b is not inflight],
    }


def list_groups(project: Project) -> list[dict[str, Any]]:
    rows = []
    for name in log.log_names(project):
        group = log.load_optional(project, name)
        if group is None:
            continue
        states = member_states(project, group)
        rows.append({
            "name": name, "label": label(name, states), "members": [m.handle for m in group.members],
            "in_flight": group.in_flight.id if group.in_flight else None, "broadcasts": len(group.broadcasts),
        })
    return rows
