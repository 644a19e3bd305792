"""Per-room agent sessions: `.rooms/rooms/<room>/sessions/<agent>.jsonl`.

A session is an agent's working state in one room: one record per turn it took (the message it
answered, its reply, token usage) and a marker when a hand-off was suggested. Kick deletes it;
hand-off clears it (the summary lives on as a deliberation). The transcript is never touched.

Token usage of a session is the sum of every turn's input and output tokens since the session
began. When it passes `context_threshold` (default 0.70) × the agent's `context_window`, the room
records a `handoff_suggested` line, once per session.
"""

from __future__ import annotations

from dataclasses import dataclass

from rooms_cli.store import jsonl
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import validate_name
from rooms_cli.store.paths import Project

DEFAULT_THRESHOLD = 0.70


def session_path(project: Project, room: str, agent: str):
    return project.path("rooms", validate_name(room, "room id"), "sessions", validate_name(agent, "agent id") + ".jsonl")


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


def record_turn(project: Project, room: str, agent: str, *, answered: str, reply: str, usage: dict | None) -> None:
    usage = usage or {}
    jsonl.append(session_path(project, room, agent), {
        "ts": now_iso(), "kind": "turn", "answered": answered, "reply": reply,
        "input_tokens": int(usage.get("input_tokens", 0)), "output_tokens": int(usage.get("output_tokens", 0)),
    })


def read_session(project: Project, room: str, agent: str) -> list[dict]:
    return jsonl.read(session_path(project, room, agent))


def summarize_session(project: Project, room: str, agent: str) -> SessionSummary:
    summary = SessionSummary(agent=agent)
    for rec in read_session(project, room, agent):
        if rec.get("kind") == "turn":
            summary.turns += 1
            summary.input_tokens += int(rec.get("input_tokens", 0))
            summary.output_tokens += int(rec.get("output_tokens", 0))
        elif rec.get("kind") == "handoff_suggested":
            summary.suggested = True
    return summary


def needs_handoff(summary: SessionSummary, context_window: int, threshold: float = DEFAULT_THRESHOLD) -> bool:
    """True the first time a session's tokens pass threshold × window."""
    return not summary.suggested and summary.tokens >= threshold * context_window


def mark_suggested(project: Project, room: str, agent: str) -> None:
    jsonl.append(session_path(project, room, agent), {"ts": now_iso(), "kind": "handoff_suggested"})


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
