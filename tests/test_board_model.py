"""A model-based test: random sequences of claims, renewals, releases, finishes, status changes, clock
jumps and ticks on one task, checked step by step against a small reference model of the rules."""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import UTC, datetime, timedelta

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from rooms_cli.board import claims, tasks
from rooms_cli.board.errors import AlreadyClaimed, InvalidTransition, LeaseExpired, LeaseFenced, LeaseMismatch
from rooms_cli.board.tick import expire_leases
from rooms_cli.board.transitions import TRANSITIONS
from rooms_cli.core.errors import Conflict

ROOM = "default"
START = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


class BoardRules(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        from rooms_cli.project.init import initialize
        from rooms_cli.store.paths import open_project

        self.saved_now = os.environ.get("ROOMS_NOW")
        self.now = START
        os.environ["ROOMS_NOW"] = stamp(self.now)
        self.root = tempfile.mkdtemp(prefix="rooms-model-")
        initialize(self.root)
        self.project = open_project(self.root)
        self.task_id = tasks.add_task(self.project, ROOM, "t", lane="a", done="d", by="p").id
        # the reference model
        self.status = "todo"
        self.lease: tuple[str, int, datetime] | None = None  # (id, fence, expires)
        self.fence = 0
        self.issued: list[tuple[str, int]] = []
        self.ended: set[str] = set()  # leases released, finished or used for a status change

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        if self.saved_now is None:
            os.environ.pop("ROOMS_NOW", None)
        else:
            os.environ["ROOMS_NOW"] = self.saved_now

    # what the model expects ------------------------------------------------------------------

    def effective(self) -> str:
        if self.status == "doing" and self.lease and self.lease[2] <= self.now:
            return "todo"
        return self.status

    def live(self, lease_id: str) -> bool:
        return self.effective() == "doing" and self.lease is not None and self.lease[0] == lease_id

    def expected_lease_error(self, lease_id: str, fence: int) -> type[Conflict]:
        if fence < self.fence:
            return LeaseFenced
        if lease_id not in self.ended and self.lease and self.lease[0] == lease_id and self.effective() == "todo":
            return LeaseExpired
        return LeaseMismatch

    # rules -----------------------------------------------------------------------------------

    @rule(minutes=st.integers(0, 14))
    def clock_moves(self, minutes):
        self.now += timedelta(minutes=minutes)
        os.environ["ROOMS_NOW"] = stamp(self.now)

    @rule(lease=st.sampled_from(["5m", "10m"]))
    def claim(self, lease):
        before = self.effective()
        try:
            got = claims.claim_task(self.project, ROOM, self.task_id, agent="a", lease=lease)
        except AlreadyClaimed:
            assert before == "doing"
            return
        except InvalidTransition:
            assert before not in ("todo", "doing")
            return
        assert before == "todo"
        self.fence += 1
        assert got.lease.fence == self.fence
        self.status = "doing"
        self.lease = (got.lease.lease_id, got.lease.fence, self.now + timedelta(minutes=int(lease[:-1])))
        self.issued.append((got.lease.lease_id, got.lease.fence))

    @rule(data=st.data(), action=st.sampled_from(["renew", "release", "done", "blocked", "failed", "cancelled", "todo"]))
    def write_with_a_lease(self, data, action):
        if not self.issued:
            return
        lease_id, fence = data.draw(st.sampled_from(self.issued))
        ok = self.live(lease_id)
        expected = None if ok else self.expected_lease_error(lease_id, fence)
        try:
            if action == "renew":
                claims.renew_lease(self.project, ROOM, self.task_id, lease_id, lease="10m")
            elif action == "release":
                claims.release_task(self.project, ROOM, self.task_id, lease_id)
            elif action == "done":
                claims.finish_task(self.project, ROOM, self.task_id, lease_id, summary="ok")
            else:
                claims.set_status(self.project, ROOM, self.task_id, action, by="a", lease_id=lease_id)
        except Conflict as err:
            assert expected is not None, f"{action} with the live lease was refused: {err}"
            assert type(err) is expected, f"{action}: expected {expected.__name__}, got {type(err).__name__}: {err}"
            return
        assert ok, f"{action} with a lease that is not live was accepted"
        if action == "renew":
            self.lease = (lease_id, fence, self.now + timedelta(minutes=10))
            return
        self.status = {"release": "todo", "done": "done"}.get(action, action)
        self.lease = None
        self.ended.add(lease_id)

    @rule(target_status=st.sampled_from(["todo", "blocked", "failed", "cancelled"]))
    def set_status_without_a_lease(self, target_status):
        before = self.effective()
        try:
            claims.set_status(self.project, ROOM, self.task_id, target_status, by="p")
        except AlreadyClaimed:
            assert before == "doing"
            return
        except InvalidTransition:
            assert before != "doing" and target_status not in TRANSITIONS[before]
            return
        assert target_status in TRANSITIONS[before]
        if before == "todo" and self.status == "doing":  # the lapsed lease is over
            self.lease = None
        self.status = target_status

    @rule()
    def tick(self):
        expire_leases(self.project, None, False)

    @invariant()
    def the_files_agree_with_the_model(self):
        seen = tasks.load_task(self.project, ROOM, self.task_id)
        assert seen.status == self.effective()
        assert seen.fence == self.fence
        assert seen.conflicts == []
        if seen.status == "doing":
            assert self.lease and seen.lease and seen.lease.lease_id == self.lease[0]
            assert seen.lease.expires_at == stamp(self.lease[2])
        else:
            assert seen.lease is None


BoardRules.TestCase.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)
test_board_follows_the_rules = BoardRules.TestCase
