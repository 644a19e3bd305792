"""The turn budget: clamp(ceil(1.5 × roster), 6, 21) substantive replies between human check-ins.

Each substantive reply costs one; passes and flavor lines cost nothing. At zero the room records
`budget_exhausted` and stops prompting; direct mentions posted meanwhile are queued and replayed by
`/continue`, which resets the budget from the current roster. A queued mention leaves the queue
only once it has been replayed, so a crash or a second exhaustion during the replay loses nothing.

The rule lives here, as functions of a room's state; callers apply them under the room's lock with
`rooms.update_room(project, room, lambda state: budget.spend(state, 1))`.
"""

from __future__ import annotations

import math

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Budgeted(Protocol):
        """What the rule reads and writes of a room's state (chat.rooms.RoomState, which imports this module)."""

        roster: list[str]
        budget_total: int
        budget_remaining: int
        queued: list[dict[str, Any]]

EXHAUSTED_TEXT = "Turn budget used up. /continue to keep going."
MIN_TURNS, MAX_TURNS, TURNS_PER_AGENT = 6, 21, 1.5


def budget_for(roster_size: int) -> int:
    """The turn budget of a roster: clamp(ceil(1.5 × roster), 6, 21)."""
    return max(MIN_TURNS, min(MAX_TURNS, math.ceil(TURNS_PER_AGENT * roster_size)))


def spend(state: Budgeted, turns: int = 1) -> int:
    """Spend `turns` (never below zero); return what is left."""
    state.budget_remaining = max(0, state.budget_remaining - turns)
    return state.budget_remaining


def add_queued(state: Budgeted, entry: dict[str, Any]) -> None:
    """Remember a direct mention made at zero budget (merged with a queued entry for the same message)."""
    for queued in state.queued:
        if queued.get("id") == entry["id"]:
            queued["agents"] = list(dict.fromkeys([*queued.get("agents", []), *entry["agents"]]))
            return
    state.queued.append(entry)


def drop_queued(state: Budgeted, message_id: str, agent: str) -> None:
    """Drop `agent` from the queued entry of `message_id` (the entry goes when no agent is left)."""
    for queued in list(state.queued):
        if queued.get("id") == message_id:
            queued["agents"] = [a for a in queued.get("agents", []) if a != agent]
            if not queued["agents"]:
                state.queued.remove(queued)


def refill(state: Budgeted) -> None:
    """Reset the budget from the current roster (queued entries kept)."""
    state.budget_total = budget_for(len(state.roster))
    state.budget_remaining = state.budget_total


def resize(state: Budgeted) -> None:
    """Recompute the total from the roster after it changed; the turns left grow or shrink with it."""
    total = budget_for(len(state.roster))
    state.budget_remaining = max(0, min(total, state.budget_remaining + total - state.budget_total))
    state.budget_total = total
