"""Messaging without spawns: inboxes, send/reply, read state, status and roster, attention, hooks, wake."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO, rooms_env


def inbox_of(project, agent):
    from rooms_cli.messaging.inbox import read_inbox

    return read_inbox(project, agent)


def test_send_to_one_agent_numbers_messages_per_inbox(cli, project):
    assert cli("send", "--as", "alice", "--to", "bob", "first").exit_code == 0
    assert cli("send", "--as", "carol", "--to", "bob", "second").exit_code == 0
    assert cli("send", "--as", "bob", "--to", "alice", "third").exit_code == 0
    bob = inbox_of(project, "bob")
    assert [(m.n, m.sender, m.text, m.kind) for m in bob] == [(1, "alice", "first", "direct"), (2, "carol", "second", "direct")]
    assert [m.n for m in inbox_of(project, "alice")] == [1]


def test_send_without_to_reaches_every_other_agent_but_not_the_sender(cli, project):
    from rooms_cli.agents.definitions import agent_ids

    cli("status", "set", "--as", "bob", "Working on frontend")
    run = cli("send", "--as", "alice", "hello everyone", "--json")
    assert run.exit_code == 0, run.stderr
    reached = set(run.json()["to"])
    assert reached == set(agent_ids(project)) | {"bob"}
    assert "alice" not in reached
    assert all(inbox_of(project, name)[-1].kind == "broadcast" for name in reached)
    assert inbox_of(project, "alice") == []


def test_reply_to_wires_the_recipient_to_the_sender_of_that_message(cli, project):
    cli("send", "--as", "alice", "--to", "bob", "can you take the API?")
    cli("send", "--as", "carol", "--to", "bob", "lunch?")
    run = cli("send", "--as", "bob", "--reply-to", "1", "yes, on it", "--json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["to"] == ["alice"]
    reply = inbox_of(project, "alice")[-1]
    assert (reply.sender, reply.text, reply.reply_to) == ("bob", "yes, on it", 1)
    assert reply.meta["quote"] == "can you take the API?"
    assert inbox_of(project, "carol") == []
    # the quoted message is shown with the reply
    assert 're "can you take the API?"' in cli("inbox", "--as", "alice").stdout


def test_reply_to_a_missing_message_or_against_to_is_refused(cli, project):
    cli("send", "--as", "alice", "--to", "bob", "hi")
    missing = cli("send", "--as", "bob", "--reply-to", "7", "hm", "--json")
    assert missing.exit_code == 1
    assert missing.err_json()["error"]["code"] == "not_found"
    clash = cli("send", "--as", "bob", "--reply-to", "1", "--to", "carol", "hm")
    assert clash.exit_code == 1 and "--reply-to 1 answers alice" in clash.stderr
    assert cli("send", "--as", "bob", "--to", "bob", "me?").exit_code == 1
    assert cli("send", "--as", "bob", "--to", "../etc", "x").exit_code == 2  # a bad option value
    assert cli("send", "--as", "bob", "--to", "alice", "   ").exit_code == 2  # empty required text, as chat's


def test_inbox_marks_read_unless_peek(cli, project):
    cli("send", "--as", "alice", "--to", "bob", "one")
    cli("send", "--as", "alice", "--to", "bob", "two")
    peek = cli("inbox", "--as", "bob", "--peek", "--json").json()
    assert peek["unread"] == 2 and not peek["marked_read"]
    first = cli("inbox", "--as", "bob", "--unread", "--json").json()
    assert [m["text"] for m in first["messages"]] == ["one", "two"] and first["marked_read"]
    assert cli("inbox", "--as", "bob", "--unread", "--json").json()["messages"] == []
    cli("send", "--as", "alice", "--to", "bob", "three")
    everything = cli("inbox", "--as", "bob", "--json").json()
    assert [(m["n"], m["read"]) for m in everything["messages"]] == [(1, True), (2, True), (3, False)]
    assert "No unread messages for bob." in cli("inbox", "--as", "bob", "--unread").stdout


def test_group_envelopes_are_shown_with_their_tag(cli, project):
    from rooms_cli.messaging.inbox import deliver

    deliver(project, "sec", "lead", "Review auth.py", kind="group", tag="group:audit/broadcast:b-01abc")
    deliver(project, "sec", "lead", "cancelled", kind="group_cancel", tag="group:audit/broadcast:b-01abc")
    out = cli("inbox", "--as", "sec", "--peek").stdout
    assert "#1 lead [group:audit/broadcast:b-01abc]: Review auth.py" in out
    assert "#2 lead [group:audit/broadcast:b-01abc · cancel]: cancelled" in out
    data = cli("attention", "--as", "sec", "--peek", "--json").json()
    assert data["messages"][0]["tag"] == "group:audit/broadcast:b-01abc"


def test_concurrent_senders_from_many_processes_lose_nothing_and_keep_ids_unique(project_dir, project):
    writers, each = 6, 15
    script = textwrap.dedent(
        f"""
        import sys
        from rooms_cli.project.config import load_config
        from rooms_cli.messaging.send import send_message
        from rooms_cli.store.paths import open_project
        project = open_project({str(project_dir)!r})
        config = load_config(project)
        me = sys.argv[1]
        for i in range({each}):
            send_message(project, config, me, f"{{me}} {{i}}", to="hub")
            send_message(project, config, me, f"{{me}} all {{i}}", to="echo")
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, f"w{k}"], env=rooms_env(), cwd=REPO) for k in range(writers)
    ]
    # and real `rooms send` processes racing them
    clis = [
        subprocess.Popen([sys.executable, "-m", "rooms_cli", "send", "--as", f"c{k}", "--to", "hub", f"cli {k}"], env=rooms_env())
        for k in range(4)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs + clis)
    hub = inbox_of(project, "hub")
    expected = {f"w{k} {i}" for k in range(writers) for i in range(each)} | {f"cli {k}" for k in range(4)}
    assert {m.text for m in hub} == expected
    assert sorted(m.n for m in hub) == list(range(1, len(expected) + 1))
    assert [m.n for m in hub] == sorted(m.n for m in hub)  # numbered in append order
    assert len({m.id for m in hub}) == len(hub)
    assert sorted(m.n for m in inbox_of(project, "echo")) == list(range(1, writers * each + 1))


