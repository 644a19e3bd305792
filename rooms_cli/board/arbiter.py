"""The board's arbiter: what every sync runs before it pushes a task log (store/sync/engine.Hooks.gate).

A `--sync` write (claim, renew, release, done, status) is marked `"sync": true` and counts only once
the git remote holds it. Each marked event of the lines a sync is about to push is folded onto the
remote's copy of the task as fetched, with what was taken before it: one that would add a conflict
there (another clone's claim got there first, the lease was overtaken) is answered before the push — a
claim withdrawn, any other write voided — and the answer is pushed with it. The compare-and-swap push
makes the fetched copy the one the remote had, so the first claim to reach the remote wins, whoever
pushes it (the command's own sync, a plain `rooms sync`, tick, another worker's), and none can follow
it there. board/claims.py says how a command waits for that answer; docs/git.md the whole design."""

from __future__ import annotations

import re

from rooms_cli.board.model import Task
from rooms_cli.board.replay import replay_log
from rooms_cli.board.transitions import held_by
from rooms_cli.store import order
from rooms_cli.store.clock import iso, now

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# the events a `--sync` write marks, and the gate answers
ARBITRATED = ("claim", "renew", "release", "done", "status")
_TASK_LOG = re.compile(r"rooms/([^/]+)/board/tasks/(t-[0-9a-z]+)\.jsonl")


def gate(rel: str, outgoing: list[bytes], on_remote: Callable[[], list[bytes]]) -> list[dict[str, Any]]:
    """The `withdraw`/`void` events that answer the marked events of a task log's `outgoing` lines that
    the remote's copy (`on_remote()`, asked only when there is one) would not take (gitsync.Hooks)."""
    found = _TASK_LOG.fullmatch(rel)
    if found is None:
        return []
    mine = _records(outgoing)
    if not any(e.get("sync") is True and e.get("ev") in ARBITRATED for e in mine):
        return []
    room, stem = found.groups()
    return arbitrate(stem[:2] + stem[2:].upper(), room, _records(on_remote()), mine)


def _records(lines: list[bytes]) -> list[dict[str, Any]]:
    import json

    found = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            found.append(record)
    return found


def arbitrate(task_id: str, room: str, remote: list[dict[str, Any]], outgoing: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Fold each marked event of `outgoing` (in the one order) onto `remote` and what was taken before it:
    one that adds a conflict (a double claim, a write under a lease that is not the current one) is
    answered — a claim withdrawn, any other write voided."""
    settled = [e for e in outgoing if e.get("ev") in ("withdraw", "void")]
    accepted = list(remote) + settled
    answers: list[dict[str, Any]] = []
    for event in order.ordered([e for e in outgoing if e.get("ev") not in ("withdraw", "void")]):
        if event.get("sync") is True and event.get("ev") in ARBITRATED and not _answered(event, accepted):
            before = replay_log(task_id, room, order.ordered(accepted))
            after = replay_log(task_id, room, order.ordered([*accepted, event]))
            if len(after.conflicts) > len(before.conflicts):
                answer = _answer(event, before)
                answers.append(answer)
                accepted.append(answer)
                continue
        accepted.append(event)
    return answers


def _answered(event: dict[str, Any], accepted: list[dict[str, Any]]) -> bool:
    """Whether a withdraw (a claim) or a void (any other write) already answers `event`."""
    if event.get("ev") == "claim":
        return any(e.get("ev") == "withdraw" and e.get("lease_id") == event.get("lease_id") for e in accepted)
    return any(e.get("ev") == "void" and e.get("of") == event.get("hlc") for e in accepted)


def _answer(event: dict[str, Any], there: Task) -> dict[str, Any]:
    who = (f"{held_by(there.lease)} holds it there" if there.lease is not None
           else f"it is {there.status} there (fence {there.fence})")
    return answer(event, who)


def answer(event: dict[str, Any], reason: str) -> dict[str, Any]:
    """What answers `event` (a claim: a withdraw of its lease; any other write: a void naming it), saying why."""
    said = {"at": iso(now()), "by": event.get("by", ""), "lease_id": event.get("lease_id", ""),
            "fence": event.get("fence", 0), "reason": reason}
    if event.get("ev") == "claim":
        return {"ev": "withdraw", **said}
    return {"ev": "void", "of": event.get("hlc", ""), **said}
