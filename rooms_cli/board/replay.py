"""Replay: a task's state is the fold of its event log, seen at a moment (`now`).

Writes are checked under the task's lock, so on one machine every event replays cleanly. Events
that do not apply come from a git merge of two clones that wrote offline (both claimed, or one
wrote under a lease the other had overtaken): replay keeps them as the task's `conflicts` instead
of silently picking a winner, until `rooms task resolve` acknowledges them.

Times are compared as strings: every time is written by clock.iso in one fixed format.
"""

from __future__ import annotations

from collections.abc import Callable

from rooms_cli.board.model import BoardConflict, Lease, Task
from rooms_cli.board.transitions import allowed
from rooms_cli.store import schema
from rooms_cli.store.clock import in_force, lease_limit

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

LEASE_EVENTS = ("renew", "release", "done", "expire")


def replay(task_id: str, room: str, events: list[dict[str, Any]], now: str) -> Task:
    """The task described by `events` as it reads at ISO time `now`."""
    task = replay_log(task_id, room, events)
    seen_at(task, now)
    return task


def seen_at(task: Task, now: str) -> Task:
    """The task as it reads at `now`: a lease that has lapsed by then reopens it; a lease set by an event
    stamped more than the allowed skew after `now` (its writer's clock ran ahead) ends where
    `bounded_expiry` lets it for a clock that is right."""
    _lapse(task, now)
    lease = task.lease
    if lease is not None and lease.ahead is not None and not in_force(lease.ahead[0], now):
        task.lease = Lease(lease.lease_id, lease.fence, lease.holder, lease.plate, lease.claimed_at, lease.ahead[1])
    return task


def replay_log(task_id: str, room: str, events: list[dict[str, Any]]) -> Task:
    """The fold of `events`, before the clock is applied (what the snapshot caches)."""
    task = Task(id=task_id, room=room, lane="", title="", definition_of_done="")
    fold(task, events, withdrawn_ids(events))
    return task


def withdrawn_ids(events: list[dict[str, Any]]) -> set[str]:
    """The lease ids of the claims that lost the race for the remote (`task claim --sync`) and withdrew
    themselves: those claims never held the task."""
    return {e["lease_id"] for e in events if e.get("ev") == "withdraw" and isinstance(e.get("lease_id"), str)}


def fold(task: Task, events: list[dict[str, Any]], withdrawn: set[str]) -> Task:
    """Apply `events` (in the one order, after those `task` holds already) to `task`, in place. A claim
    whose lease is in `withdrawn` is kept aside (`withdrawn_ids` of the whole log: a withdraw follows
    its claim, so a fold that goes on from where it stopped must replay from the start instead when
    the events it adds hold one; board/fold.py)."""
    leases = task.leases
    for event in events:
        if event.get("ev") == "claim" and isinstance(event.get("lease_id"), str) and event["lease_id"] in withdrawn:
            task.withdrawn.append(event)
            leases.setdefault(str(event["lease_id"]), Lease(
                lease_id=str(event["lease_id"]), fence=-1, holder=str(event.get("holder", "")),
                plate=str(event.get("plate", "")), claimed_at=str(event.get("at", "")), expires_at=""))
            task.events += 1
            continue
        problem = schema.problem("task-event", event)  # the check doctor and the writer make (store/schema.py)
        if problem:
            _conflict(task, "invalid_event", f"{event.get('ev')!r} event cannot be applied: {problem}", event)
            continue
        _lapse(task, event.get("at", ""))
        _apply(task, event, leases)
        task.updated_at = event.get("at", task.updated_at)
        task.events += 1
    return task


def _lapse(task: Task, moment: str) -> None:
    """A lease whose end has passed reopens the task (the holder may still be working: fencing guards it)."""
    lease = task.lease
    if task.status != "doing" or lease is None:
        return
    end = lease.ahead[1] if lease.ahead is not None and not in_force(lease.ahead[0], moment) else lease.expires_at
    if end <= moment:
        task.status = "todo"
        task.lapsed_lease, task.lease, task.expiry_recorded = task.lease, None, False


