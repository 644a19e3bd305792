"""The board's step of `rooms tick`: record every lapsed lease as an explicit expire event."""

from __future__ import annotations

from rooms_cli.board import store
from rooms_cli.board.replay import replay
from rooms_cli.board.tasks import load_board
from rooms_cli.store.clock import now_iso

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project


def expire_leases(project: Project, config: Config | None, dry_run: bool) -> list[dict[str, Any]]:
    """Append `expire` to each task whose lease lapsed unrecorded; return one action per lease."""
    actions = []
    for room in store.list_board_rooms(project):
        for task in load_board(project, room):
            if task.lapsed_lease is None or task.expiry_recorded:
                continue
            lease = task.lapsed_lease
            if not dry_run and not _record(project, room, task.id, lease.lease_id):
                continue
            actions.append({
                "action": "expire",
                "detail": f"{room}/{task.id} {task.title!r}: lease {lease.lease_id} of {lease.plate or lease.holder} "
                          f"lapsed at {lease.expires_at}; back to todo",
                "room": room, "task_id": task.id, "lease_id": lease.lease_id, "holder": lease.holder,
                "expired_at": lease.expires_at,
            })
    return actions


def _record(project: Project, room: str, task_id: str, lease_id: str) -> bool:
    # re-check under the lock: the holder may have renewed, or another tick recorded it
    with store.task_lock(project, room, task_id):
        moment = now_iso()
        task = replay(task_id, room, store.read_events(project, room, task_id), moment)
        lease = task.lapsed_lease
        if lease is None or lease.lease_id != lease_id or task.expiry_recorded:
            return False
        store.append_events(project, room, task_id, [{
            "ev": "expire", "at": moment, "by": "tick", "lease_id": lease.lease_id, "fence": lease.fence,
            "holder": lease.holder, "expired_at": lease.expires_at,
        }], held=True)
    return True
