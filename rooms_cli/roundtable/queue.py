"""The roundtable queue: `.rooms/roundtables/queue.jsonl`, an append-only log of what happened to each item.

    {"op": "enqueue",   "id": "q-…", "ts", "request": {…}, "by": "cli|schedule", "key": "slot@date"?}
    {"op": "claim",     "id", "ts", "runner": {"host", "pid", "started"}, "lease_until", "attempt"}
    {"op": "heartbeat", "id", "ts", "lease_until"}
    {"op": "requeue",   "id", "ts", "reason", "not_before"?}
    {"op": "done",      "id", "ts", "roundtable": "rt-…", "room"}
    {"op": "failed",    "id", "ts", "error"}

An item's status (pending, running, done, failed) is the replay of its lines. Claiming happens under
the queue's lock (read, check pending, append the claim), so two ticks never run the same item. A
running item whose runner is gone — its process no longer exists on this host, or its lease (renewed
after every turn) lapsed — goes back to pending; after MAX_ATTEMPTS runners died it is failed.

A roundtable that fails (its provider is down, a participant is gone…) is retried by a later tick:
it goes back to pending with `not_before` = now + RETRY_BACKOFF[attempt] (5 min, then 20 min), and
after MAX_ATTEMPTS failed attempts it is failed for good. `rooms roundtable queue`, `rooms schedule`
and `rooms doctor` show both.

In git, the queue merges like every log (union) and is replayed in the one order of every log (each
line's `hlc` stamp, store/order.py), so one clone's lines keep their order whatever its clock did,
and both merge directions give the same queue. Two clones whose ticks both enqueued one scheduled occurrence (same
`key`) hold two items after the merge: the later one, if still pending, is replayed as failed
("duplicate of q-…"), so the roundtable is not run a second time; one that already ran in its clone
stays as it is (`rooms doctor` reports the occurrence that ran twice).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from rooms_cli.core import terminal
from rooms_cli.core.errors import InvalidInput, NotFound
from rooms_cli.core.text import count
from rooms_cli.roundtable.orchestrator import RoundtableRequest
from rooms_cli.store import eventlog, files, jsonl, layout
from rooms_cli.store.clock import add_seconds, iso, now, now_iso, parse_time
from rooms_cli.store.ids import host_name, new_id, resolve_prefix
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

LEASE_SECONDS = 15 * 60
MAX_ATTEMPTS = 3
RETRY_BACKOFF = (5 * 60, 20 * 60)  # seconds to wait after the 1st, 2nd… failed attempt
STATUSES = ("pending", "running", "done", "failed")


def queue_path(project: Project) -> str:
    return layout.roundtable_queue_file(project)


@dataclass
class QueueItem:
    """A roundtable request in the queue, replayed from its lines: status, attempts, runner, outcome."""

    id: str
    request: RoundtableRequest
    enqueued: str = ""
    by: str = "cli"
    key: str | None = None
    status: str = "pending"
    attempts: int = 0
    runner: dict[str, Any] | None = None
    lease_until: str | None = None
    roundtable: str | None = None
    room: str | None = None
    error: str | None = None
    not_before: str | None = None  # a failed attempt waits for its backoff before the next claim
    duplicate_of: str | None = None  # the item enqueued first under the same key in another clone
    history: list[str] = field(default_factory=list)  # requeue reasons

    def to_json(self) -> dict[str, Any]:
        data = {
            "id": self.id, "status": self.status, "format": self.request.format, "request": self.request.to_json(),
            "enqueued": self.enqueued, "by": self.by, "attempts": self.attempts,
        }
        for name in ("key", "runner", "lease_until", "roundtable", "room", "error", "not_before", "duplicate_of"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        if self.history:
            data["requeued"] = self.history
        return data


_warned: set[str] = set()


def replay(records: list[dict[str, Any]]) -> dict[str, QueueItem]:
    """Items by id, in enqueue order, from the log's lines (unknown ops and ids are ignored)."""
    from rooms_cli.store import schema

    items: dict[str, QueueItem] = {}
    for rec in eventlog.ordered(records):
        # a hand-edited or merged line we cannot use: skipped (said once, in the words doctor uses), the rest kept
        wrong = schema.problem("roundtable-queue", rec, strict=False)
        try:
            if wrong is None:
                _apply(items, rec)
        except (TypeError, ValueError, InvalidInput) as exc:
            wrong = str(getattr(exc, "message", exc))
        key = f"{rec.get('op')!r} record for item {rec.get('id')!r}"
        if wrong is not None and key not in _warned:
            _warned.add(key)
            terminal.warn(f"roundtables/queue.jsonl: unusable {key} ({wrong}); skipped")
    first_by_key: dict[str, str] = {}
    for item in items.values():
        if item.key is None:
            continue
        first = first_by_key.setdefault(item.key, item.id)
        if first != item.id and item.status == "pending" and not item.attempts:
            item.status, item.duplicate_of = "failed", first
            item.error = f"duplicate of {first} ({item.key} was enqueued in two clones)"
    return items


