"""The open-task index: what `task next`, `task add` and `board` read instead of every task ever made.

`.rooms/run/board/<room>.open.json` (run/ stays out of git, so a clone rebuilds it) holds:

- `dir`: the identity of the tasks directory (store/cache.py) when the index was built.
  Creating or removing a task file (a `task add`, a `git pull`, a checkout, a hand edit through an
  editor) changes it, and a changed directory means the index is rebuilt from the logs.
- `open`: every task that is not finished (done, cancelled), archived or headless, with the stat of its
  log (its identity) and the task replayed from it. Every read re-stats these logs (a few,
  whatever the size of the board) and replays any that changed, so an open entry is never trusted
  over its log: a claim, a done or an event appended by hand is seen by the next read. The claim
  itself re-reads the log under the task's lock anyway (claims.py). A read stores what it refreshed
  only once that was SAVE_LOGS logs or SAVE_BYTES (`_worth_storing`): a task that finished may stay
  listed as open until then, and every read replays it again and counts it as finished. A process
  that reads again (an MCP session) keeps what it refreshed as what those stored bytes come to
  (`_DECODED`), so its next read replays only the logs changed since; it stores once it has replayed
  SESSION_LOGS logs or SESSION_BYTES over the same stored bytes, which bounds what another process
  (a one-shot command, which stores from SAVE_LOGS) replays in its place.
- `counts`, `recent`, `conflicts`: the finished tasks' counts by status, the last RECENT of them
  (newest first, for the board's done tail) and those with merge conflicts.
- `lane_max`: the highest `order` ever given in each lane, so `task add` puts a task at the end of its
  lane without reading the lane's history.
- `settled`: for every task an open task depends on that is not open itself (finished, archived, or
  missing), its state as a dependency, title and lane (board/deps.py `entry_of`), so readiness is
  derived from the index alone. A task that leaves the open set is noted there as it leaves, a
  dependency added to an open task is looked up when its log is replayed, and what no open task
  depends on any more is dropped when the index is stored. Done and cancelled are final, so an
  entry only changes through an archive (`note_finished_change`) or a merge (a rebuild).

Done and cancelled are final (transitions.py), so a finished task only changes again through an
archive (rooms) or a merge (git rewrites the file: the directory changes). What the index does not see
is an append to a finished task's log that creates no file (`echo >> log`): `rooms board --all` and
`rooms task list` read every log, and the next change of the directory rebuilds the index.

Crash safety: the index is replaced atomically (store/cache.py: temp file + rename, no fsync: losing
it costs a rebuild, and a read-only tree reads without storing), writers hold its lock, and a
missing, damaged or foreign-version index is rebuilt. A
rebuild that races a writer stores the directory identity it saw before listing, so a task created
meanwhile makes the next read rebuild again.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

from rooms_cli.board import fold, store
from rooms_cli.board.deps import entry_of, read_task
from rooms_cli.board.model import FINISHED
from rooms_cli.board.replay import replay_log
from rooms_cli.core.errors import RoomsError
from rooms_cli.store import cache, files, jsonl, known, layout
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.board.model import Task


VERSION = 2  # 2: `settled`, and tasks carry depends_on and blocked_by
RECENT = 200  # finished tasks kept for `rooms board --done N` (N above this reads every log)


def index_path(project: Project, room: str) -> str:
    return os.path.splitext(layout.board_snapshot_file(project, room))[0] + ".open.json"


def dir_key(project: Project, room: str) -> list[int] | None:
    return cache.identity(store.tasks_dir(project, room))


def is_open(data: dict[str, Any]) -> bool:
    return bool(data["created_at"]) and not data["archived"] and data["status"] not in FINISHED


def _empty(key: list[int] | None) -> dict[str, Any]:
    return {"version": VERSION, "dir": key, "open": {}, "counts": {}, "recent": [], "conflicts": [], "lane_max": {},
            "settled": {}}


_DECODED: dict[str, tuple[bytes, Any]] = {}  # index path -> (its bytes, decoded), as this process last read it


def _decoded(path: str) -> tuple[bytes | None, dict[str, Any] | None]:
    """(the index's bytes, the index they hold, or None when damaged); (None, None) when unreadable.

    A process that reads the index again (an MCP session, a group's fan-out) and finds the same bytes
    takes a copy of what it decoded last time instead of decoding again (~0.5 ms for 60 open tasks,
    most of a `board` call's own work). The copy is fresh down to the containers a read or a writer
    changes (`open`, `counts`, `recent`, `conflicts`, `lane_max`, `damaged`); the entries and task
    records inside are shared, and are only ever replaced, never changed in place."""
    blob, doc = cache.load_bytes(path, VERSION, _DECODED)
    index = _valid(doc)
    return blob, (None if index is None else _copy(index))


def _saved(path: str, index: dict[str, Any]) -> None:
    """Store the index, and remember it as what its bytes decode to: the next read of this process finds
    its own write and does not decode it again (~0.3 ms for 60 open tasks). What `left` tracks is in
    the stored counts: it is not stored, nor is what `settled` holds that no open task depends on."""
    stored = {name: value for name, value in index.items() if name != "left"}
    needed = {dep for hit in index["open"].values() for dep in hit["task"].get("depends_on") or ()}
    stored["settled"] = {task_id: entry for task_id, entry in index["settled"].items() if task_id in needed}
    blob = cache.save(path, stored)
    if blob is not None:
        known.remember(_DECODED, str(path), (blob, _copy(stored)))


def _copy(index: dict[str, Any]) -> dict[str, Any]:
    out = dict(index)
    for name in ("open", "counts", "lane_max", "damaged", "left", "settled"):
        if isinstance(out.get(name), dict):
            out[name] = dict(out[name])
    for name in ("recent", "conflicts"):
        if isinstance(out.get(name), list):
            out[name] = list(out[name])
    return out


def _read(path: str) -> dict[str, Any] | None:
    return _valid(cache.load(path, VERSION))


def _valid(data: dict[str, Any] | None) -> dict[str, Any] | None:
    return data if data is not None and isinstance(data.get("open"), dict) and isinstance(data.get("settled"), dict) else None


_DAMAGED: dict[str, list[Any]] = {}  # task id -> bad lines [[lineno, reason]] of the logs replayed by this process


def _replay_file(project: Project, room: str, task_id: str, path: str, symlink: bool = False,
                 key: list[int] | None = None) -> Task:
    """The task its log at `path` replays to (bad lines warned about, and noted in _DAMAGED).

    Given the log's stat (`key`, taken before the read), the replay goes on from where this process's
    last replay of the log stopped (board/fold.py): a read that does not store the index
    (`_worth_storing`) leaves the next read of a session to replay the same changed logs, and a task
    renewed sixty times cost ~1.5 ms each time when read whole. Without a key (a rebuild) the log is
    read whole and not remembered."""
    if symlink:
        return replay_log(task_id, room, store.read_events(project, room, task_id))
    task, bad = fold.replay_file(task_id, room, path, key, keep=key is not None)
    for lineno, reason in bad:  # warned as jsonl.read warns, and kept so that later reads warn too
        jsonl.warn(path, lineno, reason)
    if bad:
        _DAMAGED[task_id] = [list(b) for b in bad]
    else:
        _DAMAGED.pop(task_id, None)
    return task


def _note_damage(index: dict[str, Any], task_id: str, key: list[int]) -> None:
    """Remember a log with bad lines (and its stat), so that a read of the index warns as a replay would."""
    damaged = index.setdefault("damaged", {})
    if task_id in _DAMAGED:
        damaged[task_id] = {"stat": key, "bad": _DAMAGED[task_id]}
    else:
        damaged.pop(task_id, None)


def _warn_damaged(project: Project, room: str, index: dict[str, Any]) -> bool:
    """Warn again about the damaged logs the index knows; False when one changed since (rebuild)."""
    folder = store.tasks_dir(project, room)
    for task_id, hit in (index.get("damaged") or {}).items():
        path = os.path.join(folder, task_id.lower() + store.SUFFIX)
        try:
            if known.identity_of(os.stat(path)) != hit["stat"]:
                return False
        except FileNotFoundError:
            return False
        for lineno, reason in hit["bad"]:
            jsonl.warn(path, lineno, reason)
    return True


def _entry(task: Task, key: list[int]) -> dict[str, Any]:
    return {"stat": key, "task": task.to_json(), "expiry_recorded": task.expiry_recorded}


def _add_finished(index: dict[str, Any], data: dict[str, Any]) -> None:
    """Count a task that left the open set (finished, archived or headless)."""
    if data["created_at"] and not data["archived"]:
        index["counts"][data["status"]] = index["counts"].get(data["status"], 0) + 1
        if data["status"] in FINISHED:
            recent = index["recent"]
            recent.append(data)
            recent.sort(key=lambda t: (t["updated_at"], t["id"]), reverse=True)  # ties by id: every build agrees
            del recent[RECENT:]
        if data["conflicts"]:
            index["conflicts"].append({"task_id": data["id"], "title": data["title"], "lane": data["lane"],
                                       "conflicts": data["conflicts"]})


def _settle(project: Project, room: str, index: dict[str, Any], data: dict[str, Any]) -> None:
    """Note in `settled` each task the open task `data` depends on that the index holds nowhere (a
    dependency just added, or one its log gained through a merge), read from its log."""
    settled = index["settled"]
    for dep in data.get("depends_on") or ():
        if dep not in index["open"] and dep not in settled:
            settled[dep] = entry_of(read_task(project, room, dep).to_json())


def _note_lane(index: dict[str, Any], data: dict[str, Any]) -> None:
    if data["created_at"] and isinstance(data["order"], int | float):
        lanes = index["lane_max"]
        lanes[data["lane"]] = max(lanes.get(data["lane"], data["order"]), data["order"])


def rebuild(project: Project, room: str, *, held: bool = False) -> dict[str, Any]:
    """Replay every log of the room's board into a new index and store it (what a fresh clone does once)."""
    key = dir_key(project, room)
    index = _empty(key)
    if key is None:
        return index
    folder = store.tasks_dir(project, room)
    entries = [e for e in files.entries(folder)  # no stat: an open log's is taken below
               if e.name.startswith("t-") and e.name.endswith(store.SUFFIX)]
    logs = files.read_each(folder, [e.name for e in entries if not e.is_symlink()], PLAIN_BYTES)
    finished: list[tuple[str, str]] = []  # (time of the last event, name) of the logs read as plainly done
    lanes, done = index["lane_max"], 0
    states: dict[str, dict[str, Any]] = {}  # what every task that is not open is as a dependency (deps.entry_of)
    for name, raw in logs:
        plain = None if raw is None else _plainly_done(raw)
        if plain is None:
            continue
        lane, number, last = plain
        if lanes.get(lane, number) <= number:
            lanes[lane] = number
        done += 1
        finished.append((last, name))
        states[store.id_from_name(name)] = {"status": "done", "title": "", "lane": lane}
    plainly = {name for _last, name in finished}
    for entry in entries:
        if entry.name in plainly:
            continue
        key = known.identity_of(os.stat(entry.path))  # before the read: an append meanwhile makes the entry stale, not wrong
        task = _replay_file(project, room, store.id_from_name(entry.name), entry.path, entry.is_symlink())
        _note_damage(index, task.id, key)
        data = task.to_json()
        _note_lane(index, data)
        if is_open(data):
            index["open"][task.id] = _entry(task, key)
        else:
            _add_finished(index, data)
            states[task.id] = entry_of(data)
    missing = {"status": "missing", "title": "", "lane": ""}
    for hit in index["open"].values():
        for dep in hit["task"].get("depends_on") or ():
            if dep not in index["open"]:
                index["settled"][dep] = states.get(dep, missing)
    if done:
        index["counts"]["done"] = index["counts"].get("done", 0) + done
    # the newest of the plainly done ones are replayed for the board's done tail (counted already)
    recent = index["recent"]
    import heapq  # a build from the logs only: every other command of the board reads the index

    for _last, name in heapq.nlargest(RECENT, finished):
        recent.append(_replay_file(project, room, store.id_from_name(name), os.path.join(folder, name)).to_json())
    recent.sort(key=lambda t: (t["updated_at"], t["id"]), reverse=True)  # ties by id: every build agrees
    del recent[RECENT:]
    try:
        with _lock(project, room, held):
            _saved(index_path(project, room), index)
    except RoomsError:  # the lock cannot be created (a read-only tree): the board still reads, only slower
        pass
    return index


def _lock(project: Project, room: str, held: bool) -> contextlib.AbstractContextManager[None]:
    """The index's lock, or nothing when the caller holds it (flock is per open file: it would wait on itself)."""
    return contextlib.nullcontext() if held else locked(index_path(project, room), what="the board's index")


PLAIN_BYTES = 1 << 16  # a log this long or longer is replayed, not read as plainly done
# compiled on first use (re's cache): only a refresh that meets a finished log reads with them
_LANE = rb'"lane": "([^"\\]*)"'
_ORDER = rb'"order": (-?[0-9]+(?:\.[0-9]+)?)[,}]'
_AT = rb'"at": "([^"\\]{1,40})"'


def _plainly_done(data: bytes) -> tuple[str, float, str] | None:
    """(lane, order, time of its last event) when the log `data` is plainly a finished task, else None.

    Plainly: one create, one claim, renews, one done, nothing else (no second claim, withdraw,
    status, update, archive, assign, merge marker). Such a log replays to done whatever its order: a
    done is written under the claim's live lease (claims.py), and with one claim there is no rival.
    Most of a long-lived board is such logs; reading them as bytes (counts first, then one search
    each for the lane and the order) keeps a fresh clone's first command within seconds at 100 000
    tasks. Anything else is replayed."""
    lines = data.count(b"\n")
    if (data.count(b'"ev": "') != lines or data.count(b'"ev": "create"') != 1
            or data.count(b'"ev": "claim"') != 1 or data.count(b'"ev": "done"') != 1
            or data.count(b'"ev": "renew"') != lines - 3 or b"\n<<<<<<<" in data
            or data.count(b'"lane": "') != 1 or data.count(b'"order": ') != 1):
        return None
    lane, number, times = re.search(_LANE, data), re.search(_ORDER, data), re.findall(_AT, data)
    if lane is None or number is None or not times:
        return None
    return lane.group(1).decode("utf-8", "replace"), float(number.group(1)), max(times).decode("ascii", "replace")


SAVE_LOGS = 4  # a read that replayed fewer changed logs than this, of fewer than SAVE_BYTES, stores nothing
SAVE_BYTES = 16 * 1024
SESSION_LOGS = 16  # a process that reads again stores once it has replayed this many logs over the same stored index
SESSION_BYTES = 64 * 1024

# index path -> (the bytes stored there, the logs this process replayed over them without storing, by task id
# -> size): see `_remember_refreshed`
_UNSAVED: dict[str, tuple[bytes, dict[str, int]]] = {}


def _refresh_open(project: Project, room: str, index: dict[str, Any]) -> dict[str, int]:
    """Re-stat every open task's log and replay the changed ones; the sizes of those replayed, by task id.

    The logs are statted relative to the tasks directory (store/files.stat_each: half the cost of a
    stat by path). Raises FileNotFoundError when a log has gone (the directory changed: the caller
    rebuilds)."""
    changed: dict[str, int] = {}
    folder = store.tasks_dir(project, room)  # checked once; the ids came from its listing
    open_ids = list(index["open"])
    names = [task_id.lower() + store.SUFFIX for task_id in open_ids]
    for task_id, name, stat in zip(open_ids, names, files.stat_each(folder, names), strict=True):
        key = known.identity_of(stat)
        if key == index["open"][task_id]["stat"]:
            continue
        changed[task_id] = key[2]
        path = os.path.join(folder, name)
        task = _replay_file(project, room, task_id, path, os.path.islink(path), key)
        _note_damage(index, task_id, key)
        data = task.to_json()
        _note_lane(index, data)
        if is_open(data):
            index["open"][task_id] = _entry(task, key)
        else:
            del index["open"][task_id]
            _add_finished(index, data)
            index["settled"][task_id] = entry_of(data)  # its dependents read its state here now
            index.setdefault("left", {})[task_id] = {"stat": key, "task": data}
    for task_id in changed:
        if task_id in index["open"]:
            _settle(project, room, index, index["open"][task_id]["task"])
    return changed


def _refresh_left(project: Project, room: str, index: dict[str, Any]) -> dict[str, int]:
    """Re-stat the logs of the tasks that left the open set in this process's reads since the index was
    stored (`left`, see `_remember_refreshed`) and count any that changed again (an archive, an update,
    a resolve, from any process) as `note_finished_change` would; the sizes of those replayed, by id."""
    left = index.get("left")
    if not left:
        return {}
    changed: dict[str, int] = {}
    folder = store.tasks_dir(project, room)
    left_ids = list(left)
    names = [task_id.lower() + store.SUFFIX for task_id in left_ids]
    for task_id, stat in zip(left_ids, files.stat_each(folder, names), strict=True):
        key = known.identity_of(stat)
        if key == left[task_id]["stat"]:
            continue
        changed[task_id] = key[2]
        data = _replace_finished(project, room, index, task_id, left.pop(task_id)["task"])
        if not is_open(data):
            left[task_id] = {"stat": key, "task": data}
    return changed


def load(project: Project, room: str, *, held: bool = False) -> dict[str, Any]:
    """The room's index, checked against the logs: rebuilt when missing, damaged or the directory changed."""
    key = dir_key(project, room)
    if key is None:
        return _empty(None)
    path = index_path(project, room)
    blob, index = _decoded(path)
    if index is None or index["dir"] != key or not _warn_damaged(project, room, index):
        return rebuild(project, room, held=held)
    try:
        replayed = _refresh_left(project, room, index)
        replayed.update(_refresh_open(project, room, index))
        earlier = _UNSAVED.get(str(path))
        before = earlier[1] if earlier is not None and earlier[0] == blob else {}
        fresh = {task_id: size for task_id, size in replayed.items() if task_id not in before}
        since = {**before, **replayed}
        if not _worth_storing(list(fresh.values())) and len(since) < SESSION_LOGS and sum(since.values()) < SESSION_BYTES:
            if replayed and blob is not None:
                _remember_refreshed(path, blob, index, since)
        else:
            with _lock(project, room, held):  # store what changed; a writer may have moved on meanwhile
                latest: dict[str, Any] | None = index
                if not held:  # the same bytes as read: what was refreshed above is the latest (no second replay)
                    current, stored = _decoded(path)
                    latest = index if current == blob else stored
                if latest is not None and latest["dir"] == key:
                    if latest is not index:
                        _refresh_open(project, room, latest)
                    _saved(path, latest)
    except FileNotFoundError:
        return rebuild(project, room, held=held)
    except RoomsError:  # the lock cannot be created (a read-only tree): what was read is still right
        pass
    return index


def _remember_refreshed(path: str, blob: bytes, index: dict[str, Any], since: dict[str, int]) -> None:
    """Keep the index a read refreshed without storing it as what the stored `blob` comes to for this
    process: its next read (an MCP session's next call) re-stats the open logs against their new stats
    and replays only what changed since, instead of every log changed since the index was stored, each
    replayed again, with the index stored every SAVE_LOGS calls. The tasks that left the open set on
    the way are in `left` with their logs' stats (never stored): another process that archives one
    finds it still open in the stored index and leaves it to the next read (`note_finished_change`),
    so this process's reads re-stat them too (`_refresh_left`). `since` (task id -> size) counts the
    logs replayed over `blob`."""
    known.remember(_DECODED, str(path), (blob, _copy(index)))
    known.remember(_UNSAVED, str(path), (blob, since))


def _worth_storing(replayed: list[int]) -> bool:
    """Whether a read that replayed logs of these sizes stores the index it refreshed. Storing it costs a
    write and a rename (~1 ms, more on a busy disk) on every `task next`, each of which changes a log (the
    claim); not storing it leaves the next read to replay the same few logs again (~0.3 ms each). So a
    read stores the index once the logs it had to replay reach SAVE_LOGS or SAVE_BYTES: the work a read
    repeats stays that small, and the stored entries, keyed by their logs' stats, are stale, never wrong."""
    return len(replayed) >= SAVE_LOGS or sum(replayed) >= SAVE_BYTES


@contextmanager
def creating(project: Project, room: str) -> Iterator[tuple[dict[str, Any], list[Any]]]:
    """Hold the index's lock around creating task files: yields (the index, checked against the logs,
    a list to append each new task id to).

    After the block the index gets the new tasks and the directory's new identity, so a `task add` or
    an import does not make the next read rebuild; a directory that another process changed without
    the lock (a git pull) is left for the next read to notice."""
    path = index_path(project, room)
    created: list[Any] = []
    with locked(path, what="the board's index"):
        index = load(project, room, held=True)
        yield index, created
        if not created:
            return
        folder = store.tasks_dir(project, room)
        opened = []
        for item in created:  # an id, or (id, the events just written): no need to read the log back
            task_id, events = item if isinstance(item, tuple) else (item, None)
            log = os.path.join(folder, task_id.lower() + store.SUFFIX)  # ids made by new_id: no path check
            task = replay_log(task_id, room, events) if events is not None else _replay_file(project, room, task_id, str(log))
            data = task.to_json()
            _note_lane(index, data)
            if is_open(data):
                index["open"][task_id] = _entry(task, known.identity_of(os.stat(log)))
                opened.append(data)
            else:
                _add_finished(index, data)
                index["settled"][task_id] = entry_of(data)
        for data in opened:  # after all were added: an import's rows may depend on each other
            _settle(project, room, index, data)
        index["dir"] = dir_key(project, room)
        _saved(path, index)


@contextmanager
def holding(project: Project, room: str) -> Iterator[dict[str, Any]]:
    """Hold the index's lock around a write that must see the board's dependencies unchanged meanwhile
    (a dependency change checked for cycles); yields the index, checked against the logs."""
    with creating(project, room) as (index, _created):
        yield index


def note_finished_change(project: Project, room: str, task_id: str, before: dict[str, Any]) -> None:
    """After rooms appended to a task that was not open (an archive, an update or a resolve of a
    finished task): replace what the index says about it. Open tasks need nothing (every read
    re-stats their logs); an index that is missing or stale is left to the next read's rebuild."""
    if is_open(before):
        return
    path = index_path(project, room)
    with locked(path, what="the board's index"):
        index = _read(path)
        if index is None or index["dir"] != dir_key(project, room):
            return
        if task_id in index["open"]:  # stored before it finished (reads store lazily): the next read replays it
            return
        _replace_finished(project, room, index, task_id, before)
        _saved(path, index)


def _replace_finished(project: Project, room: str, index: dict[str, Any], task_id: str, before: dict[str, Any]) -> dict[str, Any]:
    """Replace what `index` counts of a task that was not open (`before`, as counted) with what its log
    replays to now (open again, or counted anew); the task's data."""
    if before["created_at"] and not before["archived"]:
        index["counts"][before["status"]] = max(0, index["counts"].get(before["status"], 0) - 1)
    index["recent"] = [t for t in index["recent"] if t["id"] != task_id]
    index["conflicts"] = [c for c in index["conflicts"] if c["task_id"] != task_id]
    log = os.path.join(store.tasks_dir(project, room), task_id.lower() + store.SUFFIX)
    key = known.identity_of(os.stat(log))
    task = _replay_file(project, room, task_id, log, os.path.islink(log))
    data: dict[str, Any] = task.to_json()
    _note_lane(index, data)
    if is_open(data):
        index["open"][task_id] = _entry(task, key)
        index["settled"].pop(task_id, None)
        _settle(project, room, index, data)
    else:
        _add_finished(index, data)
        index["settled"][task_id] = entry_of(data)
    return data
