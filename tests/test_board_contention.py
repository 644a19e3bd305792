"""Claims under real contention: many processes claiming from one lane, also while being killed.

Workers are real processes racing for the real file locks. Most loop in Python through the library
(one process each, so 2 cores can run hundreds of claims); a smaller set runs the real `rooms` command.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import pytest

from rooms_cli.board import store, tasks
from rooms_cli.board.replay import replay
from rooms_cli.store import jsonl
from tests.conftest import rooms_env

pytestmark = pytest.mark.slow

ROOM = "default"
LANE = "worker"

WORKER = r"""
import json, os, random, sys, time
from rooms_cli.board import claims
from rooms_cli.store.paths import open_project
project = open_project()
finish = sys.argv[1] == "finish"
plate = f"worker/{os.getpid()}"
while True:
    claim = claims.next_task(project, "default", agent="worker", plate=plate)
    if claim is None:
        print(json.dumps({"nothing": True}), flush=True)
        break
    print(json.dumps({"claimed": claim.task.id, "lease": claim.lease.lease_id}), flush=True)
    if sys.argv[1] == "hold":  # holds its first task until it is killed
        time.sleep(120)
    if finish:
        time.sleep(random.uniform(0, 0.04))  # a little work, so kills land both mid-claim and mid-work
        claims.finish_task(project, "default", claim.task.id, claim.lease.lease_id, summary="done by " + plate)
        print(json.dumps({"done": claim.task.id, "lease": claim.lease.lease_id}), flush=True)
"""


def fill_lane(project, count: int) -> list[str]:
    return [
        tasks.add_task(project, ROOM, f"task {n}", lane=LANE, done="it is done", by="tester", order=n).id
        for n in range(count)
    ]


def start_worker(mode: str, extra_env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=rooms_env(extra_env),
    )


def outputs(proc: subprocess.Popen) -> list[dict]:
    out, _err = proc.communicate(timeout=120)
    return [json.loads(line) for line in out.splitlines() if line.strip().startswith("{")]


def all_events(project, task_id: str) -> list[dict]:
    scan = jsonl.scan(store.task_path(project, ROOM, task_id))
    assert scan.bad == [], f"{task_id}: unparseable lines {scan.bad}"
    return scan.records


def test_eight_processes_claim_every_task_of_one_lane_exactly_once(project):
    ids = fill_lane(project, 200)
    workers = [start_worker("claim") for _ in range(8)]
    results = [outputs(w) for w in workers]
    assert all(w.returncode == 0 for w in workers), [w.stderr.read() for w in workers]
    claimed = [r["claimed"] for out in results for r in out if "claimed" in r]
    assert sorted(claimed) == sorted(ids), "every task claimed exactly once"
    assert sum(1 for out in results if out) == 8 and all(out[-1] == {"nothing": True} for out in results)
    acknowledged = {r["claimed"]: r["lease"] for out in results for r in out if "claimed" in r}
    for task_id in ids:  # no lost event: each acknowledged claim is the task's one claim event
        claims_in_log = [e for e in all_events(project, task_id) if e["ev"] == "claim"]
        assert [e["lease_id"] for e in claims_in_log] == [acknowledged[task_id]]
    assert sum(len(out) > 1 for out in results) >= 2, "the claims really were spread over competing processes"


def test_eight_rooms_commands_racing_for_one_task_have_one_winner(project):
    (task_id,) = fill_lane(project, 1)
    procs = [
        # eight sessions of one agent (distinct plates, for the message; a claim is a lease's either way)
        subprocess.Popen([sys.executable, "-m", "rooms_cli", "task", "claim", task_id, "--as", LANE, "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=rooms_env({"ROOMS_INSTANCE": f"racer{i}"}))
        for i in range(8)
    ]
    codes = sorted(p.wait(timeout=120) for p in procs)
    assert codes == [0] + [3] * 7
    for p in procs:
        if p.returncode == 3:
            assert json.loads(p.stderr.read().strip().splitlines()[-1])["error"]["code"] == "already_claimed"
    assert len([e for e in all_events(project, task_id) if e["ev"] == "claim"]) == 1


def test_eight_rooms_task_next_loops_share_a_lane_without_double_claims(project):
    ids = fill_lane(project, 16)
    loop = (
        'while out=$("$PY" -m rooms_cli task next --as worker --json); do '
        '[ "$out" = "null" ] && exit 0; printf "%s\\n" "$out" | tr -d "\\n "; echo; done; exit 1'
    )
    procs = [
        subprocess.Popen(["sh", "-c", loop], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=rooms_env({"PY": sys.executable}))
        for _ in range(8)
    ]
    claimed = []
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
        claimed += [json.loads(line)["task"]["id"] for line in out.splitlines() if line.strip()]
    assert sorted(claimed) == sorted(ids)


def test_killed_claimers_leave_parseable_files_and_their_tasks_come_back(project):
    ids = fill_lane(project, 150)
    rng = random.Random(20261121)
    # one worker surely killed while it holds a task (the random kills below may all land between claims
    # or during start-up on a loaded machine)
    holder = start_worker("hold")
    held = json.loads(holder.stdout.readline())
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=30)
    live: list[subprocess.Popen] = [start_worker("finish") for _ in range(8)]
    finished: list[subprocess.Popen] = []
    killed = 0
    deadline = time.monotonic() + 6
    while time.monotonic() < deadline and killed < 16:
        time.sleep(rng.uniform(0.05, 0.2))
        running = [p for p in live if p.poll() is None]
        if not running:
            break
        victim = rng.choice(running)
        victim.send_signal(signal.SIGKILL)
        killed += 1
        live.append(start_worker("finish"))
    for p in live:
        finished.append(p)
    acknowledged: list[dict] = []
    for p in finished:
        acknowledged += outputs(p)
    assert killed >= 3, "the campaign must really kill workers"

    # every file parses; no task ever had two holders (one claim per fence, no replay conflict)
    now = datetime.now(UTC)
    for task_id in ids:
        events = all_events(project, task_id)
        fences = [e["fence"] for e in events if e["ev"] == "claim"]
        assert len(fences) == len(set(fences)), f"{task_id} has two claims with one fence"
        assert replay(task_id, ROOM, events, now.isoformat()).conflicts == []
    # nothing acknowledged was lost
    for item in acknowledged:
        if "done" in item:
            dones = [e for e in all_events(project, item["done"]) if e["ev"] == "done"]
            assert [e["lease_id"] for e in dones] == [item["lease"]]
        elif "claimed" in item:
            assert item["lease"] in [e.get("lease_id") for e in all_events(project, item["claimed"])]

    stuck = [t for t in tasks.load_board(project, ROOM) if t.status != "done"]
    assert all(t.status == "doing" for t in stuck), "only tasks held by killed workers are unfinished"
    assert held["claimed"] in {t.id for t in stuck}, "the task of the worker killed while holding it"

    # once their leases lapse, the killed holders' tasks come back and can be finished
    later = (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    os.environ["ROOMS_NOW"] = later  # the fixture restores the environment
    try:
        assert {t.id for t in tasks.load_board(project, ROOM) if t.status == "todo"} == {t.id for t in stuck}
        sweeper = start_worker("finish", {"ROOMS_NOW": later})
        swept = outputs(sweeper)
        assert sweeper.returncode == 0
        assert sorted(r["done"] for r in swept if "done" in r) == sorted(t.id for t in stuck)
        assert all(t.status == "done" for t in tasks.load_board(project, ROOM))
    finally:
        del os.environ["ROOMS_NOW"]
