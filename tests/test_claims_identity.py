"""One process, one claim: a claim belongs to the lease it returned, not to an agent name or a parent.

The issue's reproduction runs as written: `seq 20 | xargs -P 8 -I{} rooms task next --as worker --json`
on a 20-task board (eight processes of one parent, so one `host:parent-pid` plate) claims 20 distinct
tasks. Claiming a held task is refused to everyone, the same agent included, unless the caller
presents that task's current lease.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import rooms_env

T0 = "2026-11-21T09:00:00.000Z"


def add(cli, title="Write the spec", lane="worker"):
    result = cli("task", "add", title, "--lane", lane, "--done", "it is done", "--json")
    assert result.exit_code == 0, result.stderr
    return result.json()["id"]


def test_xargs_of_eight_task_next_processes_claims_twenty_distinct_tasks(project_dir, cli):
    ids = {add(cli, f"task {n}") for n in range(20)}
    bindir = Path(sys.executable).parent
    rooms_script = shutil.which("rooms", path=str(bindir)) or shutil.which("rooms")
    assert rooms_script, "the rooms console script is installed"
    env = rooms_env({"ROOMS_DIR": str(project_dir), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"})
    proc = subprocess.run(
        ["sh", "-c", "seq 20 | xargs -P 8 -I{} rooms task next --as worker --json"],
        capture_output=True, text=True, env=env, timeout=240, cwd=project_dir,
    )
    assert proc.returncode == 0, proc.stderr
    claims = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    assert len(claims) == 20
    claimed = [c["task"]["id"] for c in claims]
    assert sorted(claimed) == sorted(ids), "20 claims of 20 distinct tasks"
    assert not any(c["already_yours"] for c in claims)
    assert len({c["lease_id"] for c in claims}) == 20


def test_the_same_agent_claiming_a_held_task_again_is_refused_naming_holder_lease_and_expiry(cli, project_dir, monkeypatch):
    monkeypatch.setenv("ROOMS_NOW", T0)
    task_id = add(cli)
    first = cli("task", "claim", task_id, "--as", "alice", "--json").json()
    again = cli("task", "claim", task_id, "--as", "alice", "--json")
    assert again.exit_code == 3
    err = again.err_json()["error"]
    assert err["code"] == "already_claimed"
    assert first["lease_id"] in err["message"] and "2026-11-21T09:10:00.000Z" in err["message"]
    assert "alice/" in err["message"]


def test_presenting_the_current_lease_makes_a_claim_idempotent(cli, project_dir, monkeypatch):
    monkeypatch.setenv("ROOMS_NOW", T0)
    task_id = add(cli)
    first = cli("task", "claim", task_id, "--as", "alice", "--json").json()
    log = sorted((project_dir / ".rooms").rglob(f"{task_id.lower()}.jsonl"))[0]
    size = log.stat().st_size
    by_flag = cli("task", "claim", task_id, "--as", "alice", "--lease-id", first["lease_id"], "--json").json()
    by_env = cli("task", "claim", task_id, "--as", "alice", env={"ROOMS_LEASE": first["lease_id"]})
    assert by_flag["already_yours"] is True and by_flag["lease_id"] == first["lease_id"]
    assert by_env.exit_code == 0 and "is already yours" in by_env.stdout
    assert log.stat().st_size == size, "nothing written"
    wrong = cli("task", "claim", task_id, "--as", "alice", "--lease-id", "l-01WRONG")
    assert wrong.exit_code == 3


def test_two_real_claim_processes_of_one_parent_have_one_winner(project_dir, cli, rooms):
    task_id = add(cli)
    env = {"ROOMS_DIR": str(project_dir)}
    procs = [subprocess.Popen([sys.executable, "-m", "rooms_cli", "task", "claim", task_id, "--as", "alice", "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=rooms_env(env))
             for _ in range(2)]
    codes = sorted(p.wait(timeout=60) for p in procs)
    assert codes == [0, 3]


@pytest.mark.parametrize("held", [True, False])
def test_task_next_never_hands_out_a_held_task(cli, project_dir, monkeypatch, held):
    monkeypatch.setenv("ROOMS_NOW", T0)
    first = add(cli, "first")
    second = add(cli, "second")
    if held:
        cli("task", "claim", first, "--as", "worker")
    got = cli("task", "next", "--as", "worker", "--json").json()
    assert got["task"]["id"] == (second if held else first)
