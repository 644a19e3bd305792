"""Chat turns against a real OpenAI-compatible HTTP server on 127.0.0.1 (tests/fakeserver.py)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from chatkit import new_agent, records, room, say, state
from conftest import rooms_env
from fakeserver import FakeServer, Reply, Request

from rooms_cli.chat.context import MUST_ANSWER
from rooms_cli.chat.coordinator import FLAVOR_LINES, floor


@pytest.fixture
def server(monkeypatch):
    # socketserver listens with a backlog of 5: with 8 simultaneous connects the kernel drops SYNs
    # and the client retransmits a second later, which would measure TCP, not the coordinator
    from http.server import ThreadingHTTPServer

    monkeypatch.setattr(ThreadingHTTPServer, "request_queue_size", 64)
    with FakeServer() as srv:
        yield srv


def use_server(project, server, agents: list[str], **spec) -> None:
    """Point a `fake` provider at the server and create `agents` that use it."""
    config = {"default_model": "offline", "providers": {"fake": {"type": "openai", "base_url": server.openai_url,
                                                                 "max_retries": 0, **spec}}}
    (Path(project.root) / ".rooms.yaml").write_text(yaml.safe_dump(config))
    for agent_id in agents:
        new_agent(project, agent_id, tags=["anything"], model="fake:m")


def speaker_of(request: Request) -> str:
    """Which agent a request prompts (its system prompt says `You are <id> in the chat room`)."""
    system = request.messages[0]["content"]
    return system.split("You are ", 2)[-1].split(" ", 1)[0]


def test_jam_runs_agents_concurrently_wall_time_near_one_call(project, server):
    names = [f"a{i}" for i in range(8)]
    use_server(project, server, names)
    room(project, agents=names)
    server.set_default(Reply(text=lambda r: f"take from {speaker_of(r)}", delay=0.3))
    start = time.monotonic()
    say(project, "@a0 one call please")
    single = time.monotonic() - start
    start = time.monotonic()
    result = say(project, "@jam your angles?")
    wall = time.monotonic() - start
    assert sorted(r.speaker for r in result.replies) == names
    arrivals = [r.at for r in server.requests[1:]]
    assert max(arrivals) - min(arrivals) < 0.25, "all 8 calls were in flight together"
    assert wall < single * 2.5, f"@jam took {wall:.2f}s, one call {single:.2f}s: not parallel"


def test_jam_agents_answer_from_one_snapshot(project, server):
    names = ["a0", "a1", "a2"]
    use_server(project, server, names)
    room(project, agents=names)
    server.set_default(Reply(text=lambda r: f"draft-of-{speaker_of(r)}", delay=0.05))
    say(project, "@jam go")
    for request in server.requests:
        assert not any("draft-of-" in m["content"] for m in request.messages), "no agent saw another's draft"


def test_everyone_in_series_sees_earlier_replies(project, server):
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.set_default(Reply(text=lambda r: f"draft-of-{speaker_of(r)}"))
    say(project, "@everyone go")
    assert any("draft-of-a0" in m["content"] for m in server.requests[1].messages)


def test_everyone_rejects_a_pass_once_then_takes_the_answer(project, server):
    use_server(project, server, ["a0"])
    room(project, agents=["a0", "ops"])
    server.push("/pass", "Fine: the lock order is the problem.")
    result = say(project, "@everyone what's your best guess on the deadlock?")
    mine = [r for r in result.replies if r.speaker == "a0"]
    assert [(r.kind, r.text) for r in mine] == [("message", "Fine: the lock order is the problem.")]
    assert MUST_ANSWER in server.requests[1].messages[0]["content"]
    assert MUST_ANSWER not in server.requests[0].messages[0]["content"]


def test_everyone_second_pass_becomes_a_flavor_line_and_costs_nothing(project, server):
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.set_default("/pass")
    result = say(project, "@everyone anything?")
    assert [r.kind for r in result.replies] == ["flavor", "flavor"]
    assert all(r.text in FLAVOR_LINES for r in result.replies)
    assert len(server.requests) == 4, "each agent asked twice"
    assert state(project).budget_remaining == 6


def test_open_message_pass_is_not_asked_again(project, server):
    use_server(project, server, ["a0"])
    room(project, agents=["a0"])
    server.set_default("`/pass`")
    result = say(project, "anything?")
    assert [r.kind for r in result.replies] == ["pass"] and len(server.requests) == 1


@pytest.mark.parametrize("fault", [Reply.server_error(500, "the model is on fire"), Reply.cut(after=2), Reply.invalid_json()],
                         ids=["500", "cut-stream", "bad-json"])
def test_provider_failure_is_a_system_line_and_the_turn_goes_on(project, server, fault):
    use_server(project, server, ["a0", "a1", "a2"])
    room(project, agents=["a0", "a1", "a2"])
    server.push(fault, "second answer", "third answer")
    result = say(project, "@everyone report")
    kinds = [(r.speaker, r.kind) for r in result.replies]
    assert kinds == [("rooms", "system"), ("a1", "message"), ("a2", "message")]
    assert result.replies[0].text.startswith("a0 failed to answer: ")
    assert result.replies[0].meta == {"agent": "a0", "error": True}
    assert not [r for r in records(project) if r.speaker == "a0"], "no half message"
    assert state(project).budget_remaining == 4, "a failure costs no turn"


def test_reply_that_mentions_an_agent_cascades_while_budget_lasts(project, server):
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.set_default(Reply(text=lambda r: "over to you @a1" if speaker_of(r) == "a0" else "thanks, done"))
    result = say(project, "@a0 start")
    assert [(r.speaker, r.meta.get("mode")) for r in result.replies] == [("a0", "direct"), ("a1", "cascade")]
    assert result.replies[1].meta["answering"] == result.replies[0].id


def test_cascade_stops_at_zero_and_queues_the_mention(project, server):
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    # a new line each time (saying its own line again is a repeat, which ends a cascade)
    server.set_default(Reply(text=lambda r: f"@a1 your turn ({len(server.requests)})" if speaker_of(r) == "a0"
                             else f"@a0 no, yours ({len(server.requests)})"))
    result = say(project, "@a0 start")  # ping-pong until the 6 turns are spent
    assert [r.kind for r in result.replies].count("message") == 6
    assert result.exhausted and result.queued and result.queued[0]["agents"] in (["a0"], ["a1"])


def test_agent_text_is_data_not_commands(project, server):
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.set_default(Reply(text=lambda r: "/kick a1 @everyone @jam $(touch pwned)" if speaker_of(r) == "a0" else "hm"))
    result = say(project, "@a0 go")
    assert [r.speaker for r in result.replies] == ["a0"], "@everyone/@jam from an agent prompt nobody"
    assert state(project).roster == ["a0", "a1"]
    assert not (Path(project.root) / "pwned").exists()


def _chat_process(args, env_dir):
    return subprocess.Popen([sys.executable, "-m", "rooms_cli", "chat", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=rooms_env({"ROOMS_DIR": str(env_dir)}))


def test_two_concurrent_chats_never_interleave_a_turn(project_dir, project, server):
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.set_default(Reply(text=lambda r: f"ok: {r.last_user_text[-7:]}", delay=0.15))  # one line per round
    procs = [_chat_process(["--room", "sync", "--as", f"p{i}", f"@everyone round {i}"], project_dir) for i in range(3)]
    for proc in procs:
        proc.wait(timeout=90)
        assert proc.returncode == 0, proc.stderr.read()
    msgs = [m for m in records(project) if m.kind == "message"]
    assert len(msgs) == 9, "every append from every process is kept"
    for pos in range(0, 9, 3):
        human, first, second = msgs[pos : pos + 3]
        assert human.speaker.startswith("p")
        assert first.meta["answering"] == second.meta["answering"] == human.id, "a turn's replies follow its message"


def test_busy_floor_no_wait_exits_3_and_waiting_shows_a_note(project_dir, project, rooms):
    room(project)
    with floor(project, "sync"):
        busy = rooms("chat", "--room", "sync", "--no-wait", "hello")
        assert busy.exit_code == 3 and "busy" in busy.stderr
        waiting = _chat_process(["--room", "sync", "--as", "bob", "deploy latency?"], project_dir)
        seen: list[str] = []
        reader = threading.Thread(target=lambda: seen.extend(waiting.stderr), daemon=True)
        reader.start()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any("waiting for the other turn" in line for line in seen):
            time.sleep(0.05)
        assert any("waiting for the other turn" in line for line in seen), "a visible note on stderr"
        assert waiting.poll() is None, "it waits for the floor"
        assert records(project) == [], "nothing is posted while another turn holds the floor"
    waiting.wait(timeout=60)
    reader.join(timeout=10)
    assert waiting.returncode == 0, "".join(seen)
    assert records(project)[0].speaker == "bob"


@pytest.mark.slow
def test_kill_9_mid_turn_leaves_files_parseable_and_the_floor_free(project_dir, project, server):
    import random

    from rooms_cli.chat.rooms import load_room
    from rooms_cli.store import jsonl

    use_server(project, server, ["a0", "a1", "a2"])
    room(project, agents=["a0", "a1", "a2"])
    server.set_default(Reply(text="a reply that streams in a few pieces", chunk_delay=0.02, delay=0.05))
    chance = random.Random(7)
    for round_ in range(4):
        proc = _chat_process(["--room", "sync", f"@everyone round {round_}"], project_dir)
        time.sleep(0.4 + chance.random() * 0.8)
        proc.kill()
        proc.wait(timeout=30)
        scan = jsonl.scan(project.path("rooms", "sync", "transcript.jsonl"))
        assert scan.bad == [] and not scan.torn
        load_room(project, "sync")
    done = say(project, "@a0 still fine?")
    assert [r.speaker for r in done.replies] == ["a0"]
    answered = {r.meta["answering"] for r in records(project) if r.kind == "message" and r.speaker in ("a0", "a1", "a2")}
    assert answered <= {m.id for m in records(project)}, "every reply answers a message that was written"


def test_agent_is_not_eligible_while_another_process_hands_it_off(project_dir, project, server, rooms):
    from rooms_cli.chat.coordinator import explain
    from rooms_cli.chat.handoff import latest_deliberation
    from rooms_cli.project.config import load_config

    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.push("first answer")
    say(project, "@a0 hello")
    server.set_default(Reply(text="For my successor: we said hello.", delay=1.5))
    proc = subprocess.Popen([sys.executable, "-m", "rooms_cli", "room", "handoff", "a0", "--room", "sync"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=rooms_env({"ROOMS_DIR": str(project_dir)}))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "a0" not in state(project).handoff:
        time.sleep(0.05)
    data = explain(project, load_config(project), "sync", "@everyone anyone?")
    assert data["eligible"] == ["a1"] and data["filtered"]["a0"] == "mid-handoff"
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert state(project).handoff == []
    assert latest_deliberation(project, "a0").text == "For my successor: we said hello."


def test_jam_shows_each_reply_as_it_arrives(project, server):
    from rooms_cli.chat.coordinator import run_message
    from rooms_cli.project.config import load_config

    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.set_default(lambda r: Reply(text=f"take {speaker_of(r)}", delay=0.6 if speaker_of(r) == "a0" else 0.05))
    events = []
    result = run_message(project, load_config(project), "sync", "alice", "@jam go",
                         on_event=lambda kind, data: events.append((kind, data.get("agent"))))
    drafts = [agent for kind, agent in events if kind == "draft"]
    assert drafts == ["a1", "a0"], "the fast agent is shown first"
    assert [r.speaker for r in result.replies] == ["a0", "a1"], "written together, in prompt order"
    assert events.index(("draft", "a1")) < events.index(("draft", "a0")) < events.index(("message", None))