def test_status_set_and_agents_show_status_and_idleness(cli, project, monkeypatch):
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T10:00:00Z")
    assert cli("status", "set", "--as", "alice", "Working on frontend").exit_code == 0
    agents = {a["name"]: a for a in cli("agents", "--json").json()}
    assert agents["alice"] == {**agents["alice"], "kind": "session", "status": "Working on frontend", "idle": False}
    assert agents["analyst"]["kind"] == "agent" and agents["analyst"]["idle"] is True
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T10:30:00Z")
    agents = {a["name"]: a for a in cli("agents", "--json").json()}
    assert agents["alice"]["idle"] is True and agents["alice"]["status"] == "Working on frontend"
    assert "alice" in cli("agents").stdout


def test_attention_shows_every_agent_unread_messages_and_the_hint_until_first_send(cli, project):
    cli("status", "set", "--as", "alice", "Working on frontend")
    cli("send", "--as", "alice", "--to", "bob", "Need help?")
    text = cli("attention", "--as", "bob").stdout
    assert text.startswith("[rooms] You are bob.")
    assert 'alice — "Working on frontend" (active)' in text
    assert "analyst (idle)" in text  # idle agents are listed too
    assert "#1 alice: Need help?" in text
    assert "ACTION REQUIRED: announce yourself" in text
    # the block marked the message read: the next one has no messages
    again = cli("attention", "--as", "bob", "--json").json()
    assert again["messages"] == [] and again["hint"] and again["synthetic"] is True
    cli("send", "--as", "bob", "--reply-to", "1", "sure")
    after = cli("attention", "--as", "bob", "--json").json()
    assert after["hint"] is None
    assert {a["name"] for a in after["agents"]} >= {"alice", "analyst", "researcher"}
    assert "bob" not in {a["name"] for a in after["agents"]}


def test_attention_peek_keeps_messages_unread(cli, project):
    cli("send", "--as", "alice", "--to", "bob", "ping")
    assert len(cli("attention", "--as", "bob", "--peek", "--json").json()["messages"]) == 1
    assert len(cli("attention", "--as", "bob", "--json").json()["messages"]) == 1
    assert cli("attention", "--as", "bob", "--json").json()["messages"] == []


def test_stop_hook_blocks_with_unread_messages_then_lets_the_agent_stop(cli, project):
    cli("send", "--as", "alice", "--to", "bob", "please also update the docs")
    payload = json.dumps({"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": False})
    first = cli("hook", "claude-code", "stop", "--as", "bob", input=payload)
    assert first.exit_code == 0, first.stderr
    answer = json.loads(first.stdout)
    assert answer["decision"] == "block"
    assert "#1 alice: please also update the docs" in answer["reason"]
    again = json.dumps({"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": True})
    second = cli("hook", "claude-code", "stop", "--as", "bob", input=again)
    assert (second.exit_code, second.stdout) == (0, "")
    # a new message blocks even while stop_hook_active: each block hands over new messages
    cli("send", "--as", "alice", "--to", "bob", "one more thing")
    third = cli("hook", "claude-code", "stop", "--as", "bob", input=again)
    assert "one more thing" in json.loads(third.stdout)["reason"]


