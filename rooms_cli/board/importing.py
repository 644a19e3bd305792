"""Bulk entry: `rooms task import FILE` (JSONL, JSON, CSV, a markdown checklist) and `--from backlog DIR`.

Every row is validated before anything is written: one bad row and nothing is added, the error names
its line. Then all tasks are written in one process under the board index's lock (openindex.creating):
each task's log is created whole (create, and for a finished or held-back status the events that put it
there), without the per-append lock and fsync of `task add`; the data is flushed once at the end
(`os.sync`). Crash semantics: a crash before that flush can lose the last tasks written or leave a log
cut short (replay reads what is whole; a log without its create line is left off the board and
reported by `rooms doctor`); nothing already on the board is touched. Importing the same file twice
adds the tasks twice (imported tasks get new ids).

Rows: `title` (required), `lane` (else `--lane`), `definition_of_done` or `done` (else `--done`),
`detail`, `status` (todo, done, blocked, failed, cancelled; `doing` imports as todo: a lease cannot be
imported), `order`, `summary` (a finished task's record; else `record.summary` as `task list --json`
prints it), `labels` (kept as a `labels: …` line of the detail), `ref` (the row's name within the
file; else its `id`) and `depends_on` (a list, or comma-separated text in CSV; `dependencies` too): each
entry the `ref` of another row of the file, or a task of the board (id or unique prefix). An entry that
is neither, or a dependency cycle anywhere in the file, refuses the whole import. `rooms task list
--json` is a valid input, so a board's export round-trips, its dependencies with it (the rows' ids are
their refs).

Backlog.md (`--from backlog`): the frontmatter's `id` is the row's ref and its `dependencies` are
matched as Backlog.md matches ids (ignoring case and leading zeros: `task-7` is `TASK-007`); a
dependency on a task of `backlog/completed/` is met already and is dropped.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from rooms_cli.board import store
from rooms_cli.board.deps import find_cycles, split_ids
from rooms_cli.board.model import TITLE_MAX
from rooms_cli.board.tasks import one_line, require_room
from rooms_cli.core.errors import InvalidInput, storage_error
from rooms_cli.store import files
from rooms_cli.store.clock import add_seconds, hlc_stamp, iso, now
from rooms_cli.store.ids import is_valid_name, new_id, new_ids
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

FORMATS = ("jsonl", "json", "csv", "md")
STATUSES = ("todo", "doing", "done", "blocked", "failed", "cancelled")
DEFAULT_DONE = "as the title says"
_BACKLOG_STATUS = {"to do": "todo", "todo": "todo", "in progress": "todo", "done": "done", "blocked": "blocked",
                   "cancelled": "cancelled", "canceled": "cancelled"}


@dataclass
class Row:
    """One task to import, checked."""

    title: str
    lane: str
    definition: str
    detail: str = ""
    status: str = "todo"
    order: float | None = None
    summary: str = ""
    where: str = ""  # the file and line it came from, for errors
    ref: str = ""  # its name within the file (`ref`, else `id`): what other rows' depends_on name
    depends_on: list[str] = field(default_factory=list)  # refs of rows of the file, or tasks of the board


def format_of(name: str, given: str | None) -> str:
    if given:
        if given not in FORMATS:
            raise InvalidInput(f"--format must be one of {', '.join(FORMATS)}, not {given!r}")
        return given
    suffix = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    found = {"jsonl": "jsonl", "ndjson": "jsonl", "json": "json", "csv": "csv", "md": "md", "markdown": "md"}.get(suffix)
    if found is None:
        raise InvalidInput(f"cannot tell the format of {name!r} from its name: pass --format ({', '.join(FORMATS)})")
    return found


def _row(where: str, data: dict[str, Any], lane: str, done: str) -> Row:
    """One row checked; InvalidInput naming `where` when it is not a task."""
    if not isinstance(data, dict):
        raise InvalidInput(f"{where}: expected an object with a title, not {type(data).__name__}")
    try:
        title = one_line(str(data.get("title") or ""), "title", TITLE_MAX)
        row_lane = str(data.get("lane") or lane or "").strip()
        if not is_valid_name(row_lane):
            raise InvalidInput(f"lane {row_lane!r} is not a valid agent id" if row_lane
                               else "no lane: give one (a lane, or an assignee in Backlog.md) or pass --lane")
        definition = str(data.get("definition_of_done") or data.get("done") or done or "").strip()
        status = str(data.get("status") or "todo").strip().lower()
        if status not in STATUSES:
            raise InvalidInput(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
        order = data.get("order")
        if order not in (None, ""):
            try:
                order = float(order)
            except (TypeError, ValueError):
                raise InvalidInput(f"order must be a number, not {order!r}") from None
            if order != order or order in (float("inf"), float("-inf")):
                raise InvalidInput(f"order must be finite, not {order!r}")
            order = int(order) if order == int(order) else order
        else:
            order = None
        detail = str(data.get("detail") or data.get("description") or "").strip()
        labels = data.get("labels")
        if isinstance(labels, str):
            labels = [x.strip() for x in labels.split(",") if x.strip()]
        if labels:
            detail = (detail + "\n\n" if detail else "") + "labels: " + ", ".join(str(x) for x in labels)
        given = data.get("record")
        record: dict[str, Any] = given if isinstance(given, dict) else {}
        summary = str(data.get("summary") or record.get("summary") or "").strip()
        ref = data.get("ref") or data.get("id") or ""
        if not isinstance(ref, (str, int)) or isinstance(ref, bool):
            raise InvalidInput(f"ref must be text, not {ref!r}")
        wanted = data.get("depends_on", data.get("dependencies"))
        if wanted is not None and not (isinstance(wanted, str) or (isinstance(wanted, list) and all(
                isinstance(x, (str, int)) and not isinstance(x, bool) for x in wanted))):
            raise InvalidInput(f"depends_on must be a list of refs or task ids, not {wanted!r}")
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc.message}") from None
    return Row(title=title, lane=row_lane, definition=definition, detail=detail,
               status="todo" if status == "doing" else status, order=order, summary=summary, where=where,
               ref=str(ref).strip(), depends_on=split_ids([str(x) for x in wanted] if isinstance(wanted, list) else wanted))


def parse(text: str, fmt: str, *, lane: str = "", done: str = DEFAULT_DONE, name: str = "input") -> list[Row]:
    """Every row of `text` checked; the first bad one raises InvalidInput naming its line."""
    rows: list[Row] = []
    if fmt == "jsonl":
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInput(f"{name} line {number}: not JSON ({exc.msg})") from None
            rows.append(_row(f"{name} line {number}", data, lane, done))
    elif fmt == "json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{name} line {exc.lineno}: not JSON ({exc.msg})") from None
        if not isinstance(data, list):
            raise InvalidInput(f"{name}: expected a JSON list of tasks (what `rooms task list --json` prints)")
        rows = [_row(f"{name} item {n}", item, lane, done) for n, item in enumerate(data, 1)]
    elif fmt == "csv":
        reader = csv.DictReader(io.StringIO(text))
        if not reader.fieldnames or "title" not in reader.fieldnames:
            raise InvalidInput(f"{name} line 1: the header must name a title column")
        for data in reader:
            rows.append(_row(f"{name} line {reader.line_num}", data, lane, done))
    elif fmt == "md":
        for number, line in enumerate(text.splitlines(), 1):
            stripped = line.strip()
            if not stripped.startswith(("- [", "* [")):
                continue
            mark, _, title = stripped[3:].partition("]")
            if mark.lower() not in (" ", "x"):
                raise InvalidInput(f"{name} line {number}: a checklist item is `- [ ] title` or `- [x] title`")
            rows.append(_row(f"{name} line {number}", {"title": title, "status": "done" if mark.lower() == "x" else "todo"},
                             lane, done))
    else:
        raise InvalidInput(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    return rows


def _assignee(meta: dict[str, Any]) -> str:
    """The lane a Backlog.md task's first assignee names (`assignee: ['@Ada Lovelace']` -> ada-lovelace), or ""."""
    who = meta.get("assignee")
    first = who[0] if isinstance(who, list) and who else who
    if not isinstance(first, str):
        return ""
    return "-".join(first.strip().lstrip("@").lower().split())


