"""The turn budget: clamp(ceil(1.5 × roster), 6, 21) substantive replies between human check-ins.

Each substantive reply costs one; passes and flavor lines cost nothing. At zero the room records
`budget_exhausted` and stops prompting; direct mentions posted meanwhile are queued and replayed by
`/continue`, which resets the budget from the current roster. A queued mention leaves the queue
only once it has been replayed, so a crash or a second exhaustion during the replay loses nothing.
"""

from __future__ import annotations

from rooms_cli.chat.rooms import budget_for, update_room

EXHAUSTED_TEXT = "Turn budget used up. /continue to keep going."


def charge(project, room: str, turns: int = 1) -> int:
    """Spend `turns` (never below zero); return what is left."""
    left = [0]

    def spend(state):
        state.budget_remaining = max(0, state.budget_remaining - turns)
        left[0] = state.budget_remaining

    update_room(project, room, spend)
    return left[0]


def queue_mention(project, room: str, entry: dict) -> None:
    """Remember a direct mention made at zero budget (merged with a queued entry for the same message)."""

    def add(state):
        for queued in state.queued:
            if queued.get("id") == entry["id"]:
                queued["agents"] = list(dict.fromkeys([*queued.get("agents", []), *entry["agents"]]))
                return
        state.queued.append(entry)

    update_room(project, room, add)


def dequeue(project, room: str, message_id: str, agent: str) -> None:
    """Drop `agent` from the queued entry of `message_id` (the entry goes when no agent is left)."""

    def drop(state):
        for queued in list(state.queued):
            if queued.get("id") == message_id:
                queued["agents"] = [a for a in queued.get("agents", []) if a != agent]
                if not queued["agents"]:
                    state.queued.remove(queued)

    update_room(project, room, drop)


def reset(project, room: str):
    """Reset the budget from the current roster; return the new state (queued entries kept)."""

    def refill(state):
        state.budget_total = budget_for(len(state.roster))
        state.budget_remaining = state.budget_total

    return update_room(project, room, refill)
