"""Per-room agent sessions: `.rooms/rooms/<room>/sessions/<agent>.jsonl`.

A session is an agent's working state in one room: one record per turn it took (the message it
answered, its reply, token usage) and a marker when a hand-off was suggested. Kick and hand-off
end it with a `cleared` record (the summary of a hand-off lives on as a deliberation); what came
before is no longer read. The transcript is never touched. Records carry `eid` and `hlc` and are
read in the one order of every log (store/order.py), so two clones' turns both count after a git merge.

Token usage of a session is the sum of every turn's input and output tokens since the session
began (each record also carries the running totals, for people reading the file). How full the
agent's context is, though, is its LAST call: that prompt's tokens and the reply's. When they pass
`context_threshold` (default 0.70) × the context window (the server's, else the agent's
`context_window`), the room records a `handoff_suggested` line, once per session.
"""

from __future__ import annotations

from rooms_cli.core.records import dataclass  # dataclasses without inspect (records.py)
from rooms_cli.store import eventlog, jsonl, layout, schema
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

DEFAULT_THRESHOLD = 0.70
CLEARED = "cleared"


session_path = layout.session_file


@dataclass
class SessionSummary:
    """An agent's session in a room so far: turns, tokens in and out, and whether a hand-off was suggested."""

    agent: str
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    suggested: bool = False

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_json(self) -> dict[str, Any]:
        return {"agent": self.agent, "turns": self.turns, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "tokens": self.tokens, "suggested": self.suggested}


def _current(project: Project, room: str, agent: str) -> list[dict[str, Any]]:
    """The session's records since it was last cleared, in merge order (store/eventlog.py). A record
    `schema.problem` refuses (`"input_tokens": "x"`: the check doctor makes) is skipped with a warning,
    like a line that does not parse; the others count."""
    path = session_path(project, room, agent)
    records = eventlog.ordered(schema.usable("session", jsonl.read(path), project.relative(path)))
    cleared = max((i for i, r in enumerate(records) if r.get("kind") == CLEARED), default=-1)
    return records[cleared + 1:]


def _totals(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Turns and tokens summed over the records (two clones' turns both count after a merge)."""
    turns = [r for r in records if r.get("kind") == "turn"]
    return {"turns": len(turns), "input_total": sum(_count(r.get("input_tokens")) for r in turns),
            "output_total": sum(_count(r.get("output_tokens")) for r in turns),
            "suggested": any(r.get("kind") == "handoff_suggested" for r in records)}


def _count(value: object) -> int:
    """A token count as written; anything else (a damaged record) counts as none."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _append(project: Project, room: str, agent: str, record: dict[str, Any]) -> None:
    """Append one record carrying the running totals (for people reading the file), under the lock."""
    path = session_path(project, room, agent)
    with locked(path):
        totals = _totals([*_current(project, room, agent), record])
        written = [{"ts": now_iso(), "eid": new_id("e"), **record, **totals}]
        eventlog.append(path, schema.checked("session", written, project.relative(path)), lock=False)


def record_turn(project: Project, room: str, agent: str, *, answered: str, reply: str, usage: dict[str, Any] | None,
                finish_reason: str | None = None) -> None:
    """Append one turn (with the provider's finish reason: `stop`, `length` when the limit cut it…)."""
    usage = usage or {}
    record = {"kind": "turn", "answered": answered, "reply": reply,
              "input_tokens": int(usage.get("input_tokens", 0)), "output_tokens": int(usage.get("output_tokens", 0))}
    if finish_reason:
        record["finish_reason"] = finish_reason
    _append(project, room, agent, record)


def read_session(project: Project, room: str, agent: str) -> list[dict[str, Any]]:
    """The records of the current session (since the last kick or hand-off)."""
    return _current(project, room, agent)


def summarize_session(project: Project, room: str, agent: str) -> SessionSummary:
    totals = _totals(_current(project, room, agent))
    return SessionSummary(agent=agent, turns=totals["turns"], input_tokens=totals["input_total"],
                          output_tokens=totals["output_total"], suggested=totals["suggested"])


def context_used(usage: dict[str, Any]) -> int:
    """How much of its context an agent's last call filled: that prompt's tokens and the reply's.

    Every call sends the whole prompt again, so the sum over a session's turns says nothing about
    how full the context is (it passed a 2 048-token window on the first turns)."""
    return _count(usage.get("input_tokens")) + _count(usage.get("output_tokens"))


def needs_handoff(summary: SessionSummary, used: int, context_window: int, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """True the first time in a session that the last call's `used` tokens pass threshold × window."""
    return not summary.suggested and used >= threshold * context_window


def mark_suggested(project: Project, room: str, agent: str) -> None:
    _append(project, room, agent, {"kind": "handoff_suggested"})


def delete_session(project: Project, room: str, agent: str) -> bool:
    """End the session (kick): True when it had turns. A `cleared` record, not a deletion: deleting
    the file would conflict in git with a clone where the agent kept talking."""
    had = any(r.get("kind") == "turn" for r in _current(project, room, agent))
    if had:
        _append(project, room, agent, {"kind": CLEARED, "reason": "kick"})
    return had


def clear_session(project: Project, room: str, agent: str) -> None:
    """Start a fresh session (hand-off); the summary is kept elsewhere (a deliberation)."""
    if _current(project, room, agent):
        _append(project, room, agent, {"kind": CLEARED, "reason": "handoff"})
