"""A new user's first chat is heard: agents defined later join the default room, a chat that prompts
nobody says why, @agent for an agent outside the room asks to invite it (never prompts the others),
and an empty room is an error that says how to invite."""

from __future__ import annotations

import sys

import pexpect
from chatkit import records, room, state
from conftest import rooms_env


def fresh(tmp_path, cli, monkeypatch):
    """`rooms init` with no example agents, ROOMS_DIR pointing at it."""
    target = tmp_path / "fresh"
    assert cli("init", str(target)).exit_code == 0
    monkeypatch.setenv("ROOMS_DIR", str(target))
    return target


def test_an_agent_defined_after_init_joins_the_default_room_and_answers_the_first_chat(tmp_path, cli, monkeypatch):
    fresh(tmp_path, cli, monkeypatch)
    assert cli("agent", "new", "helper").exit_code == 0
    run = cli("chat", "hello", "--json")
    assert run.exit_code == 0, run.stderr
    doc = run.json()
    assert doc["eligible"] == ["helper"] and "helper joined the room (defined after it was made)" in doc["notes"]
    assert [r["speaker"] for r in doc["replies"]] == ["helper"]


def test_an_agent_file_written_by_hand_joins_too_but_not_an_idle_one(tmp_path, cli, monkeypatch):
    target = fresh(tmp_path, cli, monkeypatch)
    (target / ".rooms" / "agents" / "helper.md").write_text("---\nid: helper\n---\nYou help.\n")
    (target / ".rooms" / "agents" / "judge.md").write_text("---\nid: judge\nidle: true\n---\nYou judge.\n")
    assert cli("chat", "hello", "--json").json()["eligible"] == ["helper"]
    assert cli("room", "show", "default", "--json").json()["roster"][0]["id"] == "helper"
    assert len(cli("room", "show", "default", "--json").json()["roster"]) == 1


def test_a_kicked_agent_does_not_rejoin_the_default_room_until_invited(project_dir, cli):
    assert cli("room", "kick", "hustler", "--room", "default").exit_code == 0
    cli("chat", "hello", "--room", "default")
    roster = [m["id"] for m in cli("room", "show", "default", "--json").json()["roster"]]
    assert "hustler" not in roster
    assert cli("room", "invite", "hustler", "--room", "default").exit_code == 0
    assert "hustler" not in state_of(project_dir, cli)["kicked"]


def state_of(project_dir, cli):
    from rooms_cli.chat.rooms import load_room
    from rooms_cli.store.paths import open_project

    return load_room(open_project(project_dir), "default").to_json()


def test_a_chat_that_prompts_nobody_says_why_on_stderr_and_in_json_notes(project, cli):
    room(project, agents=["ops"])
    cli("room", "mute", "ops", "--room", "sync")
    run = cli("chat", "anyone around?", "--room", "sync")
    assert run.exit_code == 0 and "nobody was prompted (ops: muted)" in run.stderr
    doc = cli("chat", "anyone around?", "--room", "sync", "--json").json()
    assert doc["eligible"] == [] and doc["notes"] == ["nobody was prompted (ops: muted)"]


def test_mentioning_an_agent_outside_the_room_asks_to_invite_it_and_prompts_nobody_else(project, cli):
    room(project)  # the dev agents; judge exists but is not in it
    before = records(project)
    run = cli("chat", "@judge who is right?", "--room", "sync")
    assert run.exit_code == 1
    assert "judge is not in room 'sync'" in run.stderr and "rooms room invite judge --room sync" in run.stderr
    assert records(project) == before  # nothing posted, nobody prompted
    err = cli("chat", "@judge who is right?", "--room", "sync", "--json")
    assert '"code": "not_in_room"' in err.stderr and '"agents": ["judge"]' in err.stderr


def test_chat_mode_invites_the_outside_agent_on_confirmation(project_dir, project):
    room(project)
    env = rooms_env({"ROOMS_DIR": str(project_dir), "NO_COLOR": "1", "TERM": "xterm", "ROOMS_AGENT": "alice"})
    child = pexpect.spawn(sys.executable, ["-m", "rooms_cli", "chat", "--room", "sync"], env=env, encoding="utf-8",
                          timeout=30, dimensions=(40, 200))
    child.expect("sync> ")
    child.sendline("@judge first question")
    child.expect(r"judge is not in room sync; invite and send\? \[y/N\] ")
    child.sendline("n")
    child.expect("Not sent.")
    child.expect("sync> ")
    child.sendline("@judge who is right?")
    child.expect(r"invite and send\? \[y/N\] ")
    child.sendline("y")
    child.expect("judge joined sync")
    child.expect("judge")  # its answer (a message, or an action line on the offline model)
    child.expect("sync> ")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    assert "judge" in state(project).roster
    said = [(m.speaker, m.text) for m in records(project) if m.speaker not in ("rooms",) and m.kind != "join"]
    assert said[0] == ("alice", "@judge who is right?") and {s for s, _ in said[1:]} == {"judge"}


def test_kicking_the_last_agent_warns_and_a_chat_in_the_empty_room_says_how_to_invite(project, cli):
    room(project, agents=["ops", "architect"])
    assert "warning" not in cli("room", "kick", "architect", "--room", "sync", "--json").json()
    kick = cli("room", "kick", "ops", "--room", "sync")
    assert kick.exit_code == 0 and "warning: room 'sync' has no agents left" in kick.stderr
    before = records(project)
    run = cli("chat", "hello?", "--room", "sync")
    assert run.exit_code == 1
    assert run.stderr.strip() == ("error: room 'sync' has no agents, so nobody can answer; invite one first: "
                                  "rooms room invite AGENT --room sync (or /invite AGENT)")
    assert records(project) == before
