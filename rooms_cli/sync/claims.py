"""Claims that hold across clones: `rooms task claim|next|renew|release|done --sync` (docs/git.md).

A `--sync` write is appended here marked `"sync": true`, and counts only once the git remote holds it.
Every sync of this clone — the command's own, a plain `rooms sync`, `rooms tick`, another worker's —
runs the gate (sync/gate.py) on the logs it is about to push: each marked event is folded onto the
remote's copy of the task as fetched, and one that would not apply cleanly there (another clone's claim
got there first, the lease was overtaken) is answered before the push with a `withdraw` (a claim) or a
`void` (a renew, release, done or status), pushed with it. The compare-and-swap push makes the fetched
copy the one the remote had: so **the first claim to reach the remote wins**, whoever pushes it, and no
other can follow it there.

A claim is made here first, on this clone's view (a refusal, or "nothing to claim", is checked with a
sync before it is said). The command answers once a sync that included its write has finished: exit 0
when the write stands, exit 3 (`already_claimed`, or `lease_mismatch` for a lease write) when it was
answered, exit 1 with nothing made when the remote could not be reached (the write is withdrawn here,
unless another sync of this clone had already taken it there).

Which task `task next` tries is the board's choice (board/claims.next_task): this part only decides
whether the remote takes the claim, and moves on to the next task when it does not.
"""

from __future__ import annotations

from rooms_cli.board import claims, store
from rooms_cli.board.claims import Claim
from rooms_cli.board.errors import AlreadyClaimed, InvalidTransition, LeaseMismatch
from rooms_cli.board.model import Task
from rooms_cli.errors import NotFound, RoomsError
from rooms_cli.store import gitsync
from rooms_cli.store.paths import Project
from rooms_cli.sync.api import sync
from rooms_cli.sync.gate import answer

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from rooms_cli.board.claims import Write

_UNREACHABLE = "the remote could not be reached: not made"


# --- commands ----------------------------------------------------------------------------------------


def claim_task(project: Project, room: str, task_id: str, *, agent: str, lease: str | float | None = None,
               plate: str | None = None, lease_id: str | None = None, remote: str | None = None) -> Claim:
    """Claim the task so that it holds across clones: claim here, then answer once the remote took the
    claim; AlreadyClaimed when another clone's claim reached it first. A refusal here (held, not
    claimable, unknown) is checked against the remote first: this clone's view may be old."""
    try:
        claim = claims.claim_task(project, room, task_id, agent=agent, lease=lease, plate=plate, lease_id=lease_id,
                                  pending_remote=True)
    except (AlreadyClaimed, InvalidTransition, NotFound):
        sync(project, remote)  # an unreachable remote: nothing claimed
        claim = claims.claim_task(project, room, task_id, agent=agent, lease=lease, plate=plate, lease_id=lease_id,
                                  pending_remote=True)
    if claim.already_yours:
        return claim
    lost = confirm_claim(project, room, claim, remote)
    if lost is not None:
        raise AlreadyClaimed(
            f"cannot claim task {claim.task.id}: another clone's claim reached {remote or 'origin'} first ({lost}); "
            f"this one is withdrawn (lease {claim.lease.lease_id})",
            data={"task_id": claim.task.id, "withdrawn": claim.lease.lease_id, "remote": remote or "origin"},
        )
    return claim


def next_task(project: Project, room: str, *, agent: str, lease: str | float | None = None,
              plate: str | None = None, remote: str | None = None) -> Claim | None:
    """Claim the next task the board offers (board/claims.next_task), so that it holds across clones;
    a claim another clone beat to the remote is withdrawn and the next task is tried (that sync brought
    the remote's claims). None: nothing left, as seen right after a sync."""
    plate = plate or claims.plate_for(agent)
    fresh = False  # whether this clone's view comes from a sync made in this call
    lost_before: set[str] = set()
    while True:
        claim = claims.next_task(project, room, agent=agent, lease=lease, plate=plate, pending_remote=True)
        if claim is None:
            if fresh:
                return None
            sync(project, remote)  # "nothing to claim" is said with the remote's view
            fresh = True
            continue
        fresh = True
        if confirm_claim(project, room, claim, remote) is None:
            return claim
        if claim.task.id in lost_before:  # offered again after losing it: look at the remote once more first
            sync(project, remote)
        lost_before.add(claim.task.id)


