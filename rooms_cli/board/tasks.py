"""Creating, changing and reading tasks: add, update, archive, resolve, show, and the whole board."""

from __future__ import annotations

from rooms_cli.board import deps, store
from rooms_cli.board.model import FINISHED, TITLE_MAX, Task
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
    """One task by full id or unique prefix, replayed at `now` (default: the clock), with its
    `blocked_by` read from its dependencies' logs."""
    full = store.resolve_task_id(project, room, task_id)
    return deps.with_blockers(project, room, replay(full, room, store.read_events(project, room, full), now or now_iso()))


def load_board(project: Project, room: str, now: str | None = None, *, archived: bool = False,
               lane: str | None = None, claimable: bool = False, keep_headless: bool = False) -> list[Task]:
    """The room's tasks in creation order: all, one lane's, or only those that may be claimable now.

    Archived tasks, and logs without a create event (`keep_headless`), only when asked. `claimable`
    keeps todo tasks and claimed ones (their lease may have lapsed by `now`) that await no proposal;
    the caller checks `Task.claimable`. Each task's `blocked_by` is filled in (board/deps.py).
    """
    if claimable and not archived and not keep_headless:  # what `task next` reads: the open index only
        from rooms_cli.board.openindex import load

        moment = now or now_iso()
        index = load(project, room)
        graph = deps.Graph(project, room, index)
        found = []
        for hit in _candidates(index, lane):
            task = Task.from_json(graph.annotate(hit["task"]))
            task.expiry_recorded = hit.get("expiry_recorded", False)
            found.append(seen_at(task, moment))
        return sorted(found, key=lambda t: t.id)

    from rooms_cli.board.snapshot import replayed_json, replayed_tasks

    def keep(data: dict[str, Any]) -> bool:
        if not data["created_at"] and not keep_headless:
            return False
        if (data["archived"] and not archived) or (lane is not None and data["lane"] != lane):
            return False
        return not claimable or (data["status"] in ("todo", "doing") and not data["pending"] and not data["archived"])

    moment = now or now_iso()
    found = [seen_at(t, moment) for t in replayed_tasks(project, room, keep)]
    if any(t.depends_on and t.status not in FINISHED for t in found):
        graph = whole_graph(project, room, replayed_json(project, room))
        for task in found:
            task.blocked_by = graph.blocked_by(task.to_json())
    return found


def whole_graph(project: Project, room: str, everything: list[dict[str, Any]]) -> deps.Graph:
    """The dependency graph of a board read whole (`everything`: every task's JSON): the open tasks
    as the index would hold them, every state looked up among the tasks read."""
    from rooms_cli.board.openindex import is_open

    known = {data["id"]: data for data in everything}
    return deps.Graph(project, room, {"open": {i: {"task": d} for i, d in known.items() if is_open(d)}, "settled": {}}, known)


def claimable_in_lane(project: Project, room: str, lane: str, now: str | None = None) -> Iterator[Task]:
    """The lane's tasks that are ready at `now` (claimable, and every dependency done), in lane order
    (`lane_order`), from the open index.

    Each is built from its record only when the caller gets to it: `task next` claims the first that
    holds and stops, so a lane of 60 open tasks builds one or two, not 60."""
    from rooms_cli.board.openindex import load

    moment = now or now_iso()
    index = load(project, room)
    graph = deps.Graph(project, room, index)
    hits = sorted(_candidates(index, lane), key=lambda hit: (hit["task"]["order"], hit["task"]["id"]))
    for hit in hits:
        if graph.blocked_by(hit["task"]):
            continue
        task = Task.from_json(hit["task"])
        task.expiry_recorded = hit.get("expiry_recorded", False)
        if seen_at(task, moment).claimable:
            yield task


def _candidates(index: dict[str, Any], lane: str | None) -> list[dict[str, Any]]:
    """The entries of the open-task index (of `lane`, or of every lane) that may be claimable: todo, or
    claimed (the lease may have lapsed), and awaiting no proposal."""
    return [hit for hit in index["open"].values() if (lane is None or hit["task"]["lane"] == lane)
            and hit["task"]["status"] in ("todo", "doing") and not hit["task"]["pending"]]


def ready_tasks(project: Project, room: str, *, lane: str | None = None, now: str | None = None) -> list[dict[str, Any]]:
    """The ready work of the board (what `rooms task ready` prints): todo tasks that are claimable and
    whose dependencies are all done (a lapsed lease reads as todo), as JSON in lane, order, id order.
    Reads the open-task index only: its cost follows the open tasks and their edges."""
    from rooms_cli.board.openindex import load

    if lane is not None:
        validate_name(lane, "lane")
    require_room(project, room)
    moment = now or now_iso()
    index = load(project, room)
    graph = deps.Graph(project, room, index)
    found = []
    for hit in _candidates(index, lane):
        data = hit["task"]
        if data["status"] == "doing":  # a lapsed lease reopens it
            data = seen_at(Task.from_json(data), moment).to_json()
        if graph.ready(data):
            found.append(graph.annotate(data))
    return sorted(found, key=lambda t: (t["lane"], t["order"], t["id"]))


def waiting_in_lane(project: Project, room: str, lane: str) -> int:
    """How many todo tasks of `lane` wait on a task that is not done (from the open-task index)."""
    from rooms_cli.board.openindex import load

    index = load(project, room)
    graph = deps.Graph(project, room, index)
    return sum(1 for hit in index["open"].values()
               if hit["task"]["lane"] == lane and hit["task"]["status"] == "todo" and graph.blocked_by(hit["task"]))


