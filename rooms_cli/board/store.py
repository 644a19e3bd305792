"""Board files: one append-only event log per task, `.rooms/rooms/<room>/board/tasks/<task-id>.jsonl`.

One file per task keeps a claim's cost independent of the board's size (it reads and locks one
small file) and makes git merges trivial: tasks added on two clones are different files, and two
clones appending to the same task merge with `merge=union` (.rooms/.gitattributes). Task ids are
`t-` + a ULID; the file name is the id in lowercase (store paths are lowercase).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from rooms_cli.core.errors import NotFound
from rooms_cli.store import files, jsonl, layout, order
from rooms_cli.store.ids import is_valid_name, resolve_prefix
from rooms_cli.store.locks import locked, try_lock
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

SUFFIX = layout.TASK_SUFFIX
board_dir = layout.board_dir
tasks_dir = layout.tasks_dir
task_path = layout.task_file


def id_from_name(name: str) -> str:
    stem = name[: -len(SUFFIX)]
    return stem[:2] + stem[2:].upper()


def list_task_ids(project: Project, room: str) -> list[str]:
    """Every task id of the room's board, in creation order (ids are time-ordered)."""
    return sorted(id_from_name(n) for n in files.names(tasks_dir(project, room)) if n.startswith("t-") and n.endswith(SUFFIX))


def resolve_task_id(project: Project, room: str, given: str) -> str:
    """The full id for `given` (a full id or any unique prefix, like git); NotFound names the room."""
    given = (given or "").strip()
    if given.lower().startswith("t-") and len(given) == 28:
        if os.path.exists(task_path(project, room, given)):
            return given[:2].lower() + given[2:].upper()
    try:
        return resolve_prefix(given, list_task_ids(project, room), "task id")
    except NotFound:
        raise NotFound(f"no task {given!r} on the board of room {room!r}") from None


def read_events(project: Project, room: str, task_id: str) -> list[dict[str, Any]]:
    """The task's events in the one order of every log (store/order.py), each event once."""
    return order.ordered(jsonl.read(task_path(project, room, task_id)))


def append_events(project: Project, room: str, task_id: str, events: list[dict[str, Any]], *,
                  held: bool) -> list[dict[str, Any]]:
    """Append events as whole lines; `held=True` when the caller holds the task's lock. Each is checked
    first against the schema its replay reads with (store/schema.py): nothing written is refused.
    Returns them as written (with their `hlc` stamps)."""
    from rooms_cli.store import schema

    path = task_path(project, room, task_id)
    checked = schema.checked("task-event", events, project.relative(path))
    return jsonl.append_many(path, [_sorted(e) for e in checked], lock=not held)


def _sorted(event: dict[str, Any]) -> dict[str, Any]:
    # stable key order: the same event is always the same line (clean diffs, union merges)
    return {k: (_sorted(v) if isinstance(v, dict) else v) for k, v in sorted(event.items())}


@contextmanager
def task_lock(project: Project, room: str, task_id: str) -> Iterator[None]:
    """Hold the task's lock around one read-check-append (waits up to ROOMS_LOCK_TIMEOUT)."""
    with locked(task_path(project, room, task_id), what=f"task {task_id}"):
        yield


@contextmanager
def task_lock_nowait(project: Project, room: str, task_id: str) -> Iterator[bool]:
    """Try the task's lock without waiting; yields whether it is held."""
    lock = try_lock(task_path(project, room, task_id))
    try:
        yield lock is not None
    finally:
        if lock is not None:
            lock.release()


def list_board_rooms(project: Project) -> list[str]:
    """Rooms that have a board directory."""
    base = layout.rooms_dir(project)
    return [name for name in files.names(base) if is_valid_name(name) and os.path.isdir(os.path.join(base, name, "board", "tasks"))]
