"""Task dependencies: what a task waits on, which tasks are ready, and the cycles a write refuses.

A task's `depends_on` (full task ids, sorted) comes from its own log: the `create` event, then
`update` events whose `changes.depends_on` is `{add, remove}` — what the writer changed, not the
whole list, so two clones that each add a dependency to the same task both keep theirs after a merge.
A dependency is **met** only when its task is `done`. Every other state keeps the dependent waiting:
todo, doing, blocked, failed, cancelled, `archived` (taken off the board before it was done) and
`missing` (no such task on the board: a log removed by hand or by a merge). A task's `blocked_by` is
its dependencies that are not met (empty for a finished task: it waits on nothing any more). A task
is **ready** when it is todo, claimable (no pending proposal, not archived) and `blocked_by` is empty.

Failed, cancelled, archived and missing dependencies will not get done by themselves (`NEEDS_PERSON`),
and neither will the tasks of a cycle, which only a merge of two clones can make (every write that
would close one is refused): the board and `rooms doctor` say that a person has to decide.

Where the states come from: `Graph` reads the open-task index (board/openindex.py), which holds
every open task and, under `settled`, the state of each task an open task depends on that is not
open. So readiness costs the open tasks and their edges, never a replay of the board's history. A
single task's blockers (`task show`, `task claim`) are read from its dependencies' own logs: as many
replays as it has dependencies, whatever the size of the board.
"""

from __future__ import annotations

from collections import deque

from rooms_cli.board import fold, store
from rooms_cli.board.errors import DependencyCycle
from rooms_cli.board.model import FINISHED, Task
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

MET = "done"
NEEDS_PERSON = ("failed", "cancelled", "archived", "missing")  # states that do not become done by themselves