def confirm_claim(project: Project, room: str, claim: Claim, remote: str | None) -> str | None:
    """Wait for a sync that includes `claim`: None when the remote holds it, else who got there first
    (the claim is withdrawn). An unreachable remote withdraws it too and raises: nothing claimed."""
    path = store.task_path(project, room, claim.task.id)
    try:
        sync(project, remote)
    except RoomsError:
        _undo_unless_there(project, remote, path, [_marker(claim.stamp)],
                           lambda: _append(project, room, claim.task.id, [answer(claim_event(claim), _UNREACHABLE)]))
    return _withdrawn(project, room, claim.task.id, claim.lease.lease_id)


def claim_event(claim: Claim) -> dict[str, Any]:
    """The claim event `claim` wrote (what its withdraw names)."""
    return {"ev": "claim", "by": claim.lease.holder, "lease_id": claim.lease.lease_id, "fence": claim.lease.fence,
            "hlc": claim.stamp}


def write_under_lease(project: Project, room: str, task_id: str, lease_id: str | None, write: Write, *,
                      holder: str | None = None, remote: str | None = None) -> Task:
    """A renew, release, done or status under a lease, answered once the remote took it: LeaseMismatch
    when the remote's copy shows another lease (the write is voided); an unreachable remote voids it and
    raises (nothing made)."""
    task, written = claims.write_under_lease(project, room, task_id, lease_id, write, holder, pending_remote=True)
    path = store.task_path(project, room, task.id)
    try:
        sync(project, remote)
    except RoomsError:
        _undo_unless_there(project, remote, path, [_marker(str(e.get("hlc", ""))) for e in written],
                           lambda: _append(project, room, task.id, [answer(e, _UNREACHABLE) for e in written]))
    refused = _voided(project, room, task.id, written)
    if refused is not None:
        kinds = ", ".join(str(e.get("ev")) for e in written)
        raise LeaseMismatch(
            f"lease {written[0].get('lease_id')} no longer holds task {task.id} on {remote or 'origin'} ({refused}); the "
            f"{kinds} was not made. Stop working on it",
            data={"task_id": task.id, "lease_id": written[0].get("lease_id"), "remote": remote or "origin"},
        )
    from rooms_cli.board.tasks import load_task

    return load_task(project, room, task.id)


def _undo_unless_there(project: Project, remote: str | None, path: Path, markers: list[bytes],
                       undo: Callable[[], None]) -> None:
    """After a sync that failed: unless another sync of this clone already took the write to the remote
    (then it stands, or was answered there), answer it here (nothing made) and raise again. Holding the
    sync lock, so that no sync takes it there meanwhile."""
    import sys

    failure = sys.exc_info()[1]
    with gitsync.sync_lock(project, remote):
        if all(gitsync.synced_through(project, remote, path, marker) for marker in markers):
            return
        undo()
    assert failure is not None
    raise failure


def _marker(stamp: str) -> bytes:
    return f'"hlc": "{stamp}"'.encode()


def _append(project: Project, room: str, task_id: str, events: list[dict[str, Any]]) -> None:
    with store.task_lock(project, room, task_id):
        store.append_events(project, room, task_id, events, held=True)


def _withdrawn(project: Project, room: str, task_id: str, lease_id: str) -> str | None:
    """Why the claim of `lease_id` was withdrawn, or None (it stands)."""
    for event in store.read_events(project, room, task_id):
        if event.get("ev") == "withdraw" and event.get("lease_id") == lease_id:
            return str(event.get("reason") or "withdrawn")
    return None


def _voided(project: Project, room: str, task_id: str, written: list[dict[str, Any]]) -> str | None:
    """Why one of the `written` events was voided, or None (they stand)."""
    stamps = {e.get("hlc") for e in written}
    for event in store.read_events(project, room, task_id):
        if event.get("ev") == "void" and event.get("of") in stamps:
            return str(event.get("reason") or "voided")
    return None
