"""Creating, changing and reading tasks: add, update, archive, resolve, show, and the whole board."""

from __future__ import annotations

from rooms_cli.board import store
from rooms_cli.board.model import TITLE_MAX, Task
from rooms_cli.board.replay import replay, seen_at
from rooms_cli.board.transitions import refuse_if_held
from rooms_cli.core.errors import InvalidInput, NotFound
from rooms_cli.store import layout
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id, validate_name
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


def require_room(project: Project, room: str) -> None:
    if not layout.room_exists(project, validate_name(room, "room id")):
        raise NotFound(f"no room {room!r}; create it with `rooms room create {room}`")


def one_line(value: str, what: str, limit: int, *, required: bool = True) -> str:
    """A single line of text (newlines refused, length capped)."""
    text = (value or "").strip()
    if required and not text:
        raise InvalidInput(f"{what} must not be empty")
    if "\n" in text or "\r" in text:
        raise InvalidInput(f"{what} must be one line (no newlines)")
    if len(text) > limit:
        raise InvalidInput(f"{what} is {len(text)} characters; the limit is {limit}")
    return text


def new_event(kind: str, by: str, **fields: Any) -> dict[str, Any]:
    """An event line: `ev`, `at` (the clock), `by`, and the fields that are not None."""
    return {"ev": kind, "at": now_iso(), "by": by, **{k: v for k, v in fields.items() if v is not None}}


def load_task(project: Project, room: str, task_id: str, now: str | None = None) -> Task:
    """One task by full id or unique prefix, replayed at `now` (default: the clock)."""
    full = store.resolve_task_id(project, room, task_id)
    return replay(full, room, store.read_events(project, room, full), now or now_iso())


def load_board(project: Project, room: str, now: str | None = None, *, archived: bool = False,
               lane: str | None = None, claimable: bool = False, keep_headless: bool = False) -> list[Task]:
    """The room's tasks in creation order: all, one lane's, or only those that may be claimable now.

    Archived tasks, and logs without a create event (`keep_headless`), only when asked. `claimable`
    keeps todo tasks and claimed ones (their lease may have lapsed by `now`) that await no proposal;
    the caller checks `Task.claimable`.
    """
    if claimable and not archived and not keep_headless:  # what `task next` reads: the open index only
        from rooms_cli.board.openindex import load

        moment = now or now_iso()
        found = []
        for hit in load(project, room)["open"].values():
            data = hit["task"]
            if (lane is None or data["lane"] == lane) and data["status"] in ("todo", "doing") and not data["pending"]:
                task = Task.from_json(data)
                task.expiry_recorded = hit.get("expiry_recorded", False)
                found.append(seen_at(task, moment))
        return sorted(found, key=lambda t: t.id)

    from rooms_cli.board.snapshot import replayed_tasks

    def keep(data: dict[str, Any]) -> bool:
        if not data["created_at"] and not keep_headless:
            return False
        if (data["archived"] and not archived) or (lane is not None and data["lane"] != lane):
            return False
        return not claimable or (data["status"] in ("todo", "doing") and not data["pending"] and not data["archived"])

    moment = now or now_iso()
    return [seen_at(t, moment) for t in replayed_tasks(project, room, keep)]


def claimable_in_lane(project: Project, room: str, lane: str, now: str | None = None) -> Iterator[Task]:
    """The lane's tasks that are claimable at `now`, in lane order (`lane_order`), from the open index.

    Each is built from its record only when the caller gets to it: `task next` claims the first that
    holds and stops, so a lane of 60 open tasks builds one or two, not 60."""
    from rooms_cli.board.openindex import load

    moment = now or now_iso()
    hits = [hit for hit in load(project, room)["open"].values()
            if hit["task"]["lane"] == lane and hit["task"]["status"] in ("todo", "doing") and not hit["task"]["pending"]]
    hits.sort(key=lambda hit: (hit["task"]["order"], hit["task"]["id"]))
    for hit in hits:
        task = Task.from_json(hit["task"])
        task.expiry_recorded = hit.get("expiry_recorded", False)
        if seen_at(task, moment).claimable:
            yield task


def board_json(project: Project, room: str, now: str | None = None) -> list[dict[str, Any]]:
    """Every task on the board (not archived) as JSON, seen at `now`: the fast path for whole boards."""
    from rooms_cli.board.snapshot import replayed_json

    moment = now or now_iso()
    out = []
    for data in replayed_json(project, room, lambda d: bool(d["created_at"]) and not d["archived"]):
        if data["status"] == "doing":  # only a claimed task can read differently as the clock moves
            data = seen_at(Task.from_json(data), moment).to_json()
        out.append(data)
    return out


