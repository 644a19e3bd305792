"""Claim before you work: claim, next, renew, release, done and set-status, all fenced.

Every write is one read-check-append under the task's own lock, so its cost does not depend on the
size of the board. A claim issues a lease with a fencing number one higher than any before it on
that task; a later write must present the current lease. A lease that was overtaken (its number is
lower than the task's newest) is refused whatever the writer's clock says.

`--sync` (a `syncing` given): the write is made here marked `"sync": true` and counts only once the git
remote holds it. Every sync of the clone runs the board's arbiter (board/arbiter.py) on it before
pushing it, so the first claim to reach the remote wins whoever pushes it. The command waits for a
sync that included its write: exit 0 when the write stands; 3 (`already_claimed`, `lease_mismatch`)
when it was answered; 1 with nothing made when the remote could not be reached (the write is withdrawn
here, unless another sync of this clone had already taken it there). A claim is made on this clone's
view first; a refusal, or "nothing to claim", is checked with a sync before it is said. Which task
`next_task` tries stays the board's choice; the remote only decides whether the claim holds.
"""

from __future__ import annotations

import os

from rooms_cli.board import fold, store
from rooms_cli.board.deps import blockers_of, waiting_text, with_blockers
from rooms_cli.board.errors import (
    AlreadyClaimed,
    Blocked,
    InvalidTransition,
    LeaseExpired,
    LeaseFenced,
    LeaseMismatch,
)
from rooms_cli.board.model import DEFAULT_LEASE, Lease, Task
from rooms_cli.board.records import make_record
from rooms_cli.board.replay import seen_at
from rooms_cli.board.tasks import claimable_in_lane, require_room
from rooms_cli.board.transitions import SETTABLE, check_transition, held_by, refuse_if_held
from rooms_cli.core.errors import InvalidInput, NotFound, RoomsError
from rooms_cli.core.records import dataclass  # dataclasses without inspect (records.py)
from rooms_cli.store import jsonl
from rooms_cli.store.clock import MAX_LEASE_S, add_seconds, iso, now, parse_duration
from rooms_cli.store.ids import host_name, new_id, validate_name
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.store.sync.engine import Syncing

    # what a lease-holder's command appends, given the task, the lease it holds and the moment
    Write = Callable[[Task, Lease, str], list[dict[str, Any]]]


@dataclass
class Claim:
    """A claim that holds: the task as claimed and its lease."""

    task: Task
    lease: Lease
    already_yours: bool = False  # the caller presented the task's current lease: nothing was written
    stamp: str = ""  # the `hlc` of the claim event written (what a sync that checks it finds it by)

    def to_json(self) -> dict[str, Any]:
        return {"expires_at": self.lease.expires_at, "lease": self.lease.to_json(), "lease_id": self.lease.lease_id,
                "task": self.task.to_json(), "already_yours": self.already_yours}


def plate_for(agent: str) -> str:
    """`<agent>/<instance>`: ROOMS_INSTANCE, else host and parent pid (the session that ran rooms).

    A label for people reading the board, not an identity: a claim belongs to the lease it returned
    (two processes of one parent share a plate and still race for a task like strangers)."""
    instance = os.environ.get("ROOMS_INSTANCE") or f"{host_name().split('.')[0]}:{os.getppid()}"
    return f"{agent}/{instance}"


def lease_seconds(lease: str | float | None) -> float:
    seconds = parse_duration(DEFAULT_LEASE if lease is None else lease, maximum=MAX_LEASE_S)
    if seconds <= 0:
        raise InvalidInput(f"--lease must be longer than zero, not {lease!r}")
    return seconds


def _replay_locked(project: Project, room: str, task_id: str, moment: str | None = None) -> tuple[Task, str]:
    """The task as it reads now (its lock held), and that moment. The replay goes on from where this
    process last stopped in the log (board/fold.py): a session that claims, renews or releases one
    task again and again reads only what was appended since."""
    moment = moment or iso(now())
    path = store.task_path(project, room, task_id)
    task, bad = fold.replay_file(task_id, room, str(path))
    for lineno, reason in bad:
        jsonl.warn(path, lineno, reason)
    return seen_at(task, moment), moment


