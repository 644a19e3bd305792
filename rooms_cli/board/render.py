"""Reading the board: the structured view (`rooms board --json`) and the compact markdown for prompts."""

from __future__ import annotations

from rooms_cli.board.deps import NEEDS_PERSON
from rooms_cli.board.model import FINISHED, STATUSES
from rooms_cli.board.openindex import RECENT
from rooms_cli.board.tasks import board_json, open_board, require_room, whole_graph
from rooms_cli.core.errors import InvalidInput
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import validate_name
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

DONE_SHOWN = 10  # finished tasks `rooms board` shows by default (--done N, --all)
MIN_SHORT = 10  # characters after `t-`: the first 10 are the creation millisecond
DONE_IN_MARKDOWN = 10  # the markdown board stays short enough for a prompt:
TODO_IN_MARKDOWN = 10  # the first todo tasks of each lane (every doing, blocked, failed one is shown)


def board_view(project: Project, room: str, *, lane: str | None = None, status: str | None = None,
               now: str | None = None, done: int = DONE_SHOWN, all_: bool = False) -> dict[str, Any]:
    """{room, at, counts, lanes: [{lane, tasks}], done: [...], done_total, conflicts: [...], blockers: {...},
    cycles: [...]} (tasks as JSON).

    The lanes hold every open task; `done` holds the last `done` finished (done, cancelled) tasks,
    newest first, from the open index (board/openindex.py): only open tasks' logs are read, so the
    board costs the same at 10 and 100 000 tasks. `all_` reads every log and shows every finished task.
    Short ids are the shortest unique prefixes among the tasks shown (`rooms task` resolves a prefix
    against every task, and names the candidates when one is ambiguous).

    Dependencies (board/deps.py): `counts` adds `ready` (todo tasks waiting on nothing) and `waiting`
    (todo tasks whose dependencies are not all done); `blockers` maps each task a shown task is
    blocked by to {status, title, lane}; `cycles` lists the dependency cycles among open tasks (only a
    merge makes one), each as ids from its smallest back to it."""
    if lane is not None:
        validate_name(lane, "lane")
    if status is not None and status not in (*STATUSES, "pending"):
        raise InvalidInput(f"--status must be one of {', '.join((*STATUSES, 'pending'))}, not {status!r}")
    if done < 0:
        raise InvalidInput(f"--done must be 0 or more, not {done}")
    require_room(project, room)
    moment = now or now_iso()
    if all_:
        tasks = board_json(project, room, moment)
        graph = whole_graph(project, room, tasks)
        finished_all = [t for t in tasks if t["status"] in FINISHED]
        conflicts = [{"task_id": t["id"], "title": t["title"], "lane": t["lane"], "conflicts": t["conflicts"]}
                     for t in tasks if t["conflicts"]]
        counts = {s: 0 for s in STATUSES}
        for task in tasks:
            counts[task["status"]] += 1
        open_tasks = [t for t in tasks if t["status"] not in FINISHED]
        recent = sorted(finished_all, key=lambda t: (t["updated_at"], t["id"]), reverse=True)
    else:
        open_tasks, rest = open_board(project, room, moment, done=done if lane is None and status is None else RECENT)
        counts = {s: rest["counts"].get(s, 0) for s in STATUSES}
        for task in open_tasks:
            counts[task["status"]] += 1
        conflicts = [{"task_id": t["id"], "title": t["title"], "lane": t["lane"], "conflicts": t["conflicts"]}
                     for t in open_tasks if t["conflicts"]] + rest["conflicts"]
        recent = rest["recent"]
        graph = rest["graph"]
    counts["pending"] = sum(1 for t in open_tasks if t["pending"])
    counts["ready"] = sum(1 for t in open_tasks if t["status"] == "todo" and not t["pending"] and not t["blocked_by"])
    counts["waiting"] = sum(1 for t in open_tasks if t["status"] == "todo" and t["blocked_by"])
    shown = [t for t in open_tasks if (lane is None or t["lane"] == lane) and _matches(t, status)]
    lanes: dict[str, list[dict[str, Any]]] = {}
    for task in sorted(shown, key=lambda t: (t["order"], t["id"])):
        lanes.setdefault(task["lane"], []).append(task)
    finished = [t for t in recent if (lane is None or t["lane"] == lane) and _matches(t, status)]
    if not all_:
        finished = finished[:done]
    blockers = graph.blockers(shown)
    return {
        "room": room,
        "at": moment,
        "counts": counts,
        "lanes": [{"lane": name, "tasks": lanes[name]} for name in sorted(lanes)],
        "done": finished,
        "done_total": counts["done"] + counts["cancelled"],
        "conflicts": conflicts,
        "blockers": blockers,
        "cycles": graph.cycles(),
        "short_ids": short_ids(sorted({t["id"] for t in shown} | {t["id"] for t in finished} | set(blockers))),
    }


