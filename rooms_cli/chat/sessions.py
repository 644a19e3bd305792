"""Per-room agent sessions: `.rooms/rooms/<room>/sessions/<agent>.jsonl`.

A session is an agent's working state in one room: one record per turn it took (the message it
answered, its reply, token usage) and a marker when a hand-off was suggested. Kick deletes it;
hand-off clears it (the summary lives on as a deliberation). The transcript is never touched.

Token usage of a session is the sum of every turn's input and output tokens since the session
began; every record carries the running totals, so they are read from the last line alone. When it passes `context_threshold` (default 0.70) × the agent's `context_window`, the room
records a `handoff_suggested` line, once per session.
"""

from __future__ import annotations

from dataclasses import dataclass

from rooms_cli.store import jsonl, layout
from rooms_cli.store.clock import now_iso
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

DEFAULT_THRESHOLD = 0.70


session_path = layout.session_file


@dataclass
class SessionSummary:
    agent: str
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    suggested: bool = False

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_json(self) -> dict:
        return {"agent": self.agent, "turns": self.turns, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "tokens": self.tokens, "suggested": self.suggested}


def _last(project: Project, room: str, agent: str) -> dict:
    records = jsonl.tail(session_path(project, room, agent), 1)
    return records[0] if records else {}


def _totals(last: dict) -> dict:
    return {key: int(last.get(key, 0)) for key in ("turns", "input_total", "output_total")} | {
        "suggested": bool(last.get("suggested", False))}


def record_turn(project: Project, room: str, agent: str, *, answered: str, reply: str, usage: dict | None) -> None:
    """Append one turn. Each record carries the session's running totals, so reading them back
    costs one record from the end of the file however long the session is."""
    usage = usage or {}
    path = session_path(project, room, agent)
    with locked(path):
        totals = _totals(_last(project, room, agent))
        inp, out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
        totals.update(turns=totals["turns"] + 1, input_total=totals["input_total"] + inp,
                      output_total=totals["output_total"] + out)
        jsonl.append_many(path, [{"ts": now_iso(), "kind": "turn", "answered": answered, "reply": reply,
                                  "input_tokens": inp, "output_tokens": out, **totals}], lock=False)


def read_session(project: Project, room: str, agent: str) -> list[dict]:
    return jsonl.read(session_path(project, room, agent))


def summarize_session(project: Project, room: str, agent: str) -> SessionSummary:
    totals = _totals(_last(project, room, agent))
    return SessionSummary(agent=agent, turns=totals["turns"], input_tokens=totals["input_total"],
                          output_tokens=totals["output_total"], suggested=totals["suggested"])


def needs_handoff(summary: SessionSummary, context_window: int, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """True the first time a session's tokens pass threshold × window."""
    return not summary.suggested and summary.tokens >= threshold * context_window


def mark_suggested(project: Project, room: str, agent: str) -> None:
    path = session_path(project, room, agent)
    with locked(path):
        totals = _totals(_last(project, room, agent)) | {"suggested": True}
        jsonl.append_many(path, [{"ts": now_iso(), "kind": "handoff_suggested", **totals}], lock=False)


def delete_session(project: Project, room: str, agent: str) -> bool:
    """Remove the session file (kick); True when there was one."""
    path = session_path(project, room, agent)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def clear_session(project: Project, room: str, agent: str) -> None:
    """Start a fresh session (hand-off): same as deleting it; the summary is kept elsewhere."""
    delete_session(project, room, agent)