def test_stop_hook_outside_a_project_prints_nothing(rooms, tmp_path):
    payload = json.dumps({"cwd": str(tmp_path), "hook_event_name": "Stop"})
    run = rooms("hook", "claude-code", "stop", input=payload, cwd=tmp_path)
    assert (run.exit_code, run.stdout) == (0, "")


def test_stop_hook_finds_the_project_from_the_session_cwd(rooms, project_dir, tmp_path, monkeypatch):
    monkeypatch.delenv("ROOMS_DIR")
    (project_dir / "src").mkdir()
    rooms("send", "--as", "alice", "--to", "bob", "hi", cwd=project_dir)
    payload = json.dumps({"cwd": str(project_dir / "src"), "hook_event_name": "Stop"})
    run = rooms("hook", "claude-code", "stop", input=payload, cwd=tmp_path, env={"ROOMS_AGENT": "bob"})
    assert json.loads(run.stdout)["decision"] == "block"


def test_prompt_hook_injects_the_attention_block(cli, project):
    cli("send", "--as", "alice", "--to", "bob", "status?")
    run = cli("hook", "claude-code", "prompt", "--as", "bob", input=json.dumps({"prompt": "go on"}))
    answer = json.loads(run.stdout)
    out = answer["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert "#1 alice: status?" in out["additionalContext"]
    assert "alice (active)" in out["additionalContext"]


def test_send_wake_runs_an_llm_agent_and_its_reply_comes_back(cli, project):
    run = cli("send", "--as", "alice", "--to", "researcher", "--wake", "what is the api rate limit?", "--json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["woken"][0]["agent"] == "researcher"
    reply = inbox_of(project, "alice")[-1]
    assert reply.sender == "researcher" and reply.reply_to == 1 and reply.text
    assert reply.meta["auto"] == "wake"
    from rooms_cli.messaging.inbox import unread_messages

    assert unread_messages(project, "researcher") == []


def _tick(cli):
    run = cli("tick", "--json")
    assert run.exit_code == 0, run.stderr
    return run.json()["steps"]["wake"]


def test_tick_wakes_llm_agents_only_when_wake_is_on(cli, project, project_dir):
    with open(project_dir / ".rooms.yaml", "a") as fh:
        fh.write("\nwake: true\n")
    cli("send", "--as", "alice", "--to", "analyst", "numbers on the churn please")
    assert cli("tick", "--dry-run", "--json").json()["steps"]["wake"] == [{"action": "wake", "detail": "analyst (1 to answer)"}]
    actions = _tick(cli)
    assert actions and "analyst read 1 message, replied to alice" in actions[0]["detail"]
    assert inbox_of(project, "alice")[-1].sender == "analyst"
    assert _tick(cli) == []  # nothing unread any more


def test_messages_that_waited_before_wake_was_turned_on_never_wake_the_agent(cli, project, project_dir):
    cli("send", "--as", "alice", "hello all")  # wake is off: stamped, answered by nobody
    assert _tick(cli) == []
    with open(project_dir / ".rooms.yaml", "a") as fh:
        fh.write("\nwake: true\n")
    assert _tick(cli) == []  # the old "hello all" stays unanswered
    assert not [m for m in inbox_of(project, "alice") if m.meta.get("auto") == "wake"]
    cli("send", "--as", "alice", "--to", "analyst", "numbers on the churn please")
    [action] = _tick(cli)
    assert action["detail"] == "analyst read 1 message, replied to alice"


def _echo_agent(cli, project_dir):
    """An agent whose model shows the prompt it was given with its spaces made `_` (word for word, the
    prompt read back would be an echo, which is no reply: models/repetition.drop_echoes)."""
    cfg = project_dir / ".rooms.yaml"  # the one providers: key of the example (a second is refused)
    cfg.write_text(cfg.read_text().replace("\nproviders:\n", "\nproviders:\n  echo: {type: command, command: [sed, 's/ /_/g']}\n", 1)
                   + "\nwake: true\n")
    assert cli("agent", "new", "echo", "--model", "echo:default").exit_code == 0


def test_a_woken_agent_reads_only_new_messages_and_no_record_ids(cli, project, project_dir):
    from rooms_cli.messaging.inbox import deliver

    cli("send", "--as", "alice", "--to", "analyst", "hello all")  # before the echo agent exists
    _echo_agent(cli, project_dir)
    deliver(project, "echo", "lead", "[group rev · broadcast b-01M83J6D5XABCDEFGHJKMNPQRS] you are member 'echo'", kind="group")
    sent = cli("send", "--as", "alice", "--to", "echo", "Let's decide on the launch date today", "--json").json()
    [action] = _tick(cli)
    assert action["detail"] == "echo read 1 message, replied to alice"
    reply = inbox_of(project, "alice")[-1]
    assert "From_alice:_Let's_decide_on_the_launch_date_today" in reply.text
    assert "01M83J6D5X" not in reply.text and sent["delivered"][0]["id"] not in reply.text
    assert "#1" not in reply.text and "#2" not in reply.text


def test_send_wake_answers_the_message_just_sent_even_with_wake_off(cli, project):
    cli("send", "--as", "bob", "--to", "researcher", "an old question")
    run = cli("send", "--as", "alice", "--to", "researcher", "--wake", "what is the api rate limit?", "--json")
    [woken] = run.json()["woken"]
    assert woken["read"] == [2] and [r["to"] for r in woken["replies"]] == ["alice"]


def test_a_woken_agents_reply_does_not_wake_its_recipient(cli, project, project_dir):
    with open(project_dir / ".rooms.yaml", "a") as fh:
        fh.write("\nwake: true\n")
    cli("send", "--as", "analyst", "--to", "writer", "draft the summary")
    actions = _tick(cli)
    assert [a["detail"].split()[0] for a in actions] == ["writer"]
    # writer answered analyst automatically; that answer alone does not wake analyst
    assert inbox_of(project, "analyst")[-1].meta["auto"] == "wake"
    assert _tick(cli) == []


@pytest.mark.parametrize("command", ["send", "inbox", "status set", "agents", "spawn", "wait", "attention",
                                     "hook claude-code stop", "hook claude-code prompt",
                                     "hook claude-code session-start"])
def test_every_messaging_command_has_help_with_an_example(cli, command):
    run = cli(*command.split(), "--help")
    assert run.exit_code == 0 and "Example: rooms" in run.stdout


def test_senders_killed_mid_write_lose_nothing_acknowledged(project_dir, project):
    import time

    from rooms_cli.store import jsonl

    script = textwrap.dedent(
        """
        import sys
        from rooms_cli.project.config import load_config
        from rooms_cli.messaging.send import send_message
        from rooms_cli.store.paths import open_project
        project = open_project(sys.argv[1])
        config = load_config(project)
        i = 0
        while True:
            result = send_message(project, config, "alice", f"m{i} " + "x" * 3000, to="bob")
            print(result.delivered[0].n, flush=True)
            i += 1
        """
    )
    acked: set[int] = set()
    for delay in (0.0, 0.03, 0.07, 0.11):
        proc = subprocess.Popen([sys.executable, "-c", script, str(project_dir)], stdout=subprocess.PIPE, text=True, env=rooms_env())
        acked.add(int(proc.stdout.readline()))  # it is writing: now kill it at some instant
        time.sleep(delay)
        proc.kill()
        out, _ = proc.communicate(timeout=30)
        acked.update(int(line) for line in out.split())
    scan = jsonl.scan(project.path("inbox", "bob.jsonl"))
    assert scan.bad == []
    numbers = [int(r["n"]) for r in scan.records]
    assert acked and acked <= set(numbers)
    assert numbers == list(range(1, len(numbers) + 1))


def test_inbox_records_round_trip():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from rooms_cli.messaging.inbox import InboxMessage
    from rooms_cli.store import jsonl

    names = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,20}", fullmatch=True)
    messages = st.builds(
        InboxMessage, n=st.integers(1, 10**6), id=st.just("i-01ABC"), ts=st.just("2026-11-21T10:00:00.000Z"),
        sender=names, to=names, kind=st.sampled_from(["direct", "broadcast", "group", "spawn_output"]), text=st.text(),
        tag=st.one_of(st.none(), st.text(min_size=1)), reply_to=st.one_of(st.none(), st.integers(1, 999)),
        meta=st.dictionaries(st.text(), st.one_of(st.text(), st.integers(), st.booleans())),
    )

    @settings(max_examples=150, deadline=None)
    @given(st.lists(messages, max_size=5))
    def check(batch):
        data = "".join(jsonl.dumps(m.to_json()) + "\n" for m in batch).encode()
        assert [InboxMessage.from_json(r) for r in jsonl.parse_bytes(data).records] == batch

    check()
