"""`rooms chat`, `rooms transcript` and `rooms room …` through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chatkit import records, room, state

from rooms_cli.chat.slash import COMMANDS


def test_chat_json_document_has_the_documented_shape(project, cli):
    room(project)
    run = cli("chat", "--room", "sync", "--as", "alice", "How should we design the auth middleware?", "--json")
    assert run.exit_code == 0, run.stderr
    data = run.json()
    assert set(data) >= {"room", "message", "mode", "eligible", "replies", "budget", "queued", "exhausted"}
    assert data["room"] == "sync" and data["mode"] == "open" and data["message"]["speaker"] == "alice"
    assert data["eligible"] == ["architect", "researcher", "reviewer", "ops"]
    assert [r["kind"] for r in data["replies"]] == ["message", "pass", "pass", "pass"]
    assert data["budget"] == {"remaining": 5, "total": 6} and data["queued"] == [] and data["exhausted"] is False


def test_chat_prints_replies_and_pass_lines_for_people(project, cli):
    room(project)
    run = cli("chat", "--room", "sync", "How should we design the auth middleware?")
    assert run.exit_code == 0
    lines = run.stdout.splitlines()
    assert lines[0].startswith("architect: ")
    assert all(line.startswith("  * ") for line in lines[1:4]), run.stdout
    assert "/pass" not in run.stdout


def test_explain_shows_scores_and_reasons_and_writes_nothing(project, cli):
    room(project, agents=["scribe", "ops", "architect"])
    room_file = Path(project.path("rooms", "sync", "state.jsonl")).read_bytes()
    run = cli("chat", "--room", "sync", "--explain", "deploy latency", "--json")
    data = run.json()
    assert data["eligible"] == ["ops", "architect"] and data["filtered"]["scribe"].startswith("quiet")
    assert data["scores"]["ops"] > 0
    human = cli("chat", "--room", "sync", "--dry-run", "@reseacher hi")
    assert "no agent matches @reseacher" in human.stdout or "not in this room" in human.stdout
    assert records(project) == [] and Path(project.path("rooms", "sync", "state.jsonl")).read_bytes() == room_file


def test_unknown_slash_command_is_a_usage_error_listing_the_valid_ones(project, cli):
    run = cli("chat", "/frobnicate")
    assert run.exit_code == 2
    assert "unknown command /frobnicate" in run.stderr and "/continue" in run.stderr and "/whois" in run.stderr


@pytest.mark.parametrize("line", ["/mute", "/kick a b", "/drop --force", "/help me"])
def test_slash_commands_check_their_arguments(project, cli, line):
    assert cli("chat", line).exit_code == 2


def test_every_slash_command_works_inside_chat(project, cli):
    room(project)

    def slash(line):
        run = cli("chat", "--room", "sync", "--as", "alice", line, "--json")
        assert run.exit_code == 0, (line, run.stderr)
        return run.json()

    assert set(slash("/help")["result"]["commands"]) == {f"/{c}" for c in COMMANDS}
    assert slash("/mute ops")["result"]["mute_list"] == ["ops"]
    assert slash("/unmute @ops")["result"]["mute_list"] == []
    assert "judge" in slash("/invite judge")["result"]["roster"]
    assert slash("/whois reseacher")["result"]["id"] == "researcher"
    assert "judge" not in slash("/kick judge")["result"]["roster"]
    assert slash("/list")["result"]["budget"] == {"remaining": 6, "total": 6}
    assert "sync" in [r["id"] for r in slash("/rooms")["result"]["rooms"]]
    assert slash("/save")["result"]["path"].startswith(".rooms/chat/sync/s-")  # one file per save: saves merge in git
    assert slash("/continue")["turn"]["budget"]["remaining"] == 6
    for leave in ("/leave", "/quit"):  # only chat mode has something to leave
        run = cli("chat", "--room", "sync", "--as", "alice", leave)
        assert run.exit_code == 2 and "this is not chat mode: there is nothing to leave" in run.stderr
        assert "Left chat mode" not in run.stdout
    assert slash("/join other")["result"]["outcome"] == "created"
    assert slash("/handoff ops")["result"]["agent"] == "ops"
    assert slash("/halt")["result"]["status"] == "halted"
    assert slash("/join sync")["result"]["outcome"] == "revived"
    assert slash("/drop --no-save")["result"] == {"room": "sync", "status": "dropped", "saved": None, "changed": True}


def test_room_subcommands(project, cli):
    assert cli("room", "create", "sync", "--agent", "ops", "--agent", "reviewer").exit_code == 0
    assert cli("room", "create", "sync").exit_code == 3, "the name is taken"
    assert cli("room", "use", "sync").exit_code == 0
    shown = cli("room", "show", "--json").json()
    assert shown["id"] == "sync" and [m["id"] for m in shown["roster"]] == ["ops", "reviewer"]
    assert cli("room", "mute", "ops").exit_code == 0 and state(project).muted == ["ops"]
    assert cli("room", "unmute", "ops").exit_code == 0 and state(project).muted == []
    assert cli("room", "invite", "architect").exit_code == 0
    assert cli("room", "kick", "architect").exit_code == 0
    assert cli("chat", "--as", "alice", "@ops deploy?").exit_code == 0
    assert cli("room", "handoff", "ops", "--json").json()["agent"] == "ops"
    assert cli("room", "continue", "--json").json()["turn"]["budget"]["remaining"] == 6
    assert cli("room", "save", "--json").json()["messages"] > 0
    assert cli("room", "drop", "--json").json()["saved"]["path"].startswith(".rooms/chat/sync/s-")
    assert [r["id"] for r in cli("room", "list", "--json").json()] == ["default"]
    assert "sync" in [r["id"] for r in cli("room", "list", "--all", "--json").json()]
    stopped = cli("chat", "hello")
    assert stopped.exit_code == 3 and "rooms room join chat/sync" in stopped.stderr
    assert cli("room", "join", "chat/sync", "--json").json()["outcome"] == "rehydrated"
    assert cli("chat", "hello again").exit_code == 0


def test_transcript_lists_messages_and_last_n(project, cli):
    room(project)
    cli("chat", "--room", "sync", "--as", "alice", "@ops deploy latency?")
    all_ = cli("transcript", "--room", "sync", "--json").json()
    assert [m["speaker"] for m in all_] == ["alice", "ops"]
    assert cli("transcript", "--room", "sync", "--last", "1", "--json").json() == all_[-1:]
    human = cli("transcript", "--room", "sync")
    assert "alice: @ops deploy latency?" in human.stdout


@pytest.mark.parametrize(("args", "code", "words"), [
    (["chat", "--room", "../x", "hi"], 2, "invalid room id"),  # a bad option value
    (["chat", "--room", "nope", "hi"], 1, "no room 'nope'"),
    (["room", "invite", "ghost"], 1, "no agent 'ghost'"),
    (["room", "kick", "judge"], 1, "judge is not in room"),
    (["room", "use", "nope"], 1, "no room"),
    (["room", "join", "a/b"], 1, "cannot join"),
    (["transcript", "--room", "nope"], 1, "no room"),
])
def test_bad_input_is_one_clear_sentence(project, cli, args, code, words):
    run = cli(*args)
    assert run.exit_code == code and words in run.stderr and "Traceback" not in run.stderr
    as_json = cli(*args, "--json")
    assert json.loads(as_json.stderr.strip().splitlines()[-1])["error"]["message"]


def test_message_from_stdin_when_not_a_terminal(project, rooms):
    room(project)
    run = rooms("chat", "--room", "sync", "--json", input="@ops deploy latency?\n")
    assert run.exit_code == 0 and run.json()["replies"][0]["speaker"] == "ops"


def test_kick_of_last_default_agent_exits_3(project, cli):
    for agent in state(project, "default").roster[1:]:
        assert cli("room", "kick", agent, "--room", "default").exit_code == 0
    last = state(project, "default").roster[0]
    run = cli("room", "kick", last, "--room", "default")
    assert run.exit_code == 3 and "last agent of the default room" in run.stderr


def test_chat_commands_do_not_import_heavy_modules_at_startup(rooms):
    probe = ("import sys, rooms_cli.cli.app as a; bad = [m for m in ('httpx', 'rapidfuzz', 'yaml', 'frontmatter') "
             "if m in sys.modules]; print(bad)")
    import subprocess
    import sys

    from conftest import rooms_env

    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=rooms_env(), timeout=60)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_agents_cannot_use_slash_commands_in_chat(project, cli):
    run = cli("chat", "--as", "researcher", "/kick ops")
    assert run.exit_code == 1 and "only people can use slash commands" in run.stderr
    assert "ops" in state(project, "default").roster


@pytest.mark.parametrize("command", [
    ["chat"], ["transcript"], ["room", "create"], ["room", "list"], ["room", "show"], ["room", "use"], ["room", "invite"],
    ["room", "kick"], ["room", "mute"], ["room", "unmute"], ["room", "continue"], ["room", "handoff"], ["room", "save"],
    ["room", "join"], ["room", "drop"], ["room", "halt"],
])
def test_every_chat_command_has_help_with_an_example(cli, command):
    run = cli(*command, "--help")
    assert run.exit_code == 0 and "Example: rooms " in run.stdout


def test_demo_chat_section_shows_each_mode_a_pass_and_the_budget_running_out(tmp_path, cli):
    run = cli("demo", "--dir", str(tmp_path / "demo"), "--only", "chat", "--json")
    events = run.json()["events"]
    commands = " ".join(e["text"] for e in events if e["kind"] == "cmd")
    for needle in ("Anyone have context", "@reseacher", "@everyone", "@jam", "rooms room continue"):
        assert needle in commands
    assert any(e["kind"] == "italic" for e in events), "a pass"
    assert any("Turn budget used up" in e["text"] for e in events)
    assert any(e["text"].startswith("queued @ops") for e in events)


def test_continue_says_how_many_turns_the_replay_took_out_of_the_new_budget(project, cli):
    from rooms_cli.chat.rooms import update_room

    room(project)
    fresh = cli("room", "continue", "--room", "sync")
    assert fresh.stdout.strip() == "Budget reset to 6/6 turns (no queued mentions to replay)"
    update_room(project, "sync", lambda s: setattr(s, "budget_remaining", 0))
    cli("chat", "--room", "sync", "--as", "alice", "@ops @reviewer is the deploy safe?")
    run = cli("room", "continue", "--room", "sync")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.splitlines()[-1] == (
        "Budget reset to 6 turns; replaying the queued mentions of ops, reviewer took 2, so 4/6 are left")