def became_ready(project: Project, room: str, finished: list[str],
                 unlinked: dict[str, list[str]]) -> list[tuple[dict[str, Any], list[str]]]:
    """What `rooms watch` reports as become ready: each ready task (JSON) that depends on a task of
    `finished` (just done), or that an update just unlinked (`unlinked`: task -> the dependencies it
    dropped) from one that was not done; with the ids that set it free."""
    out = []
    for data in ready_tasks(project, room):
        freed = [dep for dep in data["depends_on"] if dep in finished]
        freed += [dep for dep in unlinked.get(data["id"], ()) if deps.read_task(project, room, dep).status != deps.MET]
        if freed:
            out.append((data, freed))
    return out


def board_json(project: Project, room: str, now: str | None = None) -> list[dict[str, Any]]:
    """Every task on the board (not archived) as JSON, seen at `now`: the fast path for whole boards."""
    from rooms_cli.board.snapshot import replayed_json

    moment = now or now_iso()
    everything = replayed_json(project, room)
    graph = whole_graph(project, room, everything) if any(d.get("depends_on") for d in everything) else None
    out = []
    for data in everything:
        if not data["created_at"] or data["archived"]:
            continue
        if data["status"] == "doing":  # only a claimed task can read differently as the clock moves
            data = seen_at(Task.from_json(data), moment).to_json()
        out.append(data if graph is None else graph.annotate(data))
    return out


def open_board(project: Project, room: str, now: str | None = None, done: int = 10) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The open tasks as JSON seen at `now`, and the rest from the open index: {counts, recent, conflicts}.

    `recent` is the last `done` finished tasks (newest first); only open tasks' logs are read."""
    from rooms_cli.board.openindex import RECENT, load

    moment = now or now_iso()
    index = load(project, room)
    graph = deps.Graph(project, room, index)
    out = []
    for data in index["open"].values():
        if data["task"]["status"] == "doing":  # only a claimed task can read differently as the clock moves
            data = seen_at(Task.from_json(data["task"]), moment).to_json()
        else:
            data = data["task"]
        out.append(graph.annotate(data))
    out.sort(key=lambda t: t["id"])
    recent = index["recent"][:done]
    if done > RECENT and sum(index["counts"].get(s, 0) for s in ("done", "cancelled")) > RECENT:
        recent = sorted((t for t in board_json(project, room, moment) if not is_open_json(t)),
                        key=lambda t: (t["updated_at"], t["id"]), reverse=True)[:done]
    return out, {"counts": index["counts"], "recent": recent, "conflicts": index["conflicts"], "graph": graph}


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
    depends_on: list[str] | None = None,
) -> Task:
    """Create a task at the end of `lane` (or at `order`); `done` is its definition of done (required).
    `depends_on`: the tasks it waits on (ids or unique prefixes, in any lane); an unknown one raises
    NotFound and nothing is written."""
    require_room(project, room)
    validate_name(lane, "lane (agent id)")
    title = one_line(title, "title", TITLE_MAX)
    definition = (done or "").strip()
    if not definition:
        raise InvalidInput("--done (the definition of done) is required: the one condition that means the task is finished")
    from rooms_cli.board.openindex import creating

    with creating(project, room) as (index, created):  # a new task has no dependents: it closes no cycle
        waits_on = deps.resolve(project, room, depends_on or [])
        if order is None:
            highest = index["lane_max"].get(lane)
            order = int(highest) + 1 if highest is not None else 1
        task_id = new_id("t")
        store.append_events(
            project, room, task_id,
            [new_event("create", by, task=task_id, lane=lane, title=title, detail=(detail or "").strip(),
                   definition_of_done=definition, order=order, depends_on=waits_on or None)],
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
    depends_on: list[str] | None = None,
) -> Task:
    """Change a task's title, detail, definition of done or order (any status), or replace the tasks it
    waits on (`depends_on`; [] clears them) while it is not finished.

    A dependency change is checked under the board index's lock, so two writers cannot close a cycle
    between them: an unknown id raises NotFound, a cycle (the task itself included) DependencyCycle
    naming it, and nothing is written. The event records what changed ({add, remove}), not the list,
    so changes made on two clones to one task both hold after a merge."""
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
    if not changes and depends_on is None:
        raise InvalidInput("nothing to update: give --title, --detail, --done, --order or --depends-on")
    full = store.resolve_task_id(project, room, task_id)
    if depends_on is None:
        before = load_task(project, room, full).to_json()
        store.append_events(project, room, full, [new_event("update", by, changes=changes)], held=False)
    else:
        from rooms_cli.board.openindex import holding

        with holding(project, room) as index:
            task = replay(full, room, store.read_events(project, room, full), now_iso())
            wanted = deps.resolve(project, room, depends_on, task_id=full)
            added = [dep for dep in wanted if dep not in task.depends_on]
            removed = [dep for dep in task.depends_on if dep not in wanted]
            if (added or removed) and task.status in FINISHED:
                raise InvalidInput(f"task {full} is {task.status}: a finished task waits on nothing, so its "
                                   "dependencies cannot change")
            if added:
                deps.refuse_cycle(deps.Graph(project, room, index), full, added)
            if added or removed:
                changes["depends_on"] = {"add": added, "remove": removed}
            if changes:
                store.append_events(project, room, full, [new_event("update", by, changes=changes)], held=False)
            before = task.to_json()
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