def _apply(items: dict[str, QueueItem], rec: dict[str, Any]) -> None:
    op, item_id = rec.get("op"), str(rec.get("id", ""))
    if op == "enqueue" and isinstance(rec.get("request"), dict):
        request = RoundtableRequest.from_json(rec["request"])
        request.check()
        items[item_id] = QueueItem(item_id, request, rec.get("ts", ""), rec.get("by", "cli"), rec.get("key"))
        return
    item = items.get(item_id)
    if item is not None:
        _apply_op(item, op, rec)


def _apply_op(item: QueueItem, op: object, rec: dict[str, Any]) -> None:
    handler = _OPS.get(op) if isinstance(op, str) else None
    if handler is not None:
        handler(item, rec)


def _claimed(item: QueueItem, rec: dict[str, Any]) -> None:
    item.status, item.runner, item.lease_until = "running", rec.get("runner"), rec.get("lease_until")
    item.attempts = int(rec.get("attempt", item.attempts + 1))


def _heartbeat(item: QueueItem, rec: dict[str, Any]) -> None:
    item.lease_until = rec.get("lease_until")


def _requeued(item: QueueItem, rec: dict[str, Any]) -> None:
    item.status, item.runner, item.lease_until = "pending", None, None
    item.not_before = rec.get("not_before")
    item.error = rec.get("error", item.error)
    item.history.append(str(rec.get("reason", "")))


def _done(item: QueueItem, rec: dict[str, Any]) -> None:
    item.status, item.roundtable, item.room = "done", rec.get("roundtable"), rec.get("room")


def _failed(item: QueueItem, rec: dict[str, Any]) -> None:
    item.status, item.error = "failed", rec.get("error")
    item.roundtable = rec.get("roundtable", item.roundtable)


# what each op after `enqueue` does to its item (an op this version does not know: nothing)
_OPS = {"claim": _claimed, "heartbeat": _heartbeat, "requeue": _requeued, "done": _done, "failed": _failed}


def list_items(project: Project) -> list[QueueItem]:
    return list(replay(jsonl.read(queue_path(project))).values())


def get_item(project: Project, prefix: str) -> QueueItem:
    items = replay(jsonl.read(queue_path(project)))
    return items[resolve_prefix(prefix, list(items), "queue item")]


def roundtable_room(project: Project, ident: str) -> str | None:
    """The room a roundtable wrote into, from its id (`rt-…`) or its queue item's (`q-…`), any unique
    prefix; None when no queued roundtable matches. A hand-run roundtable is found by its own room's
    name, which ends with its id's last six characters (orchestrator.own_room)."""
    from rooms_cli.chat.rooms import room_ids

    ident = ident.strip()
    items = [i for i in replay(jsonl.read(queue_path(project))).values() if i.room]
    if ident.startswith("q-"):
        rooms = {i.room for i in items if i.id.startswith(ident)}
    else:
        rooms = {i.room for i in items if i.roundtable and i.roundtable.startswith(ident)}
    if not rooms and ident.startswith("rt-") and len(ident) >= 9:
        suffix = "-" + ident[-6:].lower()
        rooms = {r for r in room_ids(project) if r.startswith("roundtable-") and r.endswith(suffix)}
    return rooms.pop() if len(rooms) == 1 else None


def enqueue(project: Project, request: RoundtableRequest, *, by: str = "cli", key: str | None = None) -> tuple[QueueItem, bool]:
    """Add a pending item; with `key`, an item already enqueued under it is returned instead (False)."""
    request.check()
    path = queue_path(project)
    with locked(path, what="the roundtable queue"):
        items = replay(jsonl.read(path))
        if key is not None:
            for item in items.values():
                if item.key == key:
                    return item, False
        item_id = new_id("q")
        rec: dict[str, Any] = {"op": "enqueue", "id": item_id, "ts": now_iso(), "request": request.to_json(), "by": by}
        if key is not None:
            rec["key"] = key
        _append(project, [rec])
    return replay([rec])[item_id], True


def _append(project: Project, records: list[dict[str, Any]]) -> None:
    """Append to the queue (the caller holds its lock), each record checked first as `replay` reads it
    (store/schema.py): nothing written is skipped."""
    from rooms_cli.store import schema

    path = queue_path(project)
    for record in records:
        schema.validate("roundtable-queue", record, project.relative(path))
    eventlog.append(path, records, lock=False)


def this_runner() -> dict[str, Any]:
    pid = os.getpid()
    return {"host": host_name(), "pid": pid, "started": files.process_start(pid)}


