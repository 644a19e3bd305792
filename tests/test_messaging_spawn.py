"""Spawns as real detached processes: output piped to the parent's inbox, lost spawns, trees, wait, hooks."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import live_status

from tests.conftest import rooms_env

# A command runner: the prompt arrives on stdin, who it is in ROOMS_AGENT / ROOMS_PARENT.
RUNNER = textwrap.dedent(
    """
    import os, subprocess, sys, time
    prompt = sys.stdin.read()
    words = prompt.split()
    if "sleep" in words:
        time.sleep(float(words[words.index("sleep") + 1]))
    if "nest" in words:
        subprocess.run([sys.executable, "-m", "rooms_cli", "spawn", "sleep 4 grandchild work", "--description", "grandchild"],
                       check=True, stdout=subprocess.DEVNULL)
    if "fail" in words:
        print("half done")
        print("disk full", file=sys.stderr)
        sys.exit(3)
    print(f"agent={os.environ['ROOMS_AGENT']} parent={os.environ['ROOMS_PARENT']} dir={os.environ['ROOMS_DIR']} prompt={prompt}"
          f" lease={os.environ.get('ROOMS_LEASE')} instance={os.environ.get('ROOMS_INSTANCE')}")
    """
)


@pytest.fixture
def runner_project(project_dir, project, tmp_path):
    """A project whose `runner:` is the script above; every spawned process is killed afterwards."""
    script = tmp_path / "runner.py"
    script.write_text(RUNNER)
    with open(project_dir / ".rooms.yaml", "a") as fh:
        fh.write(f"\nrunner: [{json.dumps(sys.executable)}, {json.dumps(str(script))}]\n")
    yield project
    from rooms_cli.messaging.spawn import list_spawns

    for spawn in list_spawns(project):
        for pid in (spawn.pid, spawn.runner_pid):
            if pid:
                for kill in (lambda p: os.killpg(p, signal.SIGKILL), lambda p: os.kill(p, signal.SIGKILL)):
                    try:
                        kill(pid)
                    except (ProcessLookupError, PermissionError):
                        pass


def wait_until(predicate, timeout=30.0, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("condition not met in time")


def spawn_record(project, spawn_id):
    from rooms_cli.messaging.spawn import load_spawn

    return load_spawn(project, spawn_id)


def inbox_of(project, agent):
    from rooms_cli.messaging.inbox import read_inbox

    return read_inbox(project, agent)


def test_spawn_returns_at_once_and_its_output_lands_in_the_parents_inbox_after_it_exited(rooms, runner_project, project_dir):
    run = rooms("spawn", "sleep 3 build the API", "--description", "API work", "--as", "alice", "--json")
    assert run.exit_code == 0, run.stderr
    spawn = run.json()
    assert spawn["alias"] == "api-work" and spawn["parent"] == "alice" and spawn["pid"]
    # `rooms spawn` has exited without waiting for the runner; the spawn is still running, detached
    assert spawn_record(runner_project, spawn["id"]).status in ("starting", "running")
    assert inbox_of(runner_project, "alice") == []
    done = wait_until(lambda: (r := spawn_record(runner_project, spawn["id"])).status == "done" and r)
    assert done.exit_code == 0 and done.duration_s >= 2.9 and done.delivered == 1
    message = inbox_of(runner_project, "alice")[0]
    assert (message.sender, message.kind, message.meta["spawn"]) == ("api-work", "spawn_output", spawn["id"])
    assert f"agent=api-work parent=alice dir={project_dir} prompt=sleep 3 build the API" in message.text
    assert done.output == message.text


def test_a_spawned_child_does_not_inherit_its_parents_lease_or_instance(rooms, runner_project):
    run = rooms("spawn", "check identity", "--as", "alice", "--json",
                env={"ROOMS_LEASE": "l-PARENT", "ROOMS_INSTANCE": "host:parent"})
    assert run.exit_code == 0, run.stderr
    done = wait_until(lambda: (r := spawn_record(runner_project, run.json()["id"])).status == "done" and r)
    assert "lease=None instance=None" in done.output and "agent=alice" not in done.output


def test_spawn_without_description_gets_agentb_agentc(cli, runner_project):
    first = cli("spawn", "quick one", "--as", "alice", "--json").json()
    second = cli("spawn", "quick two", "--as", "alice", "--json").json()
    assert (first["alias"], second["alias"]) == ("agentb", "agentc")
    cli("wait", "--as", "alice", "--timeout", "60")


def test_failing_runner_delivers_its_error_and_exit_code(cli, runner_project):
    spawn = cli("spawn", "fail please", "--as", "alice", "--json").json()
    run = cli("wait", "--as", "alice", "--timeout", "60", "--json")
    assert run.exit_code == 0, run.stderr
    [message] = run.json()["messages"]
    assert message["kind"] == "spawn_error" and message["from"] == spawn["alias"]
    assert "exited with code 3: disk full" in message["text"] and "half done" in message["text"]
    record = spawn_record(runner_project, spawn["id"])
    assert (record.status, record.exit_code) == ("failed", 3)


def test_a_spawn_killed_with_sigkill_is_reported_lost(rooms, cli, runner_project):
    spawn = cli("spawn", "sleep 60 forever", "--as", "alice", "--json").json()
    running = wait_until(lambda: (r := spawn_record(runner_project, spawn["id"])).status == "running" and r.runner_pid and r)
    os.kill(running.pid, signal.SIGKILL)
    tick = wait_until(lambda: (t := rooms("tick", "--json").json()["steps"]["spawns"]) and t, timeout=20)
    assert tick[0]["action"] == "reap" and spawn["alias"] in tick[0]["detail"]
    record = spawn_record(runner_project, spawn["id"])
    assert record.status == "lost"
    [message] = inbox_of(runner_project, "alice")
    assert message.kind == "spawn_error" and message.text.startswith("lost:") and message.meta["status"] == "lost"
    # reported once, and `rooms wait` has nothing left to wait for
    assert rooms("tick", "--json").json()["steps"]["spawns"] == []
    assert rooms("wait", "--as", "alice", "--timeout", "5").exit_code == 0


def test_wait_notices_a_lost_spawn_without_tick(rooms, cli, runner_project):
    spawn = cli("spawn", "sleep 60 forever", "--as", "alice", "--json").json()
    running = wait_until(lambda: (r := spawn_record(runner_project, spawn["id"])).status == "running" and r)
    waiter = subprocess.Popen([sys.executable, "-m", "rooms_cli", "wait", "--as", "alice", "--json"],
                              stdout=subprocess.PIPE, text=True, env=rooms_env())
    time.sleep(0.5)
    os.kill(running.pid, signal.SIGKILL)
    out, _ = waiter.communicate(timeout=30)
    assert waiter.returncode == 0
    data = json.loads(out)
    assert data["spawns"][0]["status"] == "lost" and data["messages"][0]["text"].startswith("lost:")


def test_nested_spawns_and_wait_waits_for_the_whole_tree(rooms, runner_project):
    top = rooms("spawn", "nest then report", "--description", "parent", "--as", "alice", "--json").json()
    run = rooms("wait", "--as", "alice", "--timeout", "90", "--json")
    assert run.exit_code == 0, run.stderr
    from rooms_cli.messaging.spawn import list_spawns

    records = {s.alias: s for s in list_spawns(runner_project)}
    assert set(records) == {"parent", "grandchild"}
    child = records["grandchild"]
    assert (child.parent, child.depth, records["parent"].depth) == ("parent", 2, 1)
    # wait returned only after the grandchild (which outlives its parent by ~4 s) finished
    assert all(s.status == "done" for s in records.values())
    # the grandchild seen finishing, the parent named by its output whether or not it was done before wait began
    assert {s["alias"] for s in run.json()["spawns"]} == {"parent", "grandchild"}
    assert [m["from"] for m in run.json()["messages"]] == ["parent"]
    assert top["id"] == records["parent"].id
    [grand_msg] = inbox_of(runner_project, "parent")  # the grandchild reported to its own spawner
    assert "agent=grandchild parent=parent" in grand_msg.text


def test_wait_names_a_spawn_that_finished_before_it_began_as_one_it_saw_finish(cli, runner_project):
    # what wait prints must not depend on whether the spawn beat it (docs/messaging.md's example raced)
    spawn = cli("spawn", "quick one", "--description", "quick", "--as", "alice", "--json").json()
    wait_until(lambda: spawn_record(runner_project, spawn["id"]).delivered)
    late = cli("wait", "--as", "alice", "--timeout", "60")
    assert late.exit_code == 0, late.stderr
    assert late.stderr.splitlines()[0] == "spawns finished: quick (done)" and "#1 quick [spawn output]" in late.stdout
    again = cli("wait", "--as", "alice", "--timeout", "60", "--json").json()
    assert again["spawns"] == [] and again["messages"] == []  # named once: its output is read now

    running = cli("spawn", "sleep 2 slow one", "--description", "slow", "--as", "alice", "--json").json()
    early = cli("wait", "--as", "alice", "--timeout", "60", "--json").json()
    assert [(s["id"], s["status"]) for s in early["spawns"]] == [(running["id"], "done")]


def test_spawn_depth_is_limited_by_max_spawn_depth(cli, runner_project, project_dir):
    with open(project_dir / ".rooms.yaml", "a") as fh:
        fh.write("max_spawn_depth: 1\n")
    first = cli("spawn", "quick", "--as", "alice", "--json").json()
    deeper = cli("spawn", "deeper", "--as", first["alias"], "--json")
    assert deeper.exit_code == 1
    assert deeper.err_json()["error"]["code"] == "spawn_depth_exceeded"
    cli("wait", "--as", "alice", "--timeout", "60")


def test_wait_times_out_with_exit_4(rooms, cli, runner_project):
    cli("spawn", "sleep 30 slow", "--as", "alice")
    started = time.monotonic()
    run = rooms("wait", "--as", "alice", "--timeout", "1", "--json")
    assert run.exit_code == 4
    error = run.err_json()["error"]
    assert error["code"] == "timed_out" and error["data"]["pending"][0]["alias"] == "agentb"
    assert error["message"] == "timed out after 1s: still running: agentb"
    assert time.monotonic() - started < 20


def test_wait_sleeps_instead_of_busy_looping(rooms, cli, runner_project):
    rooms("spawn", "sleep 3 slow", "--as", "alice")  # a separate process: the worker is not our child
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    run = rooms("wait", "--as", "alice", "--timeout", "60")
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert run.exit_code == 0 and wall >= 2.0
    # start-up costs a few hundred ms of CPU; a polling loop over ~3 s would cost far more
    assert cpu < 0.5 * wall, (cpu, wall)


def test_stop_hook_waits_for_running_spawns_then_blocks_with_their_output(cli, runner_project):
    cli("spawn", "sleep 1 summarise the logs", "--as", "bob", "--description", "logs")
    run = cli("hook", "claude-code", "stop", "--as", "bob", "--timeout", "60", input=json.dumps({"stop_hook_active": False}))
    answer = json.loads(run.stdout)
    assert answer["decision"] == "block"
    assert "#1 logs [spawn output]: agent=logs parent=bob" in answer["reason"]
    # everything handed over: now bob may stop
    assert cli("hook", "claude-code", "stop", "--as", "bob", input=json.dumps({"stop_hook_active": True})).stdout == ""


def test_stop_hook_blocks_for_a_still_running_spawn_unless_already_continuing(cli, runner_project):
    cli("spawn", "sleep 30 long job", "--as", "bob", "--description", "long job")
    first = cli("hook", "claude-code", "stop", "--as", "bob", "--timeout", "0.3", input="{}")
    answer = json.loads(first.stdout)
    assert answer["decision"] == "block" and "spawns still running: long-job" in answer["reason"]
    again = cli("hook", "claude-code", "stop", "--as", "bob", "--timeout", "0.3", input=json.dumps({"stop_hook_active": True}))
    assert again.stdout == ""


def test_attention_lists_running_spawns_and_their_parent(cli, runner_project):
    spawn = cli("spawn", "sleep 30 long job", "--as", "bob", "--description", "long job", "--json").json()
    wait_until(lambda: spawn_record(runner_project, spawn["id"]).status == "running")
    block = cli("attention", "--as", "bob", "--json").json()
    assert [s["alias"] for s in block["spawns"]] == ["long-job"]
    assert {"name": "long-job", "kind": "spawn"}.items() <= block["agents"][[a["name"] for a in block["agents"]].index("long-job")].items()
    text = cli("attention", "--as", "carol").stdout
    assert 'long-job — "long job" (spawn of bob, running)' in text


def test_a_profile_spawn_runs_its_model(cli, project):
    spawn = cli("spawn", "what should we measure about rate limits?", "--profile", "researcher", "--as", "alice", "--json").json()
    assert spawn["model"] == "offline" and spawn["runner"] is None
    run = cli("wait", "--as", "alice", "--timeout", "60", "--json")
    [message] = run.json()["messages"]
    assert message["kind"] == "spawn_output" and message["from"] == spawn["alias"] and message["text"]
    assert cli("spawn", "x", "--profile", "nobody").exit_code == 1


def test_demo_spawns_a_helper_whose_output_comes_back(rooms, tmp_path):
    run = rooms("demo", "--only", "messaging", "--dir", str(tmp_path / "demo"), "--json", timeout=120)
    assert run.exit_code == 0, run.stderr
    lines = [e["text"] for e in run.json()["events"] if e["kind"] == "line"]
    assert any("changelog-check [spawn output]: changelog-check here (spawned by you)" in line for line in lines)


def test_a_running_spawn_from_another_machine_is_not_called_lost(rooms, project):
    from rooms_cli.messaging.spawn import Spawn, save_spawn

    save_spawn(project, Spawn(id="s-01remote", parent="alice", alias="remote-job", prompt="x", status="running",
                              created="2026-11-21T10:00:00.000Z", pid=4242, host="another-machine.example"))
    assert rooms("tick", "--json").json()["steps"]["spawns"] == []
    run = rooms("wait", "--as", "alice", "--timeout", "0.5", "--json")
    assert run.exit_code == 4 and run.err_json()["error"]["data"]["pending"][0]["alias"] == "remote-job"
    assert spawn_record(project, "s-01remote").status == "running"


def test_a_missing_runner_program_is_reported_as_a_spawn_error(runner_project):
    from rooms_cli.messaging.spawn import start_spawn
    from rooms_cli.messaging.wait import wait_for_spawns
    from rooms_cli.project.config import load_config

    spawn = start_spawn(runner_project, load_config(runner_project), "alice", "hello", runner=["/nonexistent/agent-cli"])
    assert not wait_for_spawns(runner_project, "alice", timeout=60).timed_out
    [message] = inbox_of(runner_project, "alice")
    assert message.kind == "spawn_error" and "cannot run /nonexistent/agent-cli" in message.text
    assert spawn_record(runner_project, spawn.id).exit_code == 127


def test_sigterm_to_a_spawn_stops_its_runner_and_reports_failed(cli, runner_project):
    spawn = cli("spawn", "sleep 60 forever", "--as", "alice", "--json").json()
    running = wait_until(lambda: (r := spawn_record(runner_project, spawn["id"])).runner_pid and r)
    os.kill(running.pid, signal.SIGTERM)
    run = cli("wait", "--as", "alice", "--timeout", "30", "--json")
    assert run.exit_code == 0, run.stderr
    assert "was killed by signal 15" in run.json()["messages"][0]["text"]
    assert spawn_record(runner_project, spawn["id"]).status == "failed"
    with pytest.raises(ProcessLookupError):
        wait_until(lambda: os.kill(running.runner_pid, 0), timeout=5)


def test_wait_shows_a_live_status_on_a_terminal_and_nothing_extra_when_piped(rooms, cli, runner_project, project_dir):

    cli("spawn", "sleep 30 slow", "--as", "alice")
    status = live_status(project_dir, "wait", "--as", "alice", "--timeout", "2",
                         expect=r"waiting for 1 spawn · \d+s · running: agentb")
    assert status == 4
    piped = rooms("wait", "--as", "alice", "--timeout", "1")
    assert piped.exit_code == 4 and "waiting for" not in piped.stderr and "running:" not in piped.stderr.split("still")[0]