def list_tasks(project: Project, room: str, *, lane: str | None = None, status: str | None = None,
               holder: str | None = None, now: str | None = None) -> list[dict[str, Any]]:
    """The board's tasks (not archived) as one flat list in lane, order, id order, filtered by lane,
    status (or `pending`) and the agent holding a live lease (`rooms task list`).

    A status that is not finished (todo, doing, blocked, failed), or a holder (a live lease is a doing
    task), selects only open tasks: those come from the open-task index, not from every log (at 100 000
    tasks `task list --status todo` read 100 000 logs to print 10)."""
    if lane is not None:
        validate_name(lane, "lane")
    if holder is not None:
        validate_name(holder, "holder")
    if status is not None and status not in (*STATUSES, "pending"):
        raise InvalidInput(f"--status must be one of {', '.join((*STATUSES, 'pending'))}, not {status!r}")
    require_room(project, room)
    moment = now or now_iso()
    if holder is not None or (status in STATUSES and status not in FINISHED):
        tasks = open_board(project, room, moment)[0]
    else:
        tasks = board_json(project, room, moment)
    return sorted(
        (t for t in tasks if (lane is None or t["lane"] == lane) and _matches(t, status)
         and (holder is None or (t["lease"] or {}).get("holder") == holder)),
        key=lambda t: (t["lane"], t["order"], t["id"]),
    )


def _matches(task: dict[str, Any], status: str | None) -> bool:
    if status is None:
        return True
    return bool(task["pending"]) if status == "pending" else task["status"] == status


def short_ids(ids: list[str]) -> dict[str, str]:
    """The shortest unique prefix of each id (at least MIN_SHORT characters after `t-`), like git."""
    width = 2 + MIN_SHORT
    ordered = sorted(ids)
    need = [width] * len(ordered)
    for i in range(1, len(ordered)):
        a, b = ordered[i - 1], ordered[i]
        if a[:width] != b[:width]:
            continue
        common, limit = width, min(len(a), len(b))
        while common < limit and a[common] == b[common]:
            common += 1
        need[i - 1] = max(need[i - 1], common + 1)
        need[i] = max(need[i], common + 1)
    return {task_id: task_id[:size] for task_id, size in zip(ordered, need, strict=True)}


def waits_note(task: dict[str, Any], view: dict[str, Any], mark: str = "") -> str:
    """What a task of the board `view` waits on, '' when nothing: `waits on t-01… “Write the schema”
    (doing), t-02… (cancelled: a person must decide)`, short ids quoted with `mark`, and the cycle
    it is in when it is in one."""
    if not task.get("blocked_by"):
        return ""
    short, blockers = view["short_ids"], view.get("blockers") or {}
    named = []
    for dep in task["blocked_by"]:
        info = blockers.get(dep) or {"status": "missing", "title": ""}
        title = f" “{info['title']}”" if info.get("title") else ""
        state = info["status"] + (": a person must decide" if info["status"] in NEEDS_PERSON else "")
        named.append(f"{mark}{short.get(dep, dep)}{mark}{title} ({state})")
    note = "waits on " + ", ".join(named)
    cycle = next((c for c in view.get("cycles") or () if task["id"] in c), None)
    if cycle:
        note += " · in a dependency cycle " + " → ".join(f"{mark}{short.get(t, t)}{mark}" for t in cycle)
    return note