def backlog_rows(folder: Path, *, lane: str = "", done: str = DEFAULT_DONE) -> list[Row]:
    """The tasks of a Backlog.md project (`backlog/tasks/*.md`: YAML frontmatter id, title, status, labels,
    dependencies; the body's Description section as the detail), in file-name order. A task's lane is its
    `lane`, else its first assignee (`@ops` -> ops), else `--lane`."""
    base = folder / "backlog" / "tasks" if (folder / "backlog" / "tasks").is_dir() else folder / "tasks"
    if not base.is_dir():
        raise InvalidInput(f"{folder} has no backlog/tasks/ directory (a Backlog.md project)")
    rows = []
    for path in map(Path, files.matching(base, "*.md")):
        meta, body = _frontmatter(path)
        status = _BACKLOG_STATUS.get(str(meta.get("status") or "to do").strip().lower())
        if status is None:
            raise InvalidInput(f"{path}: unknown status {meta.get('status')!r} (To Do, In Progress, Done)")
        rows.append(_row(str(path), {"title": meta.get("title"), "status": status, "labels": meta.get("labels"),
                                     "detail": _description(body), "lane": meta.get("lane") or _assignee(meta), "ref": meta.get("id"),
                                     "depends_on": meta.get("dependencies")}, lane, done))
    completed = base.parent / "completed"
    met = [_frontmatter(Path(path))[0].get("id") for path in files.matching(completed, "*.md")] if completed.is_dir() else []
    _match_backlog_ids(rows, [str(m) for m in met if m])
    return rows


