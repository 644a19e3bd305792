"""A task log replayed again from where this process last stopped, not from its first line.

A session (`rooms mcp`, a group's fan-out, the open index's refresh) replays the same few task logs
over and over: each `task next` replays its task under the lock to claim it, and the next read of
the index replays it again because the claim changed it. A replay reads the whole log, so a task
claimed, released or renewed a few hundred times cost a few ms a call, growing with every call.

The memo keeps, per log, the task it replayed to and where that replay stopped: the log's identity
(store/cache.identity), its seal at that end (store/known.seal: the same file, only appended to since)
and the sort key (store/order.py) of the last event folded. A later replay of that log then

- hands back a copy of the kept task when the log's identity is the same;
- else reads only the bytes appended since and folds them onto a copy (replay.fold), when all of
  them are whole, good, stamped lines that sort after the last event folded and none is a withdraw
  (a withdraw changes how an earlier claim reads);
- else replays the whole log, as a first read does.

So the task is always the one a whole replay would give: every case the fold cannot prove the
same (a merge that put lines in the middle, a rewrite, a bad line, a conflict marker, a line written
by hand without a stamp) reads the log whole, which also warns about bad lines as every read does.
Only logs without bad lines are kept; a task handed out is the caller's to change.
"""

from __future__ import annotations

from rooms_cli.board.model import Task
from rooms_cli.board.replay import fold, replay_log, withdrawn_ids
from rooms_cli.core.records import dataclass
from rooms_cli.store import cache, jsonl, known, order

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


@dataclass
class Folded:
    """Where the replay of one log stopped, and the task it gave (never handed out: callers get copies)."""

    key: list[int]  # the log's identity when read (taken before the read)
    seal: list[Any]  # known.seal at `end`
    last: str  # order.sort_key of the last event folded ("" for none)
    task: Task
    withdrawn: set[str]  # withdrawn_ids of the events folded


_FOLDED: dict[str, Folded] = {}  # log path -> where this process's last replay of it stopped
KEEP = 1024  # logs remembered (known.remember)


def replay_file(task_id: str, room: str, path: str, key: list[int] | None = None, *, keep: bool = True) -> tuple[Task, list[Any]]:
    """(the task the log at `path` replays to, before the clock is applied; the log's bad lines as
    (line number, reason)): a task of the caller's own. `key`, the log's identity taken before this
    call, saves a stat; `keep=False` reads without remembering (a rebuild of a whole board). A
    conflict marker raises as every read of a log does (jsonl.scan)."""
    kept = _FOLDED.get(path) if keep else None
    if kept is not None:
        if key is not None and key == kept.key:
            return kept.task.copy(), []
        folded = _fold_more(path, kept)
        if folded is not None:
            return folded.task.copy(), []
    if key is None and keep:
        key = cache.identity(path)
    result = jsonl.scan(path)  # a marker raises here
    events = order.ordered(result.records)
    task = replay_log(task_id, room, events)
    if keep and key is not None and not result.bad:
        known.remember(_FOLDED, path, Folded(key=key, seal=known.seal(path, result.end), task=task.copy(),
                                             last=order.sort_key(events[-1]) if events else "",
                                             withdrawn=withdrawn_ids(events)), cap=KEEP)
    elif kept is not None:
        _FOLDED.pop(path, None)
    return task, result.bad


def _fold_more(path: str, kept: Folded) -> Folded | None:
    """The kept replay with what was appended since folded on (kept again), when that is sure to be
    what a whole replay gives; None when the log must be read whole."""
    more = jsonl.appended(path, kept.seal)
    if more is None:
        return None
    key, seal, scan = more
    if key == kept.key:
        return kept
    events = order.ordered(scan.records)
    if scan.bad or (events and not _after(events, kept)):
        return None
    task = fold(kept.task.copy(), events, kept.withdrawn) if events else kept.task
    folded = Folded(key=key, seal=seal, last=order.sort_key(events[-1]) if events else kept.last, task=task,
                    withdrawn=kept.withdrawn)
    return known.remember(_FOLDED, path, folded, cap=KEEP)


def _after(events: list[dict[str, Any]], kept: Folded) -> bool:
    """Whether `events` (in order) all come after the kept fold's last event and change nothing before it."""
    if not kept.last or order.sort_key(events[0]) <= kept.last:
        return False
    for event in events:
        stamp = event.get("hlc")
        if not isinstance(stamp, str) or not stamp or event.get("ev") in ("withdraw", "void"):
            return False
        if event.get("ev") == "claim" and event.get("lease_id") in kept.withdrawn:
            return False
    return True
