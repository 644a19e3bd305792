"""Which status changes are possible (the error lists them when one is not), and what a held task refuses."""

from __future__ import annotations

from rooms_cli.board.errors import AlreadyClaimed, InvalidTransition
from rooms_cli.board.model import Lease, Task

# todo → doing → done is the main path; blocked, failed, cancelled hold or end a task.
TRANSITIONS: dict[str, tuple[str, ...]] = {
    "todo": ("doing", "blocked", "failed", "cancelled"),
    "doing": ("done", "todo", "blocked", "failed", "cancelled"),
    "blocked": ("todo", "failed", "cancelled"),
    "failed": ("todo", "cancelled"),
    "done": (),
    "cancelled": (),
}

# statuses `rooms task set-status` may set (doing and done have their own commands: claim, done)
SETTABLE = ("todo", "blocked", "failed", "cancelled")


def allowed(current: str, target: str) -> bool:
    return target in TRANSITIONS.get(current, ())


def possible_text(current: str) -> str:
    options = TRANSITIONS.get(current, ())
    return f"possible from {current}: {', '.join(options)}" if options else f"{current} is final: no transition is possible"


def check_transition(task_id: str, current: str, target: str) -> None:
    """Refuse `current → target` with InvalidTransition naming the possible transitions."""
    if not allowed(current, target):
        raise InvalidTransition(
            f"task {task_id} cannot go from {current} to {target} ({possible_text(current)})",
            data={"task_id": task_id, "status": current, "target": target, "possible": list(TRANSITIONS.get(current, ()))},
        )


def held_by(lease: Lease) -> str:
    return f"{lease.plate or lease.holder} (lease {lease.lease_id}, fence {lease.fence}) until {lease.expires_at}"


def refuse_if_held(task: Task, action: str) -> None:
    """AlreadyClaimed when a live lease holds the task (it must be released or lapse first)."""
    if task.status == "doing" and task.lease is not None:
        raise AlreadyClaimed(
            f"cannot {action} task {task.id}: it is held by {held_by(task.lease)}",
            data={"task_id": task.id, "holder": task.lease.holder, "lease": task.lease.to_json()},
        )