def decisions(view: dict[str, Any], mark: str = "") -> list[str]:
    """One sentence for each thing on the board that only a person can unblock: a dependency that
    failed, was cancelled or archived, or is missing, and each dependency cycle."""
    short, blockers = view["short_ids"], view.get("blockers") or {}
    out = []
    for lane in view["lanes"]:
        for task in lane["tasks"]:
            for dep in task.get("blocked_by") or ():
                info = blockers.get(dep) or {"status": "missing"}
                if info["status"] in NEEDS_PERSON:
                    tid = short.get(task["id"], task["id"])
                    out.append(f"{mark}{tid}{mark} waits on {mark}{short.get(dep, dep)}{mark}, which is {info['status']}: "
                               f"a person must decide (retry or replace it, or drop the dependency with "
                               f"rooms task update {tid} --depends-on …)")
    for cycle in view.get("cycles") or ():
        path = " → ".join(f"{mark}{short.get(t, t)}{mark}" for t in cycle)
        out.append(f"dependency cycle {path}: a person must decide which dependency to drop "
                   f"(rooms task update ID --depends-on …)")
    return out


def _line(task: dict[str, Any], view: dict[str, Any]) -> str:
    short = view["short_ids"]
    head = f"- {task['status']} `{short.get(task['id'], task['id'])}` {task['title']}"
    parts = []
    waits = waits_note(task, view, "`")
    if waits:
        parts.append(waits)
    if task["status"] == "doing" and task["lease"]:
        lease = task["lease"]
        parts.append(f"held by {lease['plate'] or lease['holder']} until {lease['expires_at']}")
    if task["pending"]:
        parts.append(f"pending: awaits {task['pending']['owner']} (from lane {task['pending']['from']})")
    if task["status"] in ("todo", "doing"):
        parts.append(f"done when: {task['definition_of_done']}")
    record = task["record"]
    if record and task["status"] != "todo":
        if record.get("summary"):
            parts.append(record["summary"])
        if record.get("result_ref"):
            parts.append(f"→ {record['result_ref']}")
        if record.get("next"):
            parts.append(f"next: {record['next']}")
    if task["conflicts"]:
        parts.append(f"CONFLICT ×{len(task['conflicts'])}")
    return head + (" · " + " · ".join(parts) if parts else "")


def counts_shown(counts: dict[str, int]) -> list[tuple[str, int]]:
    """The counts worth a person's reading, in order: those above 0; `ready` and `waiting` only when
    a task waits on another (otherwise ready is every claimable todo task)."""
    return [(s, n) for s, n in counts.items() if n and (s not in ("ready", "waiting") or counts.get("waiting"))]


def markdown_from_view(view: dict[str, Any]) -> str:
    """The compact markdown board for prompts and commits ('' when the board is empty)."""
    counts = view["counts"]
    if not any(counts[s] for s in STATUSES):
        return ""
    short = view["short_ids"]
    summary = " · ".join(f"{n} {s}" for s, n in counts_shown(counts))
    out = [f"## Board of room {view['room']} ({summary})", ""]
    for lane in view["lanes"]:
        out.append(f"### {lane['lane']}")
        todo = [t for t in lane["tasks"] if t["status"] == "todo"]
        hidden = {t["id"] for t in todo[TODO_IN_MARKDOWN:]}
        out.extend(_line(t, view) for t in lane["tasks"] if t["id"] not in hidden)
        if hidden:
            out.append(f"- … and {len(hidden)} more todo (rooms board --lane {lane['lane']})")
        out.append("")
    if view["done"]:
        out.append("### done")
        out.extend(_line(t, view) for t in view["done"][:DONE_IN_MARKDOWN])
        more = view.get("done_total", len(view["done"])) - min(len(view["done"]), DONE_IN_MARKDOWN)
        if more > 0:
            out.append(f"- … and {more} more (rooms board --done N, or --all)")
        out.append("")
    needed = decisions(view, "`")
    if needed:
        out.append("### needs a person (dependencies that will not get done by themselves)")
        out.extend(f"- {line}" for line in needed)
        out.append("")
    if view["conflicts"]:
        out.append("### conflicts (rooms task show ID; rooms task resolve ID)")
        for item in view["conflicts"]:
            for conflict in item["conflicts"]:
                out.append(f"- `{short.get(item['task_id'], item['task_id'])}` {conflict['message']}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def board_markdown(project: Project, room: str) -> str:
    """The room's board as compact markdown, for prompts ('' when the room has no tasks)."""
    return markdown_from_view(board_view(project, room))
