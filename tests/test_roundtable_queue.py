"""The roundtable queue: claims under concurrency, dead runners retried, leases, the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import checkout_path, live_status

from rooms_cli.roundtable import queue
from rooms_cli.roundtable.orchestrator import RoundtableRequest
from rooms_cli.store import jsonl
from rooms_cli.store.locks import locked


def _env(project_dir: Path, **extra) -> dict:
    env = {"PATH": "/usr/bin:/bin", "ROOMS_DIR": str(project_dir), "PYTHONPATH": checkout_path(), "USER": "tester",
           "ROOMS_LOCK_TIMEOUT": "60"}
    env.update(extra)
    return env


def _tick(project_dir: Path, **extra) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "rooms_cli", "tick", "--json"], env=_env(project_dir, **extra),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def ops(project) -> list[dict]:
    return jsonl.read(queue.queue_path(project))


def test_concurrent_ticks_never_run_the_same_item(project, project_dir):
    for n in range(6):
        queue.enqueue(project, RoundtableRequest("watercooler", topic=f"topic {n}", turns=2, force=True))
    procs = [_tick(project_dir) for _ in range(3)]
    runs = 0
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        runs += sum(a["action"] == "run" for a in json.loads(out)["steps"]["roundtables"])
    assert runs == 6
    log = ops(project)
    for item in queue.list_items(project):
        assert item.status == "done"
        assert sum(1 for r in log if r["id"] == item.id and r["op"] == "claim") == 1
        assert sum(1 for r in log if r["id"] == item.id and r["op"] == "done") == 1


def _wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


def test_an_item_a_dead_runner_left_is_retried(project, project_dir):
    item, _ = queue.enqueue(project, RoundtableRequest("debate", participants=["analyst", "hustler"], turns=2, force=True))
    transcripts = lambda: list((project_dir / ".rooms" / "rooms").glob("roundtable-*/transcript.jsonl"))  # noqa: E731
    # hold the analyst's memories lock: the runner finishes its turns, then waits to store lessons
    with locked(project_dir / ".rooms" / "memories" / "analyst.jsonl"):
        proc = _tick(project_dir)
        _wait_for(lambda: transcripts() and sum(r.get("kind") == "message" for r in jsonl.read(transcripts()[0])) == 2)
        assert queue.get_item(project, item.id).status == "running"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert queue.get_item(project, item.id).status == "running"  # what the dead runner left
    again = _tick(project_dir)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    actions = json.loads(out)["steps"]["roundtables"]
    assert actions[0] == {"action": "retry", "detail": f"{item.id} (debate): runner pid {proc.pid} died"}
    assert actions[1]["action"] == "run" and "failed" not in actions[1]["detail"]
    done = queue.get_item(project, item.id)
    assert done.status == "done" and done.attempts == 2 and done.history == [f"runner pid {proc.pid} died"]
    assert len(transcripts()) == 2  # the cut attempt's room stays, as a record of what happened


def test_a_lapsed_lease_is_requeued_and_the_old_runner_cannot_finish_it(monkeypatch, project):
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T06:00:00Z")
    item, _ = queue.enqueue(project, RoundtableRequest("debate", turns=2, force=True))
    claimed = queue.claim_next(project)
    assert claimed.id == item.id and queue.claim_next(project) is None  # claimed once
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T06:10:00Z")
    assert queue.recover_dead(project) == []  # our own, live, within its lease
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T06:16:00Z")
    recovered = queue.recover_dead(project)
    assert [(i.id, r) for i, r in recovered] == [(item.id, "runner lease lapsed at 2026-11-21T06:15:00.000Z")]
    queue.mark_done(project, claimed, "rt-x", "room-x")  # too late: the claim is no longer ours
    assert queue.get_item(project, item.id).status == "pending"


def test_a_heartbeat_keeps_a_long_roundtable_claimed(monkeypatch, project):
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T06:00:00Z")
    queue.enqueue(project, RoundtableRequest("debate", turns=2, force=True))
    claimed = queue.claim_next(project)
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T06:09:00Z")
    queue.renew(project, claimed)
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T06:20:00Z")
    assert queue.recover_dead(project) == []
    assert queue.get_item(project, claimed.id).lease_until == "2026-11-21T06:24:00.000Z"


def test_after_max_attempts_an_item_fails(monkeypatch, project):
    item, _ = queue.enqueue(project, RoundtableRequest("debate", turns=2, force=True))
    for attempt in range(queue.MAX_ATTEMPTS):
        monkeypatch.setenv("ROOMS_NOW", f"2026-11-2{attempt + 1}T06:00:00Z")
        assert queue.claim_next(project).attempts == attempt + 1
        monkeypatch.setenv("ROOMS_NOW", f"2026-11-2{attempt + 1}T07:00:00Z")
        queue.recover_dead(project)
    final = queue.get_item(project, item.id)
    assert final.status == "failed" and "gave up after 3 attempts" in final.error


def test_a_failing_roundtable_is_marked_failed_and_the_next_one_runs(project, cli):
    queue.enqueue(project, RoundtableRequest("standup", participants=["analyst", "boss"]))  # too few for a standup
    queue.enqueue(project, RoundtableRequest("watercooler", turns=2, force=True))
    report = cli("tick", "--json").json()
    details = [a["detail"] for a in report["steps"]["roundtables"]]
    assert "failed: format 'standup' takes 4–6 agents, got 2" in details[0] and "turns in room" in details[1]
    assert [i.status for i in queue.list_items(project)] == ["failed", "done"]


def test_queue_command_enqueues_and_lists(cli, project):
    run = cli("roundtable", "queue", "retro", "--topic", "last sprint", "--turns", "6", "--force", "--json")
    assert run.exit_code == 0, run.stderr
    doc = run.json()
    assert doc["status"] == "pending" and doc["request"]["topic"] == "last sprint" and doc["request"]["turns"] == 6
    listed = cli("roundtable", "queue", "--json").json()
    assert [i["id"] for i in listed] == [doc["id"]]
    assert doc["id"] in cli("roundtable", "queue").stdout
    bad = cli("roundtable", "queue", "karaoke")
    assert bad.exit_code == 1 and "no format 'karaoke'" in bad.stderr
    assert len(cli("roundtable", "queue", "--json").json()) == 1


@pytest.mark.slow
def test_ticks_killed_at_random_moments_leave_every_file_parseable_and_fire_nothing_twice(project, project_dir):
    import random

    import yaml

    slots = [{"name": f"slot{n}", "hour_utc": 6, "format": "watercooler", "participants": ["random:2"],
              "pace": 0} for n in range(3)]
    (project_dir / ".rooms.yaml").write_text(yaml.safe_dump({"schedule": slots}))
    chance = random.Random(11)
    rooms_dir = project_dir / ".rooms"
    for _ in range(6):
        proc = _tick(project_dir, ROOMS_NOW="2026-11-21T06:05:00Z")
        time.sleep(chance.uniform(0.05, 1.0))
        proc.kill()
        proc.wait(timeout=30)
        for log in rooms_dir.rglob("*.jsonl"):
            assert jsonl.scan(log).bad == [], log
        state = rooms_dir / "schedule" / "fired.jsonl"
        if state.exists():
            assert jsonl.scan(state).bad == []
    final = _tick(project_dir, ROOMS_NOW="2026-11-21T06:30:00Z")
    _out, err = final.communicate(timeout=120)
    assert final.returncode == 0, err
    items = queue.list_items(project)
    assert sorted(i.key for i in items) == ["slot0@2026-11-21", "slot1@2026-11-21", "slot2@2026-11-21"]
    # done, unless its runner was killed on every one of its attempts
    assert all(i.status == "done" or "gave up after 3 attempts" in (i.error or "") for i in items)
    assert any(i.status == "done" for i in items)


def test_tick_shows_the_running_roundtable_live_on_a_terminal_and_nothing_extra_when_piped(project, project_dir, rooms):


    slow = ["debate", "--participants", "analyst,hustler", "--turns", "3", "--pace", "0.6", "--force"]
    assert rooms("roundtable", "queue", *slow).exit_code == 0
    status = live_status(project_dir, "tick", expect=r"◆ debate · \d+s · turn [0-3]/3 · spoke: .* · pending: ", timeout=60)
    assert status == 0
    assert rooms("roundtable", "queue", *slow).exit_code == 0
    piped = rooms("tick")
    assert piped.exit_code == 0 and "◆" not in piped.stderr and "◆" not in piped.stdout
    assert "3 turns in room" in piped.stdout