def _frontmatter(path: Path) -> tuple[dict[str, Any], str]:
    """(the YAML frontmatter of a Backlog.md task file, its body); InvalidInput naming the file."""
    import yaml

    text = files.read_text(path)
    if not text.startswith("---"):
        raise InvalidInput(f"{path}: no YAML frontmatter")
    front, body = _split(text, path)
    try:
        meta = yaml.safe_load(front) or {}
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{path}: the frontmatter is not YAML ({exc})") from None
    if not isinstance(meta, dict):
        raise InvalidInput(f"{path}: the frontmatter is not a mapping")
    return meta, body


_BACKLOG_ID = re.compile(r"(?:[a-z][a-z0-9_]*-)?([0-9]+(?:\.[0-9]+)*)")


def _backlog_key(value: str) -> tuple[str, ...]:
    """A Backlog.md id as Backlog.md compares ids: the case ignored, and leading zeros of its numbers
    (`TASK-007` is `task-7`; a bare `7` matches any prefix)."""
    text = value.strip().lower()
    found = _BACKLOG_ID.fullmatch(text)
    if found is None:
        return (text,)
    return ("#", *(str(int(part)) for part in found.group(1).split(".")))


def _match_backlog_ids(rows: list[Row], completed: list[str]) -> None:
    """Rewrite each row's dependencies as the refs of the rows they name the Backlog.md way, and drop
    those on a completed task (met already); what matches nothing is left to `link` to refuse."""
    refs = {_backlog_key(row.ref): row.ref for row in rows if row.ref}
    done = {_backlog_key(ref) for ref in completed} - set(refs)
    for row in rows:
        row.depends_on = [refs.get(_backlog_key(dep), dep) for dep in row.depends_on if _backlog_key(dep) not in done]


def _split(text: str, path: Path) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    for n, line in enumerate(lines[1:], 1):
        if line.strip() == "---":
            return "".join(lines[1:n]), "".join(lines[n + 1:])
    raise InvalidInput(f"{path}: the frontmatter is not closed: add a line '---' after the last field")


def _description(body: str) -> str:
    """The Description section of a Backlog.md task (between its markers or its heading), else the body."""
    start, end = "<!-- SECTION:DESCRIPTION:BEGIN -->", "<!-- SECTION:DESCRIPTION:END -->"
    if start in body and end in body:
        return body.split(start, 1)[1].split(end, 1)[0].strip()
    if "## Description" in body:
        rest = body.split("## Description", 1)[1]
        return rest.split("\n## ", 1)[0].strip()
    return body.strip()


