"""A local cache of replayed tasks, so reading a board of 10 000 tasks does not replay 10 000 logs.

`.rooms/run/board/<room>.json` (run/ stays out of git; store/cache.py) maps each task file to its
identity and the task replayed from it, before the clock is applied. A file whose identity differs is
replayed again; logs only grow, so any append changes it. The identity is taken before the file
is read, so a concurrent append can only make an entry stale, never wrong. The cache is only an
accelerator: a missing or unreadable one is rebuilt from the logs.
"""

from __future__ import annotations

from collections.abc import Callable

from rooms_cli.board import store
from rooms_cli.board.model import Task
from rooms_cli.board.replay import replay_log
from rooms_cli.store import cache, files, jsonl, known, layout, order
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


VERSION = 3  # 2: tasks replayed in the one order of store/order.py, not file order; 3: depends_on, blocked_by
REWRITE_AT_LEAST = 8  # stale entries before the cache is rewritten…
REWRITE_FRACTION = 50  # …or 1/50 of the board, whichever is more


def _cache_path(project: Project, room: str) -> str:
    return layout.board_snapshot_file(project, room)


def _read_cache(path: str) -> dict[str, Any]:
    return (cache.load(path, VERSION) or {}).get("tasks") or {}


def replayed_tasks(project: Project, room: str, keep: Callable[[dict[str, Any]], bool] | None = None) -> list[Task]:
    """Every task of the board replayed from its log (through the cache), in id order, before the clock.

    `keep(task_json)` filters before Task objects are built (a lane out of 10 000 tasks stays cheap).
    """
    tasks = []
    for hit, task in _refresh(project, room):
        if keep is not None and not keep(hit["task"]):
            continue
        if task is None:
            task = Task.from_json(hit["task"])
            task.expiry_recorded = hit.get("expiry_recorded", False)
        tasks.append(task)
    return tasks


def replayed_json(project: Project, room: str, keep: Callable[[dict[str, Any]], bool] | None = None) -> list[dict[str, Any]]:
    """Like replayed_tasks, as the tasks' JSON (no objects built: the fast path for whole boards)."""
    return [hit["task"] for hit, _task in _refresh(project, room) if keep is None or keep(hit["task"])]


def _refresh(project: Project, room: str) -> list[tuple[dict[str, Any], Task | None]]:
    """(cache entry, task if it had to be replayed) per log; rewrites the cache when enough was stale."""
    try:
        entries = sorted(
            (e for e in files.entries(store.tasks_dir(project, room)) if e.name.startswith("t-") and e.name.endswith(store.SUFFIX)),
            key=lambda e: e.name,
        )
    except FileNotFoundError:
        return []
    path = _cache_path(project, room)
    cached = _read_cache(path)
    fresh: dict[str, Any] = {}
    result: list[tuple[dict[str, Any], Task | None]] = []
    hits = 0
    for entry in entries:
        key = known.identity_of(entry.stat())
        task_id = store.id_from_name(entry.name)
        hit = cached.get(task_id)
        task = None
        if hit is not None and hit["stat"] == key:
            hits += 1
        else:
            # a plain file is read through its entry (tasks_dir checked the directory once); a symlink
            # goes through the path check that refuses one leading out of .rooms/
            events = store.read_events(project, room, task_id) if entry.is_symlink() else order.ordered(jsonl.read(entry.path))
            task = replay_log(task_id, room, events)
            hit = {"stat": key, "task": task.to_json(), "expiry_recorded": task.expiry_recorded}
        fresh[task_id] = hit
        result.append((hit, task))
    stale = (len(entries) - hits) + (len(cached) - hits)
    if stale >= max(REWRITE_AT_LEAST, len(entries) // REWRITE_FRACTION):
        cache.save(path, {"version": VERSION, "tasks": fresh})
    return result
