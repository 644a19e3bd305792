"""`rooms wait`: block until every spawn of an agent — and every spawn of theirs — has finished.

It sleeps on the liveness lock of one running spawn at a time (the kernel wakes it when that worker
exits), then looks again, since a finishing spawn may have spawned more. No polling: a spawn's lock
is held from before its record exists until its worker exits (see spawn.py). The one exception is a
spawn recorded as running on another machine (a record that came with a `git pull`): its lock is
not here, so it is looked at again every few seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rooms_cli.messaging.spawn import Spawn, block_until_finished, list_spawns, reap_all, tree_of
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.core.errors import TimedOut
    from rooms_cli.messaging.inbox import InboxMessage

FOREIGN_POLL = 5.0


@dataclass
class WaitResult:
    """What `rooms wait` saw: spawns that finished, those still running at the timeout, time waited."""

    agent: str
    finished: list[Spawn] = field(default_factory=list)  # seen finishing, or whose outcome it prints (`name_outcomes`)
    pending: list[Spawn] = field(default_factory=list)  # still running at the timeout
    waited_s: float = 0.0

    @property
    def timed_out(self) -> bool:
        return bool(self.pending)

    def name_outcomes(self, project: Project, messages: list[InboxMessage]) -> None:
        """Add to `finished` every spawn whose outcome (its output or error, a message naming it in
        `meta.spawn`) is among `messages`, the unread messages this wait prints.

        So what `rooms wait` reports does not depend on timing: a spawn that finished a moment before the
        wait began is named as one it saw finish, since either way its outcome is news to the reader
        (docs/messaging.md's example raced its own spawn). Shown in the tree's order, each once."""
        told = {m.meta.get("spawn") for m in messages}
        named = {s.id for s in self.finished}
        if told - named:
            self.finished = [s for s in tree_of(project, self.agent) if s.id in named or s.id in told]

    def timeout_error(self, timeout: float | None) -> TimedOut:
        """The TimedOut error (exit 4) naming what still runs, this result attached."""
        from rooms_cli.core.errors import TimedOut
        from rooms_cli.store.clock import describe_duration

        names = ", ".join(s.alias for s in self.pending)
        return TimedOut(f"timed out after {describe_duration(timeout or 0)}: still running: {names}", data=self.to_json())

    def to_json(self) -> dict[str, Any]:
        def brief(s: Spawn) -> dict[str, Any]:
            return {"id": s.id, "alias": s.alias, "parent": s.parent, "status": s.status, "exit_code": s.exit_code}

        return {
            "agent": self.agent, "timed_out": self.timed_out, "waited_s": round(self.waited_s, 3),
            "spawns": [brief(s) for s in self.finished], "pending": [brief(s) for s in self.pending],
        }


def running_tree(project: Project, agent: str, seen: set[str] | None = None) -> list[Spawn]:
    """The active spawns under `agent`, after reaping the ones whose worker died.

    `seen` collects the ids of every spawn found active, the reaped ones included.
    """
    tree = tree_of(project, agent, list_spawns(project))
    if seen is not None:
        seen.update(s.id for s in tree if s.active)
    reap_all(project, tree)
    return [s for s in tree_of(project, agent) if s.active]


def wait_for_spawns(project: Project, agent: str, timeout: float | None = None) -> WaitResult:
    """Block until `agent`'s spawn tree has finished, or `timeout` seconds passed."""
    start = time.monotonic()
    waited_for: set[str] = set()
    while True:
        running = running_tree(project, agent, waited_for)
        elapsed = time.monotonic() - start
        if not running:
            finished = [s for s in tree_of(project, agent) if s.id in waited_for]
            return WaitResult(agent=agent, finished=finished, waited_s=elapsed)
        remaining = None if timeout is None else timeout - elapsed
        if remaining is not None and remaining <= 0:
            return WaitResult(agent=agent, finished=[], pending=running, waited_s=elapsed)
        local = [s for s in running if s.local]
        if local:
            block_until_finished(project, local[0].id, remaining)
        else:  # only spawns running on another machine: their lock is not here, so look again later
            time.sleep(FOREIGN_POLL if remaining is None else min(FOREIGN_POLL, remaining))
