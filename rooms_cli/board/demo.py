"""The board's section of `rooms demo`: two instances race to claim, a lease lapses, a done record."""

from __future__ import annotations

import json
import os
import threading
from contextlib import contextmanager

from rooms_cli.board import claims, tasks
from rooms_cli.board.render import board_markdown
from rooms_cli.board.tick import expire_leases
from rooms_cli.core.errors import Conflict, RoomsError
from rooms_cli.store import atomic
from rooms_cli.store.clock import add_seconds, iso, now

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from rooms_cli.store.paths import Project

ROOM = "default"


@contextmanager
def _clock(moment: str) -> Iterator[None]:
    before = os.environ.get("ROOMS_NOW")
    os.environ["ROOMS_NOW"] = moment
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("ROOMS_NOW", None)
        else:
            os.environ["ROOMS_NOW"] = before


def _race(project: Project, task_id: str) -> list[tuple[str, claims.Claim | Conflict]]:
    """Two threads claim the same task at once (real file locks); return (plate, Claim | error)."""
    start = threading.Barrier(2)
    results: list[tuple[str, claims.Claim | Conflict]] = []

    def attempt(plate: str) -> None:
        start.wait()
        try:
            results.append((plate, claims.claim_task(project, ROOM, task_id, agent="researcher", plate=plate)))
        except Conflict as err:
            results.append((plate, err))

    threads = [threading.Thread(target=attempt, args=(f"researcher/{n}",)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def run(project: Project, show: Callable[[str, str], None]) -> None:
    show("italic", "The board: lanes of tasks that agents claim under a lease and finish with a compact record.")
    done_when = "specs/auth.md exists and names the token lifetime"
    show("cmd", f"rooms task add 'Write the auth spec' --lane researcher --done '{done_when}'")
    task = tasks.add_task(project, ROOM, "Write the auth spec", lane="researcher", done=done_when, by="you")
    tasks.add_task(project, ROOM, "Review the auth spec", lane="reviewer", done="a review message in the room", by="you")
    show("line", f"added {task.id}")

    show("italic", "Two instances of the researcher race for it: exactly one wins, the other is told who holds it.")
    show("cmd", f"rooms task claim {task.id[:12]} --as researcher   # instances 1 and 2, at the same moment")
    winner = None
    for plate, result in sorted(_race(project, task.id), key=lambda r: r[0]):
        if isinstance(result, claims.Claim):
            winner = result
            show("line", f"{plate}: claimed, lease {result.lease.lease_id} (fence {result.lease.fence})")
        else:
            show("line", f"{plate}: {result.code}: {result}")
    if winner is None:
        raise RoomsError("board demo: neither instance won the claim race")

    later = iso(add_seconds(now(), 11 * 60))
    show("italic", f"The winner goes quiet. Eleven minutes later (ROOMS_NOW={later}) its 10-minute lease has lapsed:")
    with _clock(later):
        show("cmd", "rooms tick")
        for action in expire_leases(project, None, False):
            show("line", f"leases: {action['action']} {action['detail']}")
        show("cmd", "rooms task next --as researcher   # the other instance")
        second = claims.next_task(project, ROOM, agent="researcher", plate="researcher/2")
        if second is None:
            raise RoomsError("board demo: the lapsed task could not be claimed again")
        show("line", f"researcher/2: claimed {second.task.id[:12]}, lease {second.lease.lease_id} (fence {second.lease.fence})")
        show("italic", "The first instance wakes up and tries to finish with its old lease: fencing refuses it.")
        show("cmd", f"rooms task done {task.id[:12]} --lease-id {winner.lease.lease_id} --summary 'spec written'")
        try:
            claims.finish_task(project, ROOM, task.id, winner.lease.lease_id, summary="spec written")
        except Conflict as err:
            show("line", f"{err.code}: {err}")

        spec = os.path.join(project.root, "specs", "auth.md")
        atomic.write_text(spec, "# Auth\n\nAccess tokens live 15 minutes; refresh tokens 30 days.\n")
        show("italic", "The second instance writes the spec and finishes with a compact record, not a narration.")
        show("cmd", f"rooms task done {task.id[:12]} --summary 'auth spec: 15 min tokens' "
                    "--artifact file:specs/auth.md --result-ref file:specs/auth.md --next 'reviewer checks lifetimes'")
        finished = claims.finish_task(project, ROOM, task.id, second.lease.lease_id, summary="auth spec: 15 min tokens",
                                      artifacts=["file:specs/auth.md"], next_step="reviewer checks lifetimes",
                                      result_ref="file:specs/auth.md")
        show("record", json.dumps(finished.record, ensure_ascii=False))  # the CLI prints it for people, as task done does
        show("cmd", "rooms board --format md")
        for line in board_markdown(project, ROOM).splitlines():
            show("line", line)