def _conflict(task: Task, kind: str, message: str, event: dict[str, Any]) -> None:
    task.conflicts.append(BoardConflict(kind=kind, message=message, event=event))


def _apply(task: Task, event: dict[str, Any], leases: dict[str, Lease]) -> None:
    """One event on the task: the handler `_HANDLERS` names for its kind; an unknown kind is a conflict."""
    kind = event.get("ev")
    handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
    if handler is None:
        _conflict(task, "invalid_event", f"unknown event {kind!r}", event)
    else:
        handler(task, event, leases)


def _apply_create(task: Task, event: dict[str, Any], leases: dict[str, Lease]) -> None:
    if task.created_at:
        _conflict(task, "invalid_event", "a second create event", event)
        return
    task.lane = event.get("lane", "")
    task.title = event.get("title", "")
    task.detail = event.get("detail", "")
    task.definition_of_done = event.get("definition_of_done", "")
    task.order = event.get("order", 0)
    task.depends_on = sorted(set(event.get("depends_on") or ()))
    task.created_at, task.created_by = event.get("at", ""), event.get("by", "")


def _apply_status(task: Task, event: dict[str, Any], leases: dict[str, Lease]) -> None:
    """A status set under a lease ends the lease (`_apply_lease_event`); without one, the task must be free."""
    if event.get("lease_id"):
        _apply_lease_event(task, event, leases)
        return
    target = event.get("status", "")
    if task.status == "doing":
        _conflict(task, "stale_write", f"set-status {target} without the lease while {_holder(task.lease)} held it", event)
    elif not allowed(task.status, target):
        _conflict(task, "invalid_event", f"set-status {task.status} → {target} is not a possible transition", event)
    else:
        task.status = target
        task.record = event.get("record") or task.record
        task.lapsed_lease = None


def _apply_update(task: Task, event: dict[str, Any], leases: dict[str, Lease]) -> None:
    for key, value in (event.get("changes") or {}).items():
        if key in ("title", "detail", "definition_of_done") and isinstance(value, str):
            setattr(task, key, value)
        elif key == "order" and isinstance(value, (int, float)) and not isinstance(value, bool):
            task.order = value
        elif key == "depends_on":  # {add, remove}: what the writer changed, so two clones' changes both hold
            task.depends_on = sorted((set(task.depends_on) | set(value.get("add") or ())) - set(value.get("remove") or ()))


def _apply_assign(task: Task, event: dict[str, Any], leases: dict[str, Lease]) -> None:
    pending = event.get("pending")
    task.pending = dict(pending) if pending else None
    task.lane = event.get("to", task.lane)


def _apply_answer(task: Task, event: dict[str, Any], leases: dict[str, Lease]) -> None:
    """`accept` or `reject` of the pending proposal (a reject puts the task back in its lane)."""
    kind = event["ev"]
    if not task.pending:
        _conflict(task, "invalid_event", f"{kind} without a pending proposal", event)
        return
    if kind == "reject":
        task.lane = task.pending.get("from", task.lane)
    task.pending = None


def _apply_archive(task: Task, event: dict[str, Any], leases: dict[str, Lease]) -> None:
    task.archived = True


def _apply_resolve(task: Task, event: dict[str, Any], leases: dict[str, Lease]) -> None:
    task.conflicts = []


def _apply_withdraw(task: Task, event: dict[str, Any], leases: dict[str, Lease]) -> None:
    """Nothing: its claim was left out before the fold (`replay_log`)."""


def _holder(lease: Lease | None) -> str:
    return f"{lease.plate or lease.holder} (lease {lease.lease_id}, fence {lease.fence})" if lease else "nobody"


def bounded_expiry(expires: str, before: str) -> str:
    """A lease's end as it counts: at most MAX_LEASE_S after `before`, whatever its writer's clock said."""
    limit = lease_limit(before) if before else None
    return limit if limit is not None and expires > limit else expires