def open_board(project: Project, room: str, now: str | None = None, done: int = 10) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The open tasks as JSON seen at `now`, and the rest from the open index: {counts, recent, conflicts}.

    `recent` is the last `done` finished tasks (newest first); only open tasks' logs are read."""
    from rooms_cli.board.openindex import RECENT, load

    moment = now or now_iso()
    index = load(project, room)
    out = []
    for data in index["open"].values():
        if data["task"]["status"] == "doing":  # only a claimed task can read differently as the clock moves
            data = seen_at(Task.from_json(data["task"]), moment).to_json()
        else:
            data = data["task"]
        out.append(data)
    out.sort(key=lambda t: t["id"])
    recent = index["recent"][:done]
    if done > RECENT and sum(index["counts"].get(s, 0) for s in ("done", "cancelled")) > RECENT:
        recent = sorted((t for t in board_json(project, room, moment) if not is_open_json(t)),
                        key=lambda t: t["updated_at"], reverse=True)[:done]
    return out, {"counts": index["counts"], "recent": recent, "conflicts": index["conflicts"]}


def is_open_json(data: dict[str, Any]) -> bool:
    from rooms_cli.board.openindex import is_open

    return is_open(data)


def lane_order(tasks: list[Task]) -> list[Task]:
    return sorted(tasks, key=lambda t: (t.order, t.id))


def add_task(
    project: Project,
    room: str,
    title: str,
    *,
    lane: str,
    done: str,
    by: str,
    detail: str = "",
    order: float | None = None,
) -> Task:
    """Create a task at the end of `lane` (or at `order`); `done` is its definition of done (required)."""
    require_room(project, room)
    validate_name(lane, "lane (agent id)")
    title = one_line(title, "title", TITLE_MAX)
    definition = (done or "").strip()
    if not definition:
        raise InvalidInput("--done (the definition of done) is required: the one condition that means the task is finished")
    from rooms_cli.board.openindex import creating

    with creating(project, room) as (index, created):
        if order is None:
            highest = index["lane_max"].get(lane)
            order = int(highest) + 1 if highest is not None else 1
        task_id = new_id("t")
        store.append_events(
            project, room, task_id,
            [new_event("create", by, task=task_id, lane=lane, title=title, detail=(detail or "").strip(),
                   definition_of_done=definition, order=order)],
            held=False,
        )
        created.append(task_id)
    return load_task(project, room, task_id)


def update_task(
    project: Project,
    room: str,
    task_id: str,
    *,
    by: str,
    title: str | None = None,
    detail: str | None = None,
    done: str | None = None,
    order: float | None = None,
) -> Task:
    """Change a task's title, detail, definition of done or order (any status)."""
    changes: dict[str, Any] = {}
    if title is not None:
        changes["title"] = one_line(title, "title", TITLE_MAX)
    if detail is not None:
        changes["detail"] = detail.strip()
    if done is not None:
        if not done.strip():
            raise InvalidInput("--done (the definition of done) must not be empty")
        changes["definition_of_done"] = done.strip()
    if order is not None:
        changes["order"] = order
    if not changes:
        raise InvalidInput("nothing to update: give --title, --detail, --done or --order")
    full = store.resolve_task_id(project, room, task_id)
    before = load_task(project, room, full).to_json()
    store.append_events(project, room, full, [new_event("update", by, changes=changes)], held=False)
    _note_change(project, room, full, before)
    return load_task(project, room, full)


def _note_change(project: Project, room: str, task_id: str, before: dict[str, Any]) -> None:
    """Tell the open index about a write to a finished task (board/openindex.py)."""
    from rooms_cli.board.openindex import note_finished_change

    note_finished_change(project, room, task_id, before)


def archive_task(project: Project, room: str, task_id: str, *, by: str) -> Task:
    """Take a task off the board (its file stays); a task held under a live lease is refused."""
    full = store.resolve_task_id(project, room, task_id)
    with store.task_lock(project, room, full):
        task = replay(full, room, store.read_events(project, room, full), now_iso())
        if task.archived:
            return task
        refuse_if_held(task, "archive")
        store.append_events(project, room, full, [new_event("archive", by)], held=True)
    _note_change(project, room, full, task.to_json())
    return load_task(project, room, full)


def resolve_conflicts(project: Project, room: str, task_id: str, *, by: str) -> Task:
    """Acknowledge a task's merge conflicts (e.g. a double claim), keeping its current state."""
    full = store.resolve_task_id(project, room, task_id)
    task = load_task(project, room, full)
    if not task.conflicts:
        raise InvalidInput(f"task {full} has no conflicts to resolve")
    store.append_events(project, room, full, [new_event("resolve", by, resolved=len(task.conflicts))], held=False)
    _note_change(project, room, full, task.to_json())
    return load_task(project, room, full)


def task_history(project: Project, room: str, task_id: str) -> list[dict[str, Any]]:
    """The task's events, oldest first, as written."""
    return store.read_events(project, room, store.resolve_task_id(project, room, task_id))