def _claim_locked(project: Project, room: str, task_id: str, agent: str, seconds: float, plate: str,
                  lease_id: str | None = None, pending_remote: bool = False) -> Claim:
    task, moment = _replay_locked(project, room, task_id)
    if task.archived:
        raise InvalidTransition(f"task {task_id} is archived; it cannot be claimed")
    if task.pending:
        raise InvalidTransition(
            f"task {task_id} is a pending proposal to lane {task.pending.get('to')}: "
            f"{task.pending.get('owner')} must `rooms task accept` it before it can be claimed"
        )
    if task.status == "doing" and task.lease is not None and lease_id and task.lease.lease_id == lease_id.strip():
        return Claim(task=task, lease=task.lease, already_yours=True)  # the holder asking again: idempotent
    refuse_if_held(task, "claim")
    check_transition(task_id, task.status, "doing")
    refuse_if_waiting(project, room, task)
    lease = Lease(
        lease_id=new_id("l"), fence=task.fence + 1, holder=agent, plate=plate,
        claimed_at=moment, expires_at=iso(add_seconds(now(), seconds)),
    )
    event = {"ev": "claim", "at": moment, "by": agent, "lease_id": lease.lease_id, "fence": lease.fence,
             "holder": agent, "plate": plate, "expires_at": lease.expires_at}
    [written] = store.append_events(project, room, task_id, [_marked(event, pending_remote)], held=True)
    task.status, task.lease, task.fence, task.lapsed_lease = "doing", lease, lease.fence, None
    task.updated_at = moment
    return Claim(task=task, lease=lease, stamp=str(written.get("hlc", "")))


def _marked(event: dict[str, Any], pending_remote: bool) -> dict[str, Any]:
    """`event`, marked `"sync": true` when it counts only once the git remote holds it (the arbiter of
    every sync checks it before pushing it)."""
    return {**event, "sync": True} if pending_remote else event


def claim_task(project: Project, room: str, task_id: str, *, agent: str, lease: str | float | None = None,
               plate: str | None = None, lease_id: str | None = None, syncing: Syncing | None = None) -> Claim:
    """Atomically move todo → doing under a new lease; the loser of a race gets AlreadyClaimed.

    A claim belongs to the lease it returned, not to a name or a process: a held task is refused
    (AlreadyClaimed, naming holder, lease id and expiry) to everyone, the same agent included, except
    a caller presenting the current lease (`lease_id`), who gets it back unchanged, marked
    `already_yours` (so retrying a claim is idempotent). `syncing`: the claim holds across clones
    (the module docstring); AlreadyClaimed when another clone's claim reached the remote first."""
    validate_name(agent, "agent")
    seconds = lease_seconds(lease)
    plate = plate or plate_for(agent)
    if syncing is None:
        return _claim_here(project, room, task_id, agent, seconds, plate, lease_id, False)
    try:
        claim = _claim_here(project, room, task_id, agent, seconds, plate, lease_id, True)
    except (AlreadyClaimed, InvalidTransition, Blocked, NotFound):
        syncing.sync(project)  # this clone's view may be old; an unreachable remote: nothing claimed
        claim = _claim_here(project, room, task_id, agent, seconds, plate, lease_id, True)
    if claim.already_yours:
        return claim
    lost = confirm_claim(project, room, claim, syncing)
    if lost is not None:
        raise AlreadyClaimed(
            f"cannot claim task {claim.task.id}: another clone's claim reached {syncing.remote} first ({lost}); "
            f"this one is withdrawn (lease {claim.lease.lease_id})",
            data={"task_id": claim.task.id, "withdrawn": claim.lease.lease_id, "remote": syncing.remote},
        )
    return claim


def _claim_here(project: Project, room: str, task_id: str, agent: str, seconds: float, plate: str,
                lease_id: str | None, pending_remote: bool) -> Claim:
    full = store.resolve_task_id(project, room, task_id)
    with store.task_lock(project, room, full):
        return _claim_locked(project, room, full, agent, seconds, plate, lease_id, pending_remote)


