"""A local cache of replayed tasks, so reading a board of 10 000 tasks does not replay 10 000 logs.

`.rooms/run/board/<room>.json` (run/ stays out of git) maps each task file to its stat (inode, size,
mtime) and the task replayed from it, before the clock is applied. A file whose stat differs is
replayed again; logs only grow, so any append changes the size. The stat is taken before the file
is read, so a concurrent append can only make an entry stale, never wrong. The cache is only an
accelerator: a missing or unreadable one is rebuilt from the logs.
"""

from __future__ import annotations

import json
import os

from rooms_cli.board import store
from rooms_cli.board.model import Task
from rooms_cli.board.replay import replay_log
from rooms_cli.store import atomic
from rooms_cli.store.paths import Project

VERSION = 1


def _cache_path(project: Project, room: str):
    return project.path("run", "board", room + ".json")


def _read_cache(path) -> dict:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return {}
    return data.get("tasks") or {}


def replayed_tasks(project: Project, room: str) -> list[Task]:
    """Every task of the board replayed from its log (through the cache), in id order."""
    try:
        entries = sorted(
            (e for e in os.scandir(store.tasks_dir(project, room)) if e.name.startswith("t-") and e.name.endswith(store.SUFFIX)),
            key=lambda e: e.name,
        )
    except FileNotFoundError:
        return []
    path = _cache_path(project, room)
    cached = _read_cache(path)
    fresh: dict = {}
    tasks = []
    dirty = len(cached) != len(entries)
    for entry in entries:
        st = entry.stat()
        key = [st.st_ino, st.st_size, st.st_mtime_ns]
        task_id = store.id_from_name(entry.name)
        hit = cached.get(task_id)
        if hit is not None and hit["stat"] == key:
            data = hit["task"]
            task = Task.from_json(data)
            task.expiry_recorded = hit.get("expiry_recorded", False)
        else:
            task = replay_log(task_id, room, store.read_events(project, room, task_id))
            data = task.to_json()
            hit = {"stat": key, "task": data, "expiry_recorded": task.expiry_recorded}
            dirty = True
        fresh[task_id] = hit
        tasks.append(task)
    if dirty:
        try:
            blob = json.dumps({"version": VERSION, "tasks": fresh}, separators=(",", ":")).encode()
            atomic.write_bytes(path, blob)
        except OSError:
            pass  # a read-only checkout still reads the board, only slower
    return tasks