def runner_gone(item: QueueItem, moment: datetime) -> str | None:
    """Why `item`'s runner is gone (its process died, or its lease lapsed), or None if it may be alive."""
    runner = item.runner or {}
    if runner.get("host") == host_name() and isinstance(runner.get("pid"), int):
        pid = runner["pid"]
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return f"runner pid {pid} died"
        except PermissionError:
            pass
        started = runner.get("started")
        if started and files.process_start(pid) not in (None, started):
            return f"runner pid {pid} died (the pid was reused)"
    if item.lease_until and parse_time(item.lease_until) < moment:
        return f"runner lease lapsed at {item.lease_until}"
    return None


def recover_dead(project: Project, *, dry_run: bool = False) -> list[tuple[QueueItem, str]]:
    """Put running items whose runner is gone back to pending (or fail them after MAX_ATTEMPTS)."""
    path = queue_path(project)
    if dry_run:
        moment = now()
        return [(i, r) for i in list_items(project) if i.status == "running" and (r := runner_gone(i, moment))]
    recovered: list[tuple[QueueItem, str]] = []
    with locked(path, what="the roundtable queue"):
        moment = now()
        records = []
        for item in replay(jsonl.read(path)).values():
            reason = item.status == "running" and runner_gone(item, moment)
            if not reason:
                continue
            if item.attempts >= MAX_ATTEMPTS:
                records.append({"op": "failed", "id": item.id, "ts": now_iso(),
                                "error": f"{reason}; gave up after {count(item.attempts, 'attempt')}"})
            else:
                records.append({"op": "requeue", "id": item.id, "ts": now_iso(), "reason": reason})
            recovered.append((item, reason))
        _append(project, records)
    return recovered


def ready(item: QueueItem, moment: datetime) -> bool:
    """A pending item may be claimed once its retry backoff (if any) has passed."""
    return not item.not_before or parse_time(item.not_before) <= moment


def claim_next(project: Project) -> QueueItem | None:
    """Claim the oldest pending item for this process, or None when nothing is pending."""
    path = queue_path(project)
    with locked(path, what="the roundtable queue"):
        moment = now()
        pending = [i for i in replay(jsonl.read(path)).values() if i.status == "pending" and ready(i, moment)]
        if not pending:
            return None
        item = pending[0]
        item.status, item.runner, item.attempts = "running", this_runner(), item.attempts + 1
        item.lease_until = iso(add_seconds(now(), LEASE_SECONDS))
        _append(project, [{"op": "claim", "id": item.id, "ts": now_iso(), "runner": item.runner,
                          "lease_until": item.lease_until, "attempt": item.attempts}])
    return item


def _finish(project: Project, item: QueueItem, record: dict[str, Any]) -> None:
    """Append a final line if this process still holds the claim (a requeued item is not ours)."""
    path = queue_path(project)
    with locked(path, what="the roundtable queue"):
        current = replay(jsonl.read(path)).get(item.id)
        if current is None:
            raise NotFound(f"queue item {item.id} vanished from {project.relative(path)}")
        if current.status != "running" or current.runner != item.runner:
            return
        _append(project, [{**record, "id": item.id, "ts": now_iso()}])


def renew(project: Project, item: QueueItem) -> None:
    """Extend the lease when half of it is used (called after every turn)."""
    moment = now()
    if item.lease_until and (parse_time(item.lease_until) - moment).total_seconds() > LEASE_SECONDS / 2:
        return
    item.lease_until = iso(add_seconds(moment, LEASE_SECONDS))
    _finish(project, item, {"op": "heartbeat", "lease_until": item.lease_until})


def mark_done(project: Project, item: QueueItem, roundtable: str, room: str) -> None:
    _finish(project, item, {"op": "done", "roundtable": roundtable, "room": room})


def mark_failed(project: Project, item: QueueItem, error: str, roundtable: str | None = None, *,
                retry: bool = True) -> str | None:
    """Record a failed attempt: back to pending after its backoff, or failed after MAX_ATTEMPTS (at
    once with `retry=False`: a request that cannot run as asked fails the same way every time).

    Returns when the next attempt may run (an ISO time), or None when the item gave up.
    """
    record: dict[str, Any] = {"op": "failed", "error": error}
    retry_at = None
    if retry and item.attempts < MAX_ATTEMPTS:
        wait = RETRY_BACKOFF[min(item.attempts, len(RETRY_BACKOFF)) - 1]
        retry_at = iso(add_seconds(now(), wait))
        record = {"op": "requeue", "reason": f"attempt {item.attempts} failed: {error}", "error": error,
                  "not_before": retry_at}
    elif retry:
        record["error"] = f"{error} (gave up after {count(item.attempts, 'attempt')})"
    if roundtable:
        record["roundtable"] = roundtable
    _finish(project, item, record)
    return retry_at