def next_task(project: Project, room: str, *, agent: str, lease: str | float | None = None,
              plate: str | None = None, syncing: Syncing | None = None) -> Claim | None:
    """Claim the first claimable task (by order) in `agent`'s lane, moving on past lost races; None if none.

    `syncing`: each claim holds across clones (the module docstring); one another clone beat to the
    remote is withdrawn and the next task is tried (that sync brought the remote's claims). None is
    said with the remote's view: after a sync."""
    validate_name(agent, "agent")
    require_room(project, room)
    seconds = lease_seconds(lease)
    plate = plate or plate_for(agent)
    if syncing is None:
        return _next_here(project, room, agent, seconds, plate, False)
    fresh = False  # whether this clone's view comes from a sync made in this call
    lost_before: set[str] = set()
    while True:
        claim = _next_here(project, room, agent, seconds, plate, True)
        if claim is None:
            if fresh:
                return None
            syncing.sync(project)
            fresh = True
            continue
        fresh = True
        if confirm_claim(project, room, claim, syncing) is None:
            return claim
        if claim.task.id in lost_before:  # offered again after losing it: look at the remote once more first
            syncing.sync(project)
        lost_before.add(claim.task.id)


def _next_here(project: Project, room: str, agent: str, seconds: float, plate: str, pending_remote: bool) -> Claim | None:
    busy = []
    for task_id in (t.id for t in claimable_in_lane(project, room, agent)):  # first pass: skip tasks being locked now
        with store.task_lock_nowait(project, room, task_id) as held:
            if not held:
                busy.append(task_id)
                continue
            claim = _try_claim(project, room, task_id, agent, seconds, plate, pending_remote)
        if claim:
            return claim
    for task_id in busy:  # then wait for those: their claim may have failed or been a renew
        with store.task_lock(project, room, task_id):
            claim = _try_claim(project, room, task_id, agent, seconds, plate, pending_remote)
        if claim:
            return claim
    return None


def confirm_claim(project: Project, room: str, claim: Claim, syncing: Syncing) -> str | None:
    """Wait for a sync that includes `claim` (made with `pending_remote`): None when the remote holds it,
    else who got there first (the claim is withdrawn). An unreachable remote withdraws it too and
    raises: nothing claimed."""
    from rooms_cli.board.arbiter import answer

    path = store.task_path(project, room, claim.task.id)
    event = {"ev": "claim", "by": claim.lease.holder, "lease_id": claim.lease.lease_id, "fence": claim.lease.fence,
             "hlc": claim.stamp}
    try:
        syncing.sync(project)
    except RoomsError:
        _undo_unless_there(project, syncing, path, [claim.stamp],
                           lambda: _append(project, room, claim.task.id, [answer(event, _UNREACHABLE)]))
    return _answered(project, room, claim.task.id, "withdraw", "lease_id", {claim.lease.lease_id})


_UNREACHABLE = "the remote could not be reached: not made"


def _undo_unless_there(project: Project, syncing: Syncing, path: str, stamps: list[str],
                       undo: Callable[[], None]) -> None:
    """After a sync that failed: unless another sync of this clone already took the writes (`stamps`)
    to the remote (then they stand, or were answered there), answer them here (nothing made) and raise
    the failure again; holding the sync lock, so that no sync takes them there meanwhile."""
    import sys

    from rooms_cli.store.sync import engine

    failure = sys.exc_info()[1]
    with engine.sync_lock(project, syncing.remote):
        if all(engine.synced_through(project, syncing.remote, path, f'"hlc": "{stamp}"'.encode()) for stamp in stamps):
            return
        undo()
    assert failure is not None
    raise failure


def _append(project: Project, room: str, task_id: str, events: list[dict[str, Any]]) -> None:
    with store.task_lock(project, room, task_id):
        store.append_events(project, room, task_id, events, held=True)


def _answered(project: Project, room: str, task_id: str, kind: str, field: str, values: set[Any]) -> str | None:
    """Why an event of `kind` (withdraw, void) whose `field` is one of `values` answered a write, or None."""
    for event in store.read_events(project, room, task_id):
        if event.get("ev") == kind and event.get(field) in values:
            return str(event.get("reason") or kind)
    return None


def _try_claim(project: Project, room: str, task_id: str, agent: str, seconds: float, plate: str,
               pending_remote: bool) -> Claim | None:
    try:
        return _claim_locked(project, room, task_id, agent, seconds, plate, pending_remote=pending_remote)
    except (AlreadyClaimed, InvalidTransition, Blocked):
        return None


def refuse_if_waiting(project: Project, room: str, task: Task) -> None:
    """Blocked (exit 3), naming what the task waits on, while a dependency of it is not done (each
    read from its own log: the claim's cost follows the task's dependencies, not the board)."""
    blockers = blockers_of(project, room, task)
    if blockers:
        raise Blocked(
            f"cannot claim task {task.id}: it {waiting_text(blockers)}",
            data={"task_id": task.id, "blocked_by": list(blockers), "dependencies": blockers},
        )


