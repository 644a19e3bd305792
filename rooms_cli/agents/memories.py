"""Memories: lessons agents learned, `.rooms/memories/<agent>.jsonl`, fed into later prompts.

A lesson: {"id": "l-…", "ts": ISO, "agent": "analyst", "lesson": "one line", "source": "rt-…"}.
Forgetting appends {"id": "f-…", "ts": ISO, "forget": ["l-…", …]} (the lessons it removes, by id)
instead of rewriting the file: a rewrite merged in git with another clone's new lessons could
bring forgotten lessons back or lose the new ones; an append merges (union) with neither. Lessons
are read in time/id order, minus the forgotten ones. Files earlier versions rewrote are plain
lessons and read as they are.
Chat and roundtable prompts include `recent_lessons(project, agent, limit)`; the limit (and the
cap on a lesson's length) keeps prompts bounded however many lessons pile up.
"""

from __future__ import annotations

import os

from rooms_cli.core.errors import InvalidInput
from rooms_cli.store import jsonl, layout, schema
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id, resolve_prefix
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config

DEFAULT_PROMPT_LIMIT = 5
MAX_LESSON_CHARS = 200


def memories_path(project: Project, agent: str) -> str:
    return layout.memories_file(project, agent)


def clip_lesson(text: str) -> str:
    """One line of at most MAX_LESSON_CHARS characters."""
    text = " ".join(str(text).split())
    if len(text) <= MAX_LESSON_CHARS:
        return text
    return text[: MAX_LESSON_CHARS - 1].rsplit(" ", 1)[0] + "…"


def add_lessons(project: Project, agent: str, lessons: list[str], source: str) -> list[dict[str, Any]]:
    records = [
        {"id": new_id("l"), "ts": now_iso(), "agent": agent, "lesson": clip_lesson(lesson), "source": source}
        for lesson in lessons
        if str(lesson).strip()
    ]
    path = memories_path(project, agent)
    jsonl.append_many(path, schema.checked("memory", records, project.relative(path)))
    return records


def list_lessons(project: Project, agent: str) -> list[dict[str, Any]]:
    """The lessons of `agent` not forgotten, oldest first (time/id order, whatever a merge did to the lines)."""
    return _lessons(_read(project, agent))


def _read(project: Project, agent: str) -> list[dict[str, Any]]:
    """The records of `agent`'s memories that `schema.problem` passes, the check doctor makes: a wrong-typed
    one (`"lesson": null`, `"forget": "l-1"`) is skipped with a warning, like a line that does not parse."""
    path = memories_path(project, agent)
    return schema.usable("memory", jsonl.read(path), project.relative(path))


def _lessons(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    forgotten: set[str] = set()
    for record in records:
        forgotten.update(record.get("forget", ()))
    return [r for r in jsonl.in_order(records)
            if "forget" not in r and not (isinstance(r.get("id"), str) and r["id"] in forgotten)]


def require_agent(project: Project, agent: str) -> None:
    """NotFound for a name that is neither an agent nor has lessons (a deleted agent's lessons stay reachable)."""
    if not os.path.exists(memories_path(project, agent)):
        from rooms_cli.agents.definitions import load_agent

        load_agent(project, agent)


def agents_with_lessons(project: Project) -> list[str]:
    return layout.record_names(project, layout.memories_dir(project), ".jsonl", "agent id")


def recent_lessons(project: Project, agent: str, limit: int = DEFAULT_PROMPT_LIMIT) -> list[str]:
    """The newest `limit` lessons of `agent`."""
    if limit <= 0:
        return []
    return [r.get("lesson", "") for r in list_lessons(project, agent) if r.get("lesson")][-limit:]


def prompt_limit(config: Config | None) -> int:
    """`memory: {max_per_prompt: N}` in .rooms.yaml, else DEFAULT_PROMPT_LIMIT."""
    value = (config.get("memory") or {}).get("max_per_prompt", DEFAULT_PROMPT_LIMIT) if config else DEFAULT_PROMPT_LIMIT
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        from rooms_cli.core.errors import InvalidData

        raise InvalidData(f".rooms.yaml: memory.max_per_prompt must be a whole number ≥ 0, found {value!r}")
    return value


def lessons_block(project: Project, agent: str, config: Config | None = None) -> str:
    """The lines a system prompt carries about what `agent` learned ('' when nothing)."""
    lessons = recent_lessons(project, agent, prompt_limit(config))
    if not lessons:
        return ""
    return "Lessons you learned in earlier conversations:\n" + "\n".join(f"- {clip_lesson(x)}" for x in lessons)


def forget(
    project: Project, agent: str, ids: list[str] | None = None, *, source: str | None = None, everything: bool = False
) -> list[dict[str, Any]]:
    """Remove lessons of `agent` (by id prefix, by source roundtable, or all); return the removed ones.

    Appends one `forget` record naming them (under the log's lock), so the removal merges in git.
    """
    if not (ids or source or everything):
        raise InvalidInput("say what to forget: lesson ids, --source ROUNDTABLE_ID, or --all")
    require_agent(project, agent)
    path = memories_path(project, agent)
    with locked(path):
        records = _lessons(_read(project, agent))
        doomed: set[str] = set()
        for given in ids or []:
            doomed.add(resolve_prefix(given, [str(r.get("id", "")) for r in records], "lesson id"))
        removed = [
            r for r in records
            if everything or r.get("id") in doomed or (source is not None and r.get("source") == source)
        ]
        if removed:
            ids = [str(r.get("id", "")) for r in removed]
            forget = [{"id": new_id("f"), "ts": now_iso(), "forget": ids}]
            jsonl.append_many(path, schema.checked("memory", forget, project.relative(path)), lock=False)
    return removed
