"""`rooms group …` through the real command line: broadcast, wait, reply from other processes,
persistence across processes, nesting, presets, ephemeral groups, status."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import live_status, rooms_env

import rooms_cli
from rooms_cli.agents.definitions import Agent, create_agent
from rooms_cli.messaging.inbox import read_inbox

FOUR = ("--output-format", "one line", "--tool-guidance", "none", "--boundaries", "no edits")


def external(project, *ids):
    for agent_id in ids:
        create_agent(project, Agent(id=agent_id, directive="An outside coding agent.", model="external"))


def bcast(cli, name, objective="what now?"):
    run = cli("group", "broadcast", name, "--objective", objective, *FOUR, "--json")
    assert run.exit_code == 0, run.stderr
    return run.json()["broadcast_id"]


def events(project_dir, name):
    return [json.loads(line) for line in (Path(project_dir) / ".rooms" / "groups" / f"{name}.jsonl").read_text().splitlines() if line.strip()]


def popen(*args):
    return subprocess.Popen([sys.executable, "-m", "rooms_cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=rooms_env())


# -- broadcast -------------------------------------------------------------------------------

def test_broadcast_requires_all_four_fields_but_allows_empty_strings(project, cli):
    cli("group", "spawn", "g", "--profile", "analyst")
    missing = cli("group", "broadcast", "g", "--objective", "x", "--output-format", "", "--tool-guidance", "")
    assert missing.exit_code == 2 and "--boundaries" in missing.stderr
    ok = cli("group", "broadcast", "g", "--objective", "x", "--output-format", "", "--tool-guidance", "", "--boundaries", "")
    assert ok.exit_code == 0, ok.stderr


def test_broadcast_puts_one_tagged_envelope_with_the_four_fields_in_each_member_inbox(project, cli):
    external(project, "coder")
    cli("group", "spawn-mixed", "rev", "--profiles", "reviewer,coder")
    bid = bcast(cli, "rev", "review PR 214")
    for agent in ("reviewer", "coder"):
        (msg,) = [m for m in read_inbox(project, agent) if m.kind == "group"]
        assert msg.tag == f"group:rev/broadcast:{bid}"
        assert {k: msg.meta[k] for k in ("objective", "output_format", "tool_guidance", "boundaries")} == {
            "objective": "review PR 214", "output_format": "one line", "tool_guidance": "none", "boundaries": "no edits"}
        assert "objective: review PR 214" in msg.text and "boundaries: no edits" in msg.text


def test_a_second_broadcast_while_one_is_in_flight_is_refused_with_exit_3(project, cli):
    cli("group", "spawn", "g", "--profile", "analyst")
    first = bcast(cli, "g")
    again = cli("group", "broadcast", "g", "--objective", "y", *FOUR, "--json")
    assert again.exit_code == 3
    err = again.err_json()["error"]
    assert err["code"] == "broadcast_in_flight" and first in err["message"]
    assert cli("group", "wait", "g").exit_code == 0
    bcast(cli, "g")  # gathered: the slot is free again


def test_cancel_frees_the_slot_and_tells_pending_external_members(project, cli):
    external(project, "coder")
    cli("group", "spawn-mixed", "g", "--profiles", "coder,analyst")
    bid = bcast(cli, "g")
    run = cli("group", "cancel", "g", "--json")
    assert run.exit_code == 0 and run.json()["status"] == "cancelled"
    (cancel,) = [m for m in read_inbox(project, "coder") if m.kind == "group_cancel"]
    assert cancel.tag == f"group:g/cancel:{bid}"
    assert cli("group", "wait", "g").exit_code == 3  # there is no result for a cancelled broadcast
    bcast(cli, "g")


# -- wait ------------------------------------------------------------------------------------

def test_wait_result_json_has_exactly_the_documented_shape(project, cli):
    cli("group", "spawn-mixed", "g", "--profiles", "analyst,wildcard")
    bid = bcast(cli, "g")
    data = cli("group", "wait", "g", "--json").json()
    assert set(data) == {"broadcast_id", "by_member", "reduced", "metadata", "order"}
    assert data["broadcast_id"] == bid
    assert set(data["by_member"]) == {"analyst", "wildcard"}
    assert all(set(r) == {"text", "status", "elapsed_s"} and r["status"] == "ok" for r in data["by_member"].values())
    assert {"reducer", "elapsed_s", "replied", "members"} <= set(data["metadata"])
    assert data["metadata"]["reducer"] == "concat" and data["metadata"]["replied"] == 2 and data["metadata"]["members"] == 2
    assert sorted(data["order"]) == ["analyst", "wildcard"]
    assert data["reduced"] == "\n\n".join(f"## {h}\n{data['by_member'][h]['text']}" for h in data["order"])


def test_wait_all_timeout_returns_what_arrived_marks_the_rest_timeout_and_exits_4(project, cli):
    external(project, "coder", "tester")
    cli("group", "spawn-mixed", "g", "--profiles", "analyst,coder,tester")
    bcast(cli, "g")
    assert cli("group", "reply", "g", "--as", "tester", "all green").exit_code == 0
    run = cli("group", "wait", "g", "--timeout", "0.3", "--json")
    assert run.exit_code == 4
    data = run.json()
    assert data["metadata"]["timed_out"] is True
    assert data["by_member"]["coder"]["status"] == "timeout"
    assert data["by_member"]["tester"] == {"text": "all green", "status": "ok", "elapsed_s": data["by_member"]["tester"]["elapsed_s"]}
    assert data["by_member"]["analyst"]["status"] == "ok"
    assert "all green" in data["reduced"]
    status = cli("group", "status", "g", "--json").json()
    assert status["label"] == "▣ g [0/3 ⛔]"  # coder never answered: lost


def test_external_members_reply_from_separate_processes_while_wait_runs(project, cli, rooms):
    external(project, "ext1", "ext2", "ext3")
    cli("group", "spawn-mixed", "g", "--profiles", "ext1,ext2,ext3,analyst")
    bcast(cli, "g")
    waiter = popen("group", "wait", "g", "--timeout", "60", "--reducer", "join_by_handle", "--json")
    time.sleep(0.3)
    repliers = [popen("group", "reply", "g", "--as", h, f"answer from {h}") for h in ("ext1", "ext2", "ext3")]
    for proc in repliers:
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
    out, err = waiter.communicate(timeout=60)
    assert waiter.returncode == 0, err
    data = json.loads(out)
    assert {h: data["reduced"][h] for h in ("ext1", "ext2", "ext3")} == {h: f"answer from {h}" for h in ("ext1", "ext2", "ext3")}
    assert "analyst" in data["reduced"]
    replies = [e for e in events(project.root, "g") if e["ev"] == "reply"]
    assert sorted(e["handle"] for e in replies) == ["analyst", "ext1", "ext2", "ext3"]


def test_wait_any_returns_the_first_reply_cancels_losers_and_drops_a_late_reply(project, cli):
    external(project, "fast", "slow")
    cli("group", "spawn-mixed", "race", "--profiles", "fast,slow")
    bid = bcast(cli, "race")
    cli("group", "reply", "race", "--as", "fast", "42")
    data = cli("group", "wait", "race", "--any", "--json").json()
    assert data["reduced"] == "42" and data["metadata"]["winner_handle"] == "fast" and data["order"] == ["fast"]
    assert data["by_member"]["slow"]["status"] == "cancelled"
    (cancel,) = [m for m in read_inbox(project, "slow") if m.kind == "group_cancel"]
    assert cancel.tag == f"group:race/cancel:{bid}"
    assert not [m for m in read_inbox(project, "fast") if m.kind == "group_cancel"]
    late = cli("group", "reply", "race", "--as", "slow", "41", "--json")
    assert late.exit_code == 0 and late.json()["accepted"] is False and late.json()["dropped"] is True
    assert [e["text"] for e in events(project.root, "race") if e["ev"] == "dropped"] == ["41"]
    again = cli("group", "wait", "race", "--json").json()  # the recorded result, unchanged
    assert again["reduced"] == "42"


def test_wait_any_no_cancel_losers_sends_no_cancel_envelope(project, cli):
    external(project, "fast", "slow")
    cli("group", "spawn-mixed", "race", "--profiles", "fast,slow")
    bcast(cli, "race")
    cli("group", "reply", "race", "--as", "fast", "42")
    data = cli("group", "wait", "race", "--any", "--no-cancel-losers", "--json").json()
    assert data["by_member"]["slow"]["status"] == "pending"
    assert not [m for m in read_inbox(project, "slow") if m.kind == "group_cancel"]


def test_a_cancel_from_another_shell_stops_a_running_wait(project, cli):
    external(project, "coder")
    cli("group", "spawn", "g", "--profile", "coder")
    bcast(cli, "g")
    waiter = popen("group", "wait", "g", "--timeout", "60")
    time.sleep(0.5)
    assert cli("group", "cancel", "g").exit_code == 0
    waiter.communicate(timeout=30)
    assert waiter.returncode == 3


def test_reply_refuses_model_backed_members_and_strangers(project, cli):
    cli("group", "spawn", "g", "--profile", "analyst")
    bcast(cli, "g")
    model = cli("group", "reply", "g", "--as", "analyst", "hi")
    assert model.exit_code == 1 and "model: external" in model.stderr
    stranger = cli("group", "reply", "g", "--as", "nobody", "hi")
    assert stranger.exit_code == 1 and "not a member" in stranger.stderr


def test_groups_defaults_set_the_reducer_and_the_timeout(project_dir, project, cli):
    external(project, "coder")
    with open(project_dir / ".rooms.yaml", "a") as fh:
        fh.write("\ngroups:\n  defaults: {broadcast_timeout: 0.2, default_reducer: join_by_handle}\n")
    cli("group", "spawn-mixed", "g", "--profiles", "analyst,coder")
    bcast(cli, "g")
    run = cli("group", "wait", "g", "--json")
    assert run.exit_code == 4
    assert run.json()["metadata"]["reducer"] == "join_by_handle"
    assert set(run.json()["reduced"]) == {"analyst"}


# -- persistence ----------------------------------------------------------------------------

def test_replay_skips_a_torn_last_line_with_a_warning_and_the_next_append_repairs_it(project_dir, project, rooms):
    rooms("group", "spawn-mixed", "g", "--profiles", "analyst,wildcard")
    path = project_dir / ".rooms" / "groups" / "g.jsonl"
    with open(path, "ab") as fh:
        fh.write(b'{"ev": "member_added", "handle": "half')
    run = rooms("group", "status", "g", "--json")
    assert run.exit_code == 0
    assert [m["handle"] for m in run.json()["members"]] == ["analyst", "wildcard"]
    assert "unfinished last line" in run.stderr
    assert rooms("group", "spawn", "g", "--profile", "boss").exit_code == 0
    assert [m["handle"] for m in rooms("group", "status", "g", "--json").json()["members"]] == ["analyst", "wildcard", "boss"]
    assert all(json.loads(line) for line in path.read_text().splitlines())


def test_rename_move_and_dissolve_persist_across_processes(project_dir, rooms):
    assert rooms("group", "spawn-mixed", "rev", "--profiles", "reviewer,architect,ops").exit_code == 0
    assert rooms("group", "broadcast", "rev", "--objective", "x", *FOUR).exit_code == 0
    assert rooms("group", "wait", "rev").exit_code == 0
    assert rooms("group", "rename", "rev", "reviewers").exit_code == 0
    assert rooms("group", "move-member", "ops", "--from", "reviewers", "--to", "oncall").exit_code == 0
    listed = {g["name"]: g for g in rooms("group", "list", "--json").json()}
    assert set(listed) == {"reviewers", "oncall"}
    assert listed["reviewers"]["members"] == ["reviewer", "architect"] and listed["reviewers"]["broadcasts"] == 1
    assert listed["oncall"]["members"] == ["ops"]
    assert rooms("group", "status", "rev").exit_code == 1
    assert rooms("group", "dissolve", "oncall").exit_code == 0
    assert [g["name"] for g in rooms("group", "list", "--json").json()] == ["reviewers"]
    tombstone = [json.loads(line) for line in (project_dir / ".rooms" / "groups" / "oncall.jsonl").read_text().splitlines()]
    assert tombstone[-1]["ev"] == "dissolved"  # kept so that a clone appending to it still merges in git
    assert rooms("group", "status", "oncall").exit_code == 1
    taken = rooms("group", "rename", "reviewers", "reviewers", "--json")
    assert taken.exit_code == 3


def test_move_member_refuses_a_member_still_working_on_a_broadcast(project, cli):
    external(project, "coder")
    cli("group", "spawn-mixed", "a", "--profiles", "coder,analyst")
    bcast(cli, "a")
    run = cli("group", "move-member", "coder", "--from", "a", "--to", "b")
    assert run.exit_code == 3


# -- nesting ---------------------------------------------------------------------------------

def test_a_nested_group_member_replies_with_its_sub_groups_reduced_result(project, cli):
    cli("group", "spawn-mixed", "inner", "--profiles", "analyst,wildcard")
    cli("group", "spawn", "outer", "--profile", "group:inner")
    cli("group", "spawn", "outer", "--profile", "boss")
    bcast(cli, "outer")
    data = cli("group", "wait", "outer", "--reducer", "join_by_handle", "--json").json()
    inner = cli("group", "wait", "inner", "--json").json()  # the sub-broadcast's recorded result
    assert data["by_member"]["inner"]["status"] == "ok"
    assert data["reduced"]["inner"] == inner["reduced"]
    assert set(inner["by_member"]) == {"analyst", "wildcard"}


def test_nesting_is_one_level_deep(project, cli):
    cli("group", "spawn", "leaf", "--profile", "analyst")
    cli("group", "spawn", "mid", "--profile", "group:leaf")
    deeper = cli("group", "spawn", "top", "--profile", "group:mid")
    assert deeper.exit_code == 1 and "cannot contain a group" in deeper.stderr
    cli("group", "spawn", "top", "--profile", "group:leaf")
    cli("group", "spawn", "other", "--profile", "analyst")
    grow = cli("group", "spawn", "leaf", "--profile", "group:other")
    assert grow.exit_code == 1 and "one level deep" in grow.stderr
    itself = cli("group", "spawn", "leaf", "--profile", "group:leaf")
    assert itself.exit_code == 1


# -- presets ---------------------------------------------------------------------------------

def test_spawn_mixed_from_an_inline_preset_and_from_an_overlay(project_dir, cli):
    with open(project_dir / ".rooms.yaml", "a") as fh:
        fh.write("\ngroups:\n  presets:\n    code_audit: {profiles: [reviewer, architect]}\n")
    (project_dir / ".rooms" / "groups" / "panel.yaml").write_text("profiles: [boss, writer, writer]\n")
    assert cli("group", "spawn-mixed", "a", "--preset", "code_audit").exit_code == 0
    data = cli("group", "spawn-mixed", "p", "--preset", "panel", "--json").json()
    assert [m["handle"] for m in data["members"]] == ["boss", "writer", "writer-2"]


def test_a_preset_defined_inline_and_as_an_overlay_is_a_loud_error_naming_both(project_dir, cli):
    with open(project_dir / ".rooms.yaml", "a") as fh:
        fh.write("\ngroups:\n  presets:\n    code_audit: {profiles: [reviewer]}\n")
    (project_dir / ".rooms" / "groups" / "code_audit.yaml").write_text("profiles: [ops]\n")
    run = cli("group", "spawn-mixed", "a", "--preset", "code_audit")
    assert run.exit_code == 1
    assert "groups.presets.code_audit" in run.stderr and ".rooms/groups/code_audit.yaml" in run.stderr


# -- ephemeral -------------------------------------------------------------------------------

def _group_files(project_dir):
    return sorted(p.name for p in (project_dir / ".rooms" / "groups").iterdir())


def test_ephemeral_group_leaves_no_file_behind(project_dir, project):
    async def scenario():
        async with rooms_cli.ephemeral_group(profiles=["analyst", "analyst", "wildcard"], project=project) as g:
            assert _group_files(project_dir)
            await g.broadcast(objective="YES or NO?", output_format="", tool_guidance="", boundaries="")
            return (await g.wait_all(reducer="majority_vote")).reduced

    assert asyncio.run(scenario())
    assert _group_files(project_dir) == []


def test_ephemeral_group_leaves_no_file_behind_when_the_body_raises(project_dir, project):
    external(project, "coder")

    async def scenario():
        async with rooms_cli.ephemeral_group(profiles=["coder", "analyst"], project=project) as g:
            await g.broadcast(objective="x", output_format="", tool_guidance="", boundaries="")
            raise RuntimeError("the workflow failed")

    with pytest.raises(RuntimeError, match="workflow failed"):
        asyncio.run(scenario())
    assert _group_files(project_dir) == []
    # the external member was told to stop; the model-backed one got nothing (no trace)
    assert [m.kind for m in read_inbox(project, "coder")] == ["group", "group_cancel"]
    assert not (project_dir / ".rooms" / "inbox" / "analyst.jsonl").exists()


def test_group_ask_answers_and_leaves_no_file_behind(project_dir, cli):
    run = cli("group", "ask", "--profiles", "analyst,analyst,wildcard", "--objective", "ship it? YES or NO or ABSTAIN",
              "--reducer", "majority_vote", "--json")
    assert run.exit_code == 0, run.stderr
    data = run.json()
    # the offline model votes too: one of the options, the same for the two members of one profile
    assert data["reduced"] in ("YES", "NO", "ABSTAIN") and data["by_member"]["analyst"]["text"].startswith(data["reduced"])
    assert data["metadata"]["parsed"] == 3 and data["metadata"]["votes"][data["reduced"]] >= 2
    assert _group_files(project_dir) == []


# -- status ----------------------------------------------------------------------------------

def test_status_label_shows_busy_members_and_the_broadcast_in_flight(project, cli):
    external(project, "coder")
    cli("group", "spawn-mixed", "g", "--profiles", "coder,analyst")
    assert cli("group", "status", "g", "--json").json()["label"] == "▣ g [0/2 ✓]"
    bid = bcast(cli, "g")
    info = cli("group", "status", "g", "--json").json()
    assert info["label"] == "▣ g [2/2 ⏳]"
    assert info["in_flight"]["broadcast_id"] == bid and info["in_flight"]["pending"] == ["coder", "analyst"]
    cli("group", "reply", "g", "--as", "coder", "done")
    assert cli("group", "status", "g", "--json").json()["label"] == "▣ g [1/2 ⏳]"
    cli("group", "wait", "g")
    info = cli("group", "status", "g", "--json").json()
    assert info["label"] == "▣ g [0/2 ✓]" and info["in_flight"] is None
    assert info["recent"][0]["broadcast_id"] == bid and info["recent"][0]["status"] == "gathered"


def test_a_member_whose_agent_was_deleted_is_lost(project_dir, project, cli):
    external(project, "coder")
    cli("group", "spawn-mixed", "g", "--profiles", "coder,analyst")
    (project_dir / ".rooms" / "agents" / "coder.md").unlink()
    info = cli("group", "status", "g", "--json").json()
    assert info["label"] == "▣ g [0/2 ⛔]"
    assert {m["handle"]: m["state"] for m in info["members"]} == {"coder": "lost", "analyst": "idle"}


def test_bad_names_are_refused_before_any_path_is_built(project, cli):
    run = cli("group", "spawn", "../x", "--profile", "analyst")
    assert run.exit_code == 1 and "invalid group name" in run.stderr
    assert cli("group", "spawn", "g", "--profile", "analyst", "--handle", "A/B").exit_code == 1
    assert cli("group", "spawn", "g", "--profile", "nobody").exit_code == 1


def test_every_group_command_has_an_example_in_its_help(cli):
    from rooms_cli.cli.group_cmd import group_app

    for command in group_app.registered_commands:
        assert "Example: rooms group" in (command.callback.__doc__ or ""), command.name


def test_group_help_does_not_import_httpx(rooms):
    code = "import sys, runpy; sys.argv=['rooms','group','--help']\ntry:\n    runpy.run_module('rooms_cli', run_name='__main__')\nexcept SystemExit: pass\nprint('httpx' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=rooms_env(), timeout=60)
    assert proc.stdout.strip().splitlines()[-1] == "False"


# -- examples and demo ----------------------------------------------------------------------

EXAMPLES = {
    "multi_lens_audit.py": "reviewer:",
    "fastest_answer_race.py": "winner: ",
    "cross_provider_consensus.py": "oracle-1:",
    "generate_and_pick.py": "picked: ",
    "persona_panel.py": "ranked best by the panel: ",
}


@pytest.mark.parametrize("script", sorted(EXAMPLES))
def test_each_example_pattern_runs_on_the_offline_model(project_dir, script):
    from conftest import REPO

    from rooms_cli.project.init import initialize

    initialize(project_dir, example="gamedev")  # the persona panel's engineer and designer
    proc = subprocess.run([sys.executable, str(REPO / "examples" / "groups" / script)], capture_output=True, text=True,
                          env=rooms_env({"ROOMS_DIR": str(project_dir)}), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert EXAMPLES[script] in proc.stdout


def test_demo_shows_a_group_vote_and_a_race(tmp_path, cli):
    run = cli("demo", "--dir", str(tmp_path / "demo"), "--only", "groups", "--json")
    assert run.exit_code == 0, run.stderr
    texts = [e["text"] for e in run.json()["events"]]
    assert any("majority:" in t for t in texts) and any(t.startswith("winner ") for t in texts)
    assert any("dropped:" in t for t in texts)


def test_waiting_again_with_another_reducer_re_reduces_the_recorded_replies(project, cli):
    cli("group", "spawn-mixed", "g", "--profiles", "analyst,wildcard,boss")
    bcast(cli, "g")
    first = cli("group", "wait", "g", "--reducer", "join_by_handle", "--json").json()
    ranked = cli("group", "wait", "g", "--reducer", "rank", "--json").json()
    assert ranked["broadcast_id"] == first["broadcast_id"] and ranked["by_member"] == first["by_member"]
    assert ranked["reduced"] == first["reduced"][ranked["metadata"]["winner_handle"]]
    assert cli("group", "wait", "g", "--json").json()["metadata"]["reducer"] == "join_by_handle"  # the record is unchanged


def test_a_second_waiter_follows_the_first_and_returns_the_same_result(project, cli):
    external(project, "coder")
    cli("group", "spawn-mixed", "g", "--profiles", "coder,analyst")
    bcast(cli, "g")
    first = popen("group", "wait", "g", "--timeout", "60", "--json")
    time.sleep(0.4)
    second = popen("group", "wait", "g", "--timeout", "60", "--json")
    time.sleep(0.4)
    assert cli("group", "reply", "g", "--as", "coder", "done").exit_code == 0
    out1, err1 = first.communicate(timeout=60)
    out2, err2 = second.communicate(timeout=60)
    assert first.returncode == 0 and second.returncode == 0, (err1, err2)
    assert json.loads(out1) == json.loads(out2)
    assert len([e for e in events(project.root, "g") if e["ev"] == "reply" and e["handle"] == "analyst"]) == 1


def test_replies_racing_from_many_processes_are_all_recorded_once(project, cli):
    handles = [f"ext{i}" for i in range(5)]
    external(project, *handles)
    cli("group", "spawn-mixed", "g", "--profiles", ",".join(handles))
    bcast(cli, "g")
    procs = [popen("group", "reply", "g", "--as", h, f"from {h}") for h in handles + handles[:2]]
    for proc in procs:
        proc.communicate(timeout=60)
        assert proc.returncode == 0
    evs = events(project.root, "g")
    assert sorted(e["handle"] for e in evs if e["ev"] == "reply") == sorted(handles)
    assert sorted(e["handle"] for e in evs if e["ev"] == "dropped") == sorted(handles[:2])  # the second reply of each


def test_killing_repliers_at_random_moments_loses_no_acknowledged_reply(project, cli):
    import random
    import signal

    from rooms_cli.store import jsonl

    handles = [f"ext{i}" for i in range(6)]
    external(project, *handles)
    cli("group", "spawn-mixed", "g", "--profiles", ",".join(handles))
    bcast(cli, "g")
    procs = {h: popen("group", "reply", "g", "--as", h, f"from {h} " + "x" * 2000) for h in handles}
    chance = random.Random(7)
    for h in handles[::2]:
        time.sleep(chance.uniform(0.0, 0.4))
        procs[h].send_signal(signal.SIGKILL)
    acknowledged = {h for h, p in procs.items() if p.wait(timeout=60) == 0}
    scan = jsonl.scan(project.path("groups", "g.jsonl"))
    assert not scan.bad
    replied = {e["handle"] for e in scan.records if e["ev"] == "reply"}
    assert acknowledged <= replied
    assert cli("group", "status", "g", "--json").exit_code == 0


def test_watch_shows_a_join_by_handle_result_as_text_and_json_under_json(project, cli):
    external(project, "sec", "perf")
    cli("group", "spawn-mixed", "g", "--profiles", "sec,perf")
    bcast(cli, "g")
    assert cli("group", "reply", "g", "--as", "sec", "ship it").exit_code == 0
    assert cli("group", "reply", "g", "--as", "perf", "wait a day").exit_code == 0
    assert cli("group", "wait", "g", "--reducer", "join_by_handle").exit_code == 0
    shown = cli("watch", "--groups", "--last", "1", "--timeout", "0.2")
    assert shown.exit_code == 0, shown.stderr
    assert "join_by_handle 2/2 replied: sec: ship it · perf: wait a day" in shown.stdout
    assert "{" not in shown.stdout
    doc = json.loads(cli("watch", "--groups", "--last", "1", "--timeout", "0.2", "--json").stdout)
    assert doc["reduced"] == {"sec": "ship it", "perf": "wait a day"}


def test_group_wait_shows_live_status_on_a_terminal_and_nothing_extra_when_piped(project, project_dir, rooms):


    external(project, "sec", "perf")
    for handle in ("sec", "perf"):
        assert rooms("group", "spawn", "g", "--profile", handle).exit_code == 0
    assert rooms("group", "broadcast", "g", "--objective", "ship?", *FOUR).exit_code == 0
    assert rooms("group", "reply", "g", "--as", "sec", "ship it").exit_code == 0
    status = live_status(project_dir, "group", "wait", "g", "--timeout", "2", expect=r"▣ g · \d+s · answered: sec · pending: perf")
    assert status == 4  # perf never answered
    piped = rooms("group", "status", "g", "--json")  # the broadcast was gathered by the terminal run
    assert piped.exit_code == 0
    assert rooms("group", "broadcast", "g", "--objective", "again?", *FOUR).exit_code == 0
    quiet = rooms("group", "wait", "g", "--timeout", "1")
    assert quiet.exit_code == 4 and "pending:" not in quiet.stderr and "answered:" not in quiet.stderr


def test_group_ask_shows_live_status_on_a_terminal_and_nothing_extra_when_piped(project, project_dir, rooms):


    external(project, "coder")  # never answers: the ask times out with analyst answered, coder pending
    status = live_status(project_dir, "group", "ask", "--profiles", "coder,analyst", "--objective", "ship?", "--timeout", "2",
                         expect=r"▣ eph-\S+ · \d+s · answered: analyst · pending: coder")
    assert status == 4
    quiet = rooms("group", "ask", "--profiles", "coder,analyst", "--objective", "ship?", "--timeout", "1")
    assert quiet.exit_code == 4 and "pending:" not in quiet.stderr and "answered:" not in quiet.stderr
    assert _group_files(project_dir) == []


@pytest.mark.parametrize("result", [[], "x", {"by_member": []}, {"by_member": {"a": 1}}, {"metadata": 3}])
def test_a_gathered_result_that_is_not_a_mapping_is_one_sentence_not_a_crash(project, cli, result):
    """Found by tests/test_fuzz_parsers.py: `result: []` in a hand-edited log made `group status` raise AttributeError.
    The reader, doctor and the writer make one check (store/schema.py): rooms never writes such an event."""
    from rooms_cli.core.errors import InvalidData
    from rooms_cli.groups import log
    from rooms_cli.store import jsonl
    from rooms_cli.store.ids import new_id

    asyncio.run(rooms_cli.spawn_group("edited", ["researcher"], project=project))
    bid = new_id("b")
    fields = {"objective": "answer", "output_format": "", "tool_guidance": "", "boundaries": ""}
    log.append(project, "edited",
               log.event("broadcast", id=bid, fields=fields, members=[{"handle": "researcher", "profile": "researcher"}], sender="you"),
               lock=True)
    bad = log.event("gathered", id=bid, result=result)
    with pytest.raises(InvalidData, match="field 'result'"):
        log.append(project, "edited", bad, lock=True)
    jsonl.append_many(log.log_path(project, "edited"), [bad])  # a hand edit
    out = cli("group", "status", "edited", "--json")
    assert out.exit_code == 1, out
    error = json.loads(out.stderr)["error"]
    assert error["code"] != "internal" and "'gathered' event" in error["message"] and "field 'result'" in error["message"]
    doctor = cli("doctor", "--json")
    assert "groups/edited.jsonl" in doctor.stdout, doctor