def check_lease(task: Task, lease_id: str | None, holder: str | None = None) -> Lease:
    """The task's current lease if `lease_id` is it; else the error saying why not (fencing first).

    Without a lease id, the current lease of `holder` stands in for it: `rooms task next` then
    `rooms task done ID` works without copying the id. Two instances of one agent should still pass
    their lease id: only the id tells a claim that was overtaken from the one that overtook it.
    """
    if not lease_id:
        current = task.lease
        if holder and current is not None and current.holder == holder:
            return current
        lapsed = task.lapsed_lease
        if holder and current is None and lapsed is not None and lapsed.holder == holder:
            # the holder's own lease ran out: the same conflict as presenting that lease (exit 3)
            return check_lease(task, lapsed.lease_id)
        held = f"it is held by {held_by(current)}" if current else f"it is {task.status}"
        mine = f"{holder} holds no lease on task {task.id} ({held})" if holder else f"task {task.id}: {held}"
        raise InvalidInput(f"no lease id and {mine}: pass --lease-id (printed by `rooms task claim`) or set ROOMS_LEASE")
    lease_id = lease_id.strip()
    current = task.lease
    if current is not None and current.lease_id == lease_id:
        return current
    presented = task.leases.get(lease_id)
    now_held = f"it is held by {held_by(current)}" if current else f"it is {task.status}"
    data = {"task_id": task.id, "lease_id": lease_id, "status": task.status, "fence": task.fence,
            "holder": current.holder if current else None, "lease": current.to_json() if current else None}
    if presented is None:
        raise LeaseMismatch(f"{lease_id} is not a lease of task {task.id}; {now_held}", data=data)
    if presented.fence < task.fence:
        raise LeaseFenced(
            f"lease {lease_id} of {presented.plate or presented.holder} (fence {presented.fence}) was overtaken by "
            f"a newer claim (fence {task.fence}) on task {task.id}; {now_held}. Stop working on it",
            data=data,
        )
    if task.lapsed_lease is not None and task.lapsed_lease.lease_id == lease_id:
        raise LeaseExpired(
            f"lease {lease_id} of {presented.plate or presented.holder} on task {task.id} expired at "
            f"{presented.expires_at}; the task is back in its lane (claim it again)",
            data=data,
        )
    raise LeaseMismatch(f"lease {lease_id} no longer holds task {task.id}; {now_held}", data=data)


def write_under_lease(project: Project, room: str, task_id: str, lease_id: str | None, write: Write,
                      holder: str | None = None, syncing: Syncing | None = None) -> Task:
    """Check the lease and append what `write` makes of it (a renew, release, done), under the task's
    lock; the task after it. `syncing`: answered once the remote took it (the module docstring) —
    LeaseMismatch when the remote's copy shows another lease (the write is voided); an unreachable
    remote voids it and raises (nothing made)."""
    task, written = _write_here(project, room, task_id, lease_id, write, holder, syncing is not None)
    if syncing is None:
        return task
    from rooms_cli.board.arbiter import answer

    try:
        syncing.sync(project)
    except RoomsError:
        _undo_unless_there(project, syncing, store.task_path(project, room, task.id), [str(e["hlc"]) for e in written],
                           lambda: _append(project, room, task.id, [answer(e, _UNREACHABLE) for e in written]))
    refused = _answered(project, room, task.id, "void", "of", {e.get("hlc") for e in written})
    if refused is not None:
        kinds = ", ".join(str(e.get("ev")) for e in written)
        raise LeaseMismatch(
            f"lease {written[0].get('lease_id')} no longer holds task {task.id} on {syncing.remote} ({refused}); the "
            f"{kinds} was not made. Stop working on it",
            data={"task_id": task.id, "lease_id": written[0].get("lease_id"), "remote": syncing.remote},
        )
    return with_blockers(project, room, _replay_locked(project, room, task.id)[0])


