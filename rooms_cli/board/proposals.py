"""Assigning tasks across lanes, and the consent rule for crossing owners.

An agent's owner is the `owner:` of its definition; a person (a name with no agent file) owns
themself; an agent without `owner:` is unowned and takes assignments from anyone. Assigning a task
to a lane whose owner is not the acting identity's owner is a proposal: the task lands `pending` in
the new lane, unclaimable, until that owner accepts it; rejecting puts it back where it was.
"""

from __future__ import annotations

import os

from rooms_cli.board import store
from rooms_cli.board.deps import with_blockers
from rooms_cli.board.errors import InvalidTransition, NotOwner
from rooms_cli.board.model import FINISHED, Task
from rooms_cli.board.replay import replay
from rooms_cli.board.tasks import new_event
from rooms_cli.board.transitions import refuse_if_held
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import validate_name
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from contextlib import AbstractContextManager


def owner_of(project: Project, name: str) -> str | None:
    """The owner of `name`: its agent file's `owner:` (None if unset), or itself for a person."""
    from rooms_cli.agents.definitions import agent_path, load_agent

    if os.path.exists(agent_path(project, name)):
        return load_agent(project, name).owner
    return name


def _locked_task(project: Project, room: str, task_id: str) -> tuple[str, AbstractContextManager[None]]:
    full = store.resolve_task_id(project, room, task_id)
    return full, store.task_lock(project, room, full)


def _current(project: Project, room: str, full: str) -> Task:
    return with_blockers(project, room, replay(full, room, store.read_events(project, room, full), now_iso()))


def assign_task(project: Project, room: str, task_id: str, *, to: str, by: str) -> Task:
    """Move a task to `to`'s lane, directly or as a pending proposal when owners differ."""
    validate_name(to, "agent")
    full, lock = _locked_task(project, room, task_id)
    with lock:
        task = _current(project, room, full)
        refuse_if_held(task, "assign")
        if task.status in FINISHED or task.archived:
            raise InvalidTransition(f"task {full} is {'archived' if task.archived else task.status}; it cannot be reassigned")
        if task.pending:
            raise InvalidTransition(
                f"task {full} already awaits {task.pending.get('owner')}'s answer to a move to lane {task.pending.get('to')}"
            )
        target_owner = owner_of(project, to)
        pending = None
        if target_owner is not None and target_owner != owner_of(project, by):
            pending = {"from": task.lane, "to": to, "owner": target_owner, "by": by, "at": now_iso()}
        store.append_events(project, room, full, [new_event("assign", by, to=to, pending=pending, **{"from": task.lane})],
                            held=True)
        return _current(project, room, full)


def answer_proposal(project: Project, room: str, task_id: str, *, by: str, accept: bool) -> Task:
    """Accept (the task becomes claimable in its new lane) or reject (it goes back) a pending proposal."""
    full, lock = _locked_task(project, room, task_id)
    with lock:
        task = _current(project, room, full)
        if not task.pending:
            raise InvalidTransition(f"task {full} has no pending proposal to {'accept' if accept else 'reject'}")
        owner = task.pending.get("owner")
        if by != owner and owner_of(project, by) != owner:
            raise NotOwner(f"only {owner} (the owner of lane {task.pending.get('to')}) can answer this proposal, not {by}")
        store.append_events(project, room, full, [new_event("accept" if accept else "reject", by)], held=True)
        return _current(project, room, full)
