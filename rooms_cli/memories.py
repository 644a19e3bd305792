"""Memories: lessons agents learned, `.rooms/memories/<agent>.jsonl`, fed into later prompts.

A record: {"id": "l-…", "ts": ISO, "agent": "analyst", "lesson": "one line", "source": "rt-…"}.
Chat and roundtable prompts include `recent_lessons(project, agent, limit)`; the limit keeps
prompts bounded however many lessons pile up.
"""

from __future__ import annotations

from rooms_cli.store import jsonl
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id, validate_name
from rooms_cli.store.paths import Project

DEFAULT_PROMPT_LIMIT = 5


def memories_path(project: Project, agent: str):
    return project.path("memories", validate_name(agent, "agent id") + ".jsonl")


def add_lessons(project: Project, agent: str, lessons: list[str], source: str) -> list[dict]:
    records = [{"id": new_id("l"), "ts": now_iso(), "agent": agent, "lesson": lesson, "source": source} for lesson in lessons]
    jsonl.append_many(memories_path(project, agent), records)
    return records


def list_lessons(project: Project, agent: str) -> list[dict]:
    return jsonl.read(memories_path(project, agent))


def recent_lessons(project: Project, agent: str, limit: int = DEFAULT_PROMPT_LIMIT) -> list[str]:
    """The newest `limit` lessons of `agent` (read from the end of its log)."""
    return [r.get("lesson", "") for r in jsonl.tail(memories_path(project, agent), limit) if r.get("lesson")]