def _write_here(project: Project, room: str, task_id: str, lease_id: str | None, write: Write, holder: str | None,
                pending_remote: bool) -> tuple[Task, list[dict[str, Any]]]:
    full = store.resolve_task_id(project, room, task_id)
    with store.task_lock(project, room, full):
        task, moment = _replay_locked(project, room, full)
        lease = check_lease(task, lease_id, holder)
        events = [_marked(event, pending_remote) for event in write(task, lease, moment)]
        written = store.append_events(project, room, full, events, held=True)
        return with_blockers(project, room, _replay_locked(project, room, full, moment)[0]), written


def renewing(lease: str | float | None) -> Write:
    """What a renew appends: the lease, extended to now + `lease` (default 10m)."""
    seconds = lease_seconds(lease)

    def write(task: Task, held: Lease, moment: str) -> list[dict[str, Any]]:
        return [{"ev": "renew", "at": moment, "by": held.holder, "lease_id": held.lease_id, "fence": held.fence,
                 "expires_at": iso(add_seconds(now(), seconds))}]

    return write


def releasing() -> Write:
    """What a release appends: the lease ends, the task goes back to its lane."""

    def write(task: Task, held: Lease, moment: str) -> list[dict[str, Any]]:
        return [{"ev": "release", "at": moment, "by": held.holder, "lease_id": held.lease_id, "fence": held.fence}]

    return write


def finishing(project: Project, room: str, *, summary: str, artifacts: list[str] | tuple[str, ...] = (),
              next_step: str | None = None, result_ref: str | None = None) -> Write:
    """What a done appends: doing → done with the compact record (artifacts and result_ref must exist)."""

    def write(task: Task, held: Lease, moment: str) -> list[dict[str, Any]]:
        record = make_record(project, room, task_id=task.id, plate=held.plate, status="done", summary=summary,
                             artifacts=artifacts, next_step=next_step, result_ref=result_ref)
        return [{"ev": "done", "at": moment, "by": held.holder, "lease_id": held.lease_id, "fence": held.fence,
                 "record": record}]

    return write


def renew_lease(project: Project, room: str, task_id: str, lease_id: str | None, *,
                lease: str | float | None = None, holder: str | None = None) -> Task:
    """Extend the current lease to now + `lease` (default 10m)."""
    return write_under_lease(project, room, task_id, lease_id, renewing(lease), holder)


def release_task(project: Project, room: str, task_id: str, lease_id: str | None, *, holder: str | None = None) -> Task:
    """Give the task back to its lane (todo); the lease ends."""
    return write_under_lease(project, room, task_id, lease_id, releasing(), holder)


def finish_task(project: Project, room: str, task_id: str, lease_id: str | None, *, summary: str,
                artifacts: list[str] | tuple[str, ...] = (), next_step: str | None = None,
                result_ref: str | None = None, holder: str | None = None) -> Task:
    """doing → done with the compact record; artifacts and result_ref must point at what exists."""
    write = finishing(project, room, summary=summary, artifacts=artifacts, next_step=next_step, result_ref=result_ref)
    return write_under_lease(project, room, task_id, lease_id, write, holder)


def set_status(project: Project, room: str, task_id: str, status: str, *, by: str, lease_id: str | None = None,
               summary: str | None = None, result_ref: str | None = None) -> Task:
    """Move a task to todo, blocked, failed or cancelled. A claimed task needs its lease id."""
    if status not in SETTABLE:
        raise InvalidInput(
            f"set-status takes {', '.join(SETTABLE)}, not {status!r} (use `rooms task claim` for doing, `rooms task done` for done)"
        )

    def record_for(task: Task, plate: str) -> dict[str, Any] | None:
        if not summary and not result_ref:
            return None
        return make_record(project, room, task_id=task.id, plate=plate, status=status, summary=summary,
                           result_ref=result_ref, summary_required=False)

    full = store.resolve_task_id(project, room, task_id)
    with store.task_lock(project, room, full):
        task, moment = _replay_locked(project, room, full)
        ev: dict[str, Any] = {"ev": "status", "at": moment, "by": by, "status": status}
        if lease_id:
            held = check_lease(task, lease_id)
            ev.update(lease_id=held.lease_id, fence=held.fence)
            plate = held.plate
        else:
            refuse_if_held(task, f"set {status} on")
            plate = plate_for(by)
        check_transition(full, task.status, status)
        record = record_for(task, plate)
        if record:
            ev["record"] = record
        store.append_events(project, room, full, [ev], held=True)
        return with_blockers(project, room, _replay_locked(project, room, full, moment)[0])