def split_ids(values: Iterable[str] | str | None) -> list[str]:
    """Dependencies as given on a command line: repeated values and comma-separated lists flattened,
    blanks dropped (so `--depends-on ''` is the empty list)."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    return [part.strip() for value in values for part in str(value).split(",") if part.strip()]


def state_of(data: dict[str, Any]) -> str:
    """A task's state as a dependency, from its JSON: `done`, else `missing` (no create event),
    `archived`, or its status."""
    if not data.get("created_at"):
        return "missing"
    if data["status"] == MET:
        return MET
    return "archived" if data.get("archived") else str(data["status"])


def entry_of(data: dict[str, Any]) -> dict[str, Any]:
    """What the board keeps of a dependency: {status (its state), title, lane}."""
    return {"status": state_of(data), "title": data.get("title", ""), "lane": data.get("lane", "")}


def read_task(project: Project, room: str, task_id: str) -> Task:
    """A task replayed from its own log (a task without a log replays to one with no create event)."""
    task, _bad = fold.replay_file(task_id, room, str(store.task_path(project, room, task_id)))
    return task


def needs_person(info: dict[str, Any]) -> bool:
    return info["status"] in NEEDS_PERSON


def describe(task_id: str, info: dict[str, Any]) -> str:
    """`t-01… “Write the schema” (doing)`; a state only a person can change says so."""
    title = f" “{info['title']}”" if info.get("title") else ""
    state = info["status"] + (": a person must decide" if needs_person(info) else "")
    return f"{task_id}{title} ({state})"


class Graph:
    """The dependency states the open-task index knows (one read of it): an open task's status from
    its entry, any other dependency of an open task from the index's `settled`; an id the index does
    not hold (a dependency of a task that is not open) is read from its log, once."""

    def __init__(self, project: Project, room: str, index: dict[str, Any], known: dict[str, Any] | None = None) -> None:
        """`index`: the open-task index (or any {open, settled}); `known`: task JSONs by id already read
        (a whole board), looked at before a log is read."""
        self.project, self.room = project, room
        self.open: dict[str, Any] = index["open"]
        self.settled: dict[str, Any] = index.setdefault("settled", {})
        self.known = known or {}

    def info(self, task_id: str) -> dict[str, Any]:
        """{status (the state as a dependency), title, lane} of a task."""
        hit = self.open.get(task_id)
        if hit is not None:
            data = hit["task"]
            return {"status": data["status"], "title": data["title"], "lane": data["lane"]}
        kept = self.settled.get(task_id)
        if kept is None:
            data = self.known.get(task_id) or read_task(self.project, self.room, task_id).to_json()
            kept = self.settled[task_id] = entry_of(data)
        return dict(kept)

    def blocked_by(self, data: dict[str, Any]) -> list[str]:
        """The dependencies of the task (`data`, its JSON) that are not done; none for a finished task."""
        deps = data.get("depends_on")
        if not deps or data["status"] in FINISHED:
            return []
        return [dep for dep in deps if self.info(dep)["status"] != MET]

    def annotate(self, data: dict[str, Any]) -> dict[str, Any]:
        """The task's JSON with its `blocked_by` as the board reads now (a copy when that differs:
        the index's records are shared and never changed in place)."""
        blocked = self.blocked_by(data)
        return data if blocked == data.get("blocked_by") else {**data, "blocked_by": blocked}

    def ready(self, data: dict[str, Any]) -> bool:
        """Todo (as read at this moment), claimable, and waiting on nothing."""
        return (data["status"] == "todo" and not data.get("pending") and not data.get("archived")
                and not self.blocked_by(data))

    def blockers(self, tasks: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Each id the `tasks` (annotated JSON) are blocked by -> {status, title, lane}."""
        return {dep: self.info(dep) for data in tasks for dep in data.get("blocked_by") or ()}

    def cycles(self) -> list[list[str]]:
        """The dependency cycles among open tasks (a merge of two clones can make one; see find_cycles)."""
        return find_cycles({task_id: [d for d in hit["task"]["depends_on"] if d in self.open]
                            for task_id, hit in self.open.items() if hit["task"].get("depends_on")})

    def depends_on(self, task_id: str) -> list[str]:
        """A task's dependencies: from the index for an open task, else from its log."""
        hit = self.open.get(task_id)
        if hit is not None:
            return list(hit["task"].get("depends_on") or ())
        if task_id in self.known:
            return list(self.known[task_id].get("depends_on") or ())
        return read_task(self.project, self.room, task_id).depends_on


def find_cycles(edges: dict[str, list[str]]) -> list[list[str]]:
    """The cycles of a graph (task -> the tasks it depends on), one per strongly connected part that
    holds one: the shortest path from the part's smallest id back to itself, that id at both ends
    (`[a, a]` for a task depending on itself). Iterative (Tarjan): a chain of 100 000 tasks does not
    overflow the stack."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    parts: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for nxt in successors:
                if nxt not in edges:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(edges.get(nxt, ()))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    part.append(top)
                    if top == node:
                        break
                if len(part) > 1 or node in edges.get(node, ()):
                    parts.append(part)
    return sorted(_cycle_in(set(part), edges) for part in parts)


def _cycle_in(part: set[str], edges: dict[str, list[str]]) -> list[str]:
    start = min(part)
    path = _path(edges[start], start, lambda node: [n for n in edges.get(node, ()) if n in part])
    return [start, *path] if path else [start, start]


def _path(starts: Iterable[str], target: str, successors: Callable[[str], Iterable[str]]) -> list[str] | None:
    """The shortest path (breadth first) from one of `starts` to `target`, both ends included; None if none."""
    came_from: dict[str, str | None] = {}
    queue: deque[str] = deque()
    for start in starts:
        if start not in came_from:
            came_from[start] = None
            queue.append(start)
    while queue:
        node = queue.popleft()
        if node == target:
            path = [node]
            while (before := came_from[path[-1]]) is not None:
                path.append(before)
            return path[::-1]
        for nxt in successors(node):
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    return None


def resolve(project: Project, room: str, given: Iterable[str], *, task_id: str | None = None) -> list[str]:
    """The full ids of the dependencies `given` (ids or unique prefixes), sorted, each once. An unknown
    id raises NotFound naming it; `task_id` itself raises DependencyCycle."""
    found = {store.resolve_task_id(project, room, value) for value in split_ids(given)}
    if task_id is not None and task_id in found:
        raise DependencyCycle(f"task {task_id} cannot depend on itself; nothing was changed",
                              data={"task_id": task_id, "cycle": [task_id, task_id]})
    return sorted(found)


def refuse_cycle(graph: Graph, task_id: str, adding: Iterable[str]) -> None:
    """DependencyCycle naming the cycle when `task_id` depending on `adding` would close one (a task
    among them already waits, through others, on `task_id`); the caller holds the index's lock."""
    path = _path(adding, task_id, graph.depends_on)
    if path is None:
        return
    cycle = [task_id, *path]
    names = " → ".join(_named(graph, t) for t in cycle)
    raise DependencyCycle(f"{names} would be a dependency cycle; nothing was changed",
                          data={"task_id": task_id, "cycle": cycle})


def _named(graph: Graph, task_id: str) -> str:
    title = graph.info(task_id)["title"]
    return f"{task_id} “{title}”" if title else task_id


def blockers_of(project: Project, room: str, task: Task) -> dict[str, dict[str, Any]]:
    """The dependencies of one task that are not done -> {status, title, lane}, each read from its own
    log (a finished task waits on nothing)."""
    if not task.depends_on or task.status in FINISHED:
        return {}
    found = {dep: entry_of(read_task(project, room, dep).to_json()) for dep in task.depends_on}
    return {dep: info for dep, info in found.items() if info["status"] != MET}


def with_blockers(project: Project, room: str, task: Task) -> Task:
    """`task` with its `blocked_by` read from its dependencies' logs."""
    task.blocked_by = list(blockers_of(project, room, task)) if task.depends_on else []
    return task


def waiting_text(blockers: dict[str, dict[str, Any]]) -> str:
    """`waits on t-A “…” (doing), t-B (cancelled: a person must decide)`."""
    return "waits on " + ", ".join(describe(dep, info) for dep, info in blockers.items())
