"""Which status changes are possible, and the error that lists them when one is not."""

from __future__ import annotations

from rooms_cli.board.errors import InvalidTransition

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
