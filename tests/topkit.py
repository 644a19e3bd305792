"""A small, exactly reproducible project for the `rooms top` tests, snapshots and bench.

`seed(root)` builds it through the parts' functions, at ROOMS_NOW = NOW: four lanes of tasks (one
held, one done, one whose lease lapsed, one claimed twice as a git merge would leave it), a chat
exchange with the offline model, a group `rev` with a broadcast in flight, and a direct message. With
`fixed_ids()` every record id is the same on every run (the time part is ROOMS_NOW's, the rest a
counter), so screenshots compare byte for byte.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

NOW = "2026-11-21T13:00:00Z"
EARLIER = "2026-11-21T12:30:00Z"


def _moments(start: str) -> Iterator[str]:
    """One second apart from `start`: records made at different times get short ids that differ early."""
    from datetime import timedelta

    from rooms_cli.store.clock import iso, parse_time

    moment = parse_time(start)
    while True:
        yield iso(moment)
        moment += timedelta(seconds=1)


@contextlib.contextmanager
def fixed_ids() -> Iterator[None]:
    """Record ids without randomness: `new_id` adds 1 to the last id's random part when the clock
    stands still (ROOMS_NOW), so zero random bytes make it a counter."""
    from rooms_cli.store import ids

    saved_last, saved_urandom = ids._last, ids.os.urandom
    ids._last = (0, 0)
    ids.os.urandom = lambda n: bytes(n)  # type: ignore[assignment]
    try:
        yield
    finally:
        ids._last, ids.os.urandom = saved_last, saved_urandom


@contextlib.contextmanager
def clock(moment: str) -> Iterator[None]:
    saved = os.environ.get("ROOMS_NOW")
    os.environ["ROOMS_NOW"] = moment
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("ROOMS_NOW", None)
        else:
            os.environ["ROOMS_NOW"] = saved


def seed(root: Path, *, tasks: int = 0) -> None:
    """The demo project in `root` (created); `tasks` more todo tasks spread over the four lanes."""
    from rooms_cli.board import claims, store
    from rooms_cli.board import tasks as board_tasks
    from rooms_cli.chat import coordinator
    from rooms_cli.groups import broadcasts, roster
    from rooms_cli.messaging.send import send_message
    from rooms_cli.project.config import load_config
    from rooms_cli.project.init import initialize
    from rooms_cli.store.paths import open_project

    root.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("ROOMS_SEED", "7")
    before, after = _moments(EARLIER), _moments("2026-11-21T12:55:00Z")
    with fixed_ids():
        with clock(next(before)):
            initialize(root, example="dev")
            project = open_project(root)
            config = load_config(project)
        with clock(next(before)):
            lapsed = board_tasks.add_task(project, "default", "Rotate the keys", lane="ops", done="keys rotated", by="alice")
        with clock(next(before)):
            claims.claim_task(project, "default", lapsed.id, agent="ops", lease="10m", plate="ops/a:1")
        made = {}
        for key, title, lane in (("spec", "Write the auth spec", "researcher"), ("survey", "Survey rate limits", "researcher"),
                                 ("review", "Review the API", "reviewer"), ("deploy", "Deploy staging", "ops"),
                                 ("sketch", "Sketch the architecture", "architect")):
            with clock(next(after)):
                made[key] = board_tasks.add_task(project, "default", title, lane=lane, done="it is done", by="alice")
        for n in range(tasks):
            with clock(next(after)):
                board_tasks.add_task(project, "default", f"Task {n}", lane=("researcher", "reviewer", "ops", "architect")[n % 4],
                                     done="done", by="alice")
        with clock(NOW):
            claims.claim_task(project, "default", made["spec"].id, agent="researcher", lease="15m", plate="researcher/a:1")
            claim = claims.claim_task(project, "default", made["deploy"].id, agent="ops", plate="ops/a:1")
            claims.finish_task(project, "default", made["deploy"].id, claim.lease.lease_id, summary="staging is up", holder="ops")
            won = claims.claim_task(project, "default", made["review"].id, agent="reviewer", plate="reviewer/a:1")
            # the other clone's claim at the same fence, as a union merge leaves it
            store.append_events(project, "default", made["review"].id, [{
                "ev": "claim", "at": NOW, "by": "reviewer", "lease_id": "l-01M7ZZZZZZZZZZZZZZZZZZZZZZ", "fence": won.lease.fence,
                "holder": "reviewer", "plate": "reviewer/b:2", "expires_at": won.lease.expires_at}], held=False)
            with coordinator.floor(project, "default"):
                coordinator.run_message(project, config, "default", "alice", "@researcher what about rate limits?")
            roster.spawn(project, "rev", ["reviewer", "architect"])
            broadcasts.send_broadcast(project, config, "rev", {
                "objective": "review the api", "output_format": "bullets", "tool_guidance": "read only", "boundaries": "no patches"}, "alice")
            send_message(project, config, "alice", "ready for review", to="researcher")


def seeded_template(tmp_path_factory: Any, name: str) -> Path:
    """The seeded project, built once for a test module (each test works on its own copy: `copy_of`),
    with no ROOMS_* variable of the caller's and USER=tester."""
    import pytest

    root = tmp_path_factory.mktemp(name) / "proj"
    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("ROOMS_")]:
            mp.delenv(key)
        mp.setenv("USER", "tester")
        seed(root)
    return root


def copy_of(template: Path, tmp_path: Path, monkeypatch: Any) -> Path:
    """A test's own copy of the seeded project, which ROOMS_DIR names, at the seed's clock (ROOMS_NOW)."""
    import shutil

    root = tmp_path / "proj"
    shutil.copytree(template, root, symlinks=True, ignore=shutil.ignore_patterns("*.lock"))
    monkeypatch.setenv("ROOMS_DIR", str(root))
    monkeypatch.setenv("ROOMS_NOW", NOW)
    return root