def link(project: Project, room: str, rows: list[Row], ids: list[str]) -> list[list[str]]:
    """The full ids each row depends on (`ids`: the rows' new ids, in order): a ref of another row, else
    a task of the board. InvalidInput naming the row for a ref used twice, an entry that is neither,
    and any dependency cycle among the rows."""
    from rooms_cli.core.errors import NotFound
    from rooms_cli.store.ids import resolve_prefix

    by_ref: dict[str, int] = {}
    board: list[str] | None = None  # the board's task ids, listed once if a row names one
    for number, row in enumerate(rows):
        if row.ref:
            if row.ref in by_ref:
                raise InvalidInput(f"{row.where}: ref {row.ref!r} is also the ref of {rows[by_ref[row.ref]].where}")
            by_ref[row.ref] = number
    linked: list[list[str]] = []
    for row in rows:
        found = set()
        for wanted in row.depends_on:
            if wanted in by_ref:
                found.add(ids[by_ref[wanted]])
                continue
            if board is None:
                board = store.list_task_ids(project, room)
            try:
                found.add(resolve_prefix(wanted, board, "task id"))
            except NotFound:
                raise InvalidInput(f"{row.where}: depends on {wanted!r}, which is neither the ref of a row of this "
                                   f"file nor a task on the board of room {room!r}; nothing was imported") from None
            except InvalidInput as exc:
                raise InvalidInput(f"{row.where}: {exc.message}; nothing was imported") from None
        linked.append(sorted(found))
    where = dict(zip(ids, rows, strict=True))
    cycles = find_cycles({task_id: [d for d in deps if d in where] for task_id, deps in zip(ids, linked, strict=True) if deps})
    if cycles:
        path = " → ".join(_named(where[task_id]) for task_id in cycles[0])
        raise InvalidInput(f"a dependency cycle: {path}; nothing was imported", code="dependency_cycle")
    return linked


def _named(row: Row) -> str:
    return f"{row.where} ({row.ref or row.title})"


def _events(task_id: str, row: Row, order: float, by: str, moment: str, later: str,
            depends_on: list[str]) -> list[dict[str, Any]]:
    create: dict[str, object] = {"at": moment, "by": by, "definition_of_done": row.definition, "detail": row.detail, "ev": "create",
              "lane": row.lane, "order": order, "task": task_id, "title": row.title}
    if depends_on:
        create["depends_on"] = depends_on
    events = [create]
    if row.status == "done":
        lease = new_id("l")
        plate = f"{by}/import"
        record: dict[str, object] = {"artifacts": [], "next": None, "plate": plate, "result_ref": None, "status": "done",
                  "summary": row.summary or "imported as done", "task_id": task_id}
        events.append({"at": moment, "by": by, "ev": "claim", "expires_at": later, "fence": 1, "holder": by,
                       "lease_id": lease, "plate": plate})
        events.append({"at": moment, "by": by, "ev": "done", "fence": 1, "lease_id": lease, "record": record})
    elif row.status != "todo":
        event: dict[str, object] = {"at": moment, "by": by, "ev": "status", "status": row.status}
        if row.summary:
            event["record"] = {"artifacts": [], "next": None, "plate": f"{by}/import", "result_ref": None,
                               "status": row.status, "summary": row.summary, "task_id": task_id}
        events.append(event)
    for event in events:
        event["hlc"] = hlc_stamp()
    return [dict(sorted(e.items())) for e in events]


def import_rows(project: Project, room: str, rows: list[Row], *, by: str) -> list[str]:
    """Write every row as a new task (in order); the new ids. The rows are already checked."""
    from rooms_cli.board.openindex import creating

    require_room(project, room)
    if not rows:
        return []
    folder = store.tasks_dir(project, room)
    files.make_folder(folder)
    moment_dt = now()
    moment, later = iso(moment_dt), iso(add_seconds(moment_dt, 60))
    new: list[tuple[str, list[dict[str, Any]]]] = []
    with creating(project, room) as (index, created):
        ids = new_ids("t", len(rows))  # minted apart: the board shows them as short as task add's
        linked = link(project, room, rows, ids)
        lane_max = dict(index["lane_max"])
        for row, task_id, depends_on in zip(rows, ids, linked, strict=True):
            order = row.order
            if order is None:
                order = int(lane_max.get(row.lane, 0)) + 1
            lane_max[row.lane] = max(lane_max.get(row.lane, order), order)
            new.append((task_id, _events(task_id, row, order, by, moment, later, depends_on)))
        try:  # all or nothing, made durable once for the whole import (not two fsyncs per task)
            files.create_all((os.path.join(folder, task_id.lower() + store.SUFFIX),  # our own ids: no path check per task
                              "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events).encode("utf-8"))
                             for task_id, events in new)
        except OSError as exc:
            raise storage_error(exc.filename or folder, exc) from None
        created.extend(new)
    return [task_id for task_id, _events in new]