def _bounded_lease(lease: Lease, event: dict[str, Any], before: str) -> Lease:
    """`lease` with its end as it counts: at most MAX_LEASE_S after its own claim or renewal (`at`, or the
    record before it, `before`, when that is later: a clock behind gets no shorter lease). For a reader
    whose clock the event's stamp is more than the allowed skew ahead of (`seen_at`), at most MAX_LEASE_S
    after the record before it: a clock a year ahead holds a task for a week of the others' time, not a
    year — yet a task claimed a month after it was written holds for its lease, not zero."""
    at = event.get("at", "")
    at = at if isinstance(at, str) else ""
    end = bounded_expiry(lease.expires_at, max(before, at))
    ahead_end = bounded_expiry(end, before)
    ahead = (at, ahead_end) if at and ahead_end != end else None
    return Lease(lease.lease_id, lease.fence, lease.holder, lease.plate, lease.claimed_at, end, ahead)


def _apply_claim(task: Task, event: dict[str, Any], leases: dict[str, Lease]) -> None:
    lease = Lease(
        lease_id=event.get("lease_id", ""),
        fence=int(event.get("fence", 0)),
        holder=event.get("holder", ""),
        plate=event.get("plate", ""),
        claimed_at=event.get("at", ""),
        expires_at=event.get("expires_at", ""),
    )
    lease = _bounded_lease(lease, event, task.updated_at)
    leases[lease.lease_id] = lease
    if lease.fence <= task.fence:
        rivals = [other for other in leases.values() if other.fence == lease.fence and other.lease_id != lease.lease_id]
        if rivals:
            _conflict(
                task,
                "double_claim",
                f"double claim at fence {lease.fence}: {_holder(lease)} and {_holder(rivals[0])} both claimed it",
                event,
            )
        else:
            _conflict(task, "stale_write", f"claim by {_holder(lease)} is older than fence {task.fence}", event)
        return
    task.fence = lease.fence
    if not task.claimable:
        _conflict(task, "invalid_event", f"claim by {_holder(lease)} while the task was {task.status}", event)
        return
    task.status, task.lease, task.lapsed_lease = "doing", lease, None


def _apply_lease_event(task: Task, event: dict[str, Any], leases: dict[str, Lease]) -> None:
    kind = event["ev"]
    lease_id = event.get("lease_id", "")
    if kind == "expire" and task.lapsed_lease is not None and task.lapsed_lease.lease_id == lease_id:
        task.expiry_recorded = True  # replay already reopened the task; tick only records it
        return
    if task.lease is None or task.lease.lease_id != lease_id:
        owner = leases.get(lease_id)
        who = _holder(owner) if owner else f"unknown lease {lease_id}"
        _conflict(task, "stale_write", f"{kind} by {who}, which is not the current lease ({_holder(task.lease)})", event)
        return
    if kind == "renew":
        held = task.lease
        renewed = Lease(held.lease_id, held.fence, held.holder, held.plate, held.claimed_at,
                        event.get("expires_at", held.expires_at))
        task.lease = leases[lease_id] = _bounded_lease(renewed, event, task.updated_at)
    elif kind == "done":
        task.status, task.record, task.lease = "done", event.get("record"), None
    elif kind == "status":
        if not allowed("doing", event["status"]):
            _conflict(task, "invalid_event", f"set-status doing → {event['status']} is not a possible transition", event)
            return
        task.status, task.lease = event["status"], None
        task.record = event.get("record") or task.record
    else:  # release, expire
        task.status, task.lease = "todo", None


_HANDLERS: dict[str, Callable[[Task, dict[str, Any], dict[str, Lease]], None]] = {
    "create": _apply_create, "claim": _apply_claim, "status": _apply_status, "update": _apply_update,
    "assign": _apply_assign, "accept": _apply_answer, "reject": _apply_answer, "archive": _apply_archive,
    "resolve": _apply_resolve, "withdraw": _apply_withdraw,
    **{kind: _apply_lease_event for kind in LEASE_EVENTS},
}
