"""`rooms chat` in each addressing mode, with four agents on llama.cpp's real server.

Who was prompted, in which order and whether at the same time is read from the engine's own log
(`engine_events`): a start and an end per request, in the order llama.cpp handled them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pexpect
import pytest

from rooms_cli.chat.transcript import read_transcript
from rooms_cli.store.paths import open_project

pytestmark = pytest.mark.integration

AGENTS = ["archer", "builder", "courier", "drafter"]


def chat(cli, *args):
    run = cli("chat", *args, "--json")
    assert run.exit_code == 0, run.stderr
    return run.json()


def spoken(turn) -> list[dict]:
    return [r for r in turn["replies"] if r["kind"] == "message"]


def assert_model_replies(replies):
    for reply in replies:
        assert reply["model"] == "llamacpp:tiny"
        assert reply["usage"]["input_tokens"] > 0 and reply["usage"]["output_tokens"] > 0
        assert isinstance(reply["text"], str) and reply["text"].strip()


def serial(events) -> bool:
    """True if each request ended before the next one started."""
    return [what for what, _, _ in events] == ["start", "end"] * (len(events) // 2)


def test_open_message_prompts_every_eligible_agent_in_score_order(llama_project, llama_server, cli):
    mark = llama_server.log_mark()
    turn = chat(cli, "the deploy latency is bad, what now?")
    assert turn["mode"] == "open"
    assert turn["eligible"][0] == "courier"  # tags ops, deploy, latency: the best score speaks first
    assert sorted(turn["eligible"]) == AGENTS
    replies = spoken(turn)
    assert [r["speaker"] for r in replies] == turn["eligible"][: len(replies)]
    assert len(replies) == len(turn["eligible"])  # a random model never says just /pass
    assert_model_replies(replies)
    assert turn["budget"]["remaining"] == turn["budget"]["total"] - len(replies)
    assert [what for what, _, _ in llama_server.engine_events(mark)].count("start") == len(replies)


def test_direct_mention_prompts_only_that_agent_even_when_muted(llama_project, llama_server, cli):
    assert cli("room", "mute", "builder").exit_code == 0
    mark = llama_server.log_mark()
    turn = chat(cli, "@builder which colours?")
    assert turn["mode"] == "direct" and turn["eligible"] == ["builder"]
    assert [r["speaker"] for r in spoken(turn)] == ["builder"]
    assert_model_replies(spoken(turn))
    assert [what for what, _, _ in llama_server.engine_events(mark)] == ["start", "end"]


def test_everyone_answers_in_series_each_seeing_the_earlier_replies(llama_project, llama_server, cli):
    mark = llama_server.log_mark()
    turn = chat(cli, "@everyone one line each")
    assert turn["mode"] == "everyone"
    replies = spoken(turn)
    assert sorted(r["speaker"] for r in replies) == AGENTS
    assert_model_replies(replies)
    events = llama_server.engine_events(mark)
    assert serial(events) and len(events) == 8, events
    # each prompt holds the replies before it as they were kept (a reply cut at its first repeat is
    # shorter than what the model generated): the second is longer than the first by at least one token a
    # word of the first reply; later ones hold more still, unless the context budget clipped the oldest
    # lines (the tiny model's 400-token gibberish fills it by the fourth prompt), never less than one reply
    inputs = [r["usage"]["input_tokens"] for r in replies]
    assert inputs[1] - inputs[0] >= len(replies[0]["text"].split()), (inputs, replies[0]["text"])
    assert all(later > inputs[1] for later in inputs[2:]), inputs


def test_jam_runs_four_agents_at_once_from_the_same_snapshot(llama_project, llama_server, cli):
    mark = llama_server.log_mark()
    turn = chat(cli, "@jam ideas, go")
    assert turn["mode"] == "jam"
    replies = spoken(turn)
    assert sorted(r["speaker"] for r in replies) == AGENTS
    assert_model_replies(replies)
    events = llama_server.engine_events(mark)
    assert len(events) == 8, events
    # in flight together (four when nothing else loads the machine; a serial @jam would show one)
    assert llama_server.busiest(mark) >= 3, events
    # nobody saw another's draft: the prompts differ only by the agent's own lines, far less than a reply
    inputs = [r["usage"]["input_tokens"] for r in replies]
    assert max(inputs) - min(inputs) < min(r["usage"]["output_tokens"] for r in replies), inputs


def test_sessions_add_up_the_token_usage_the_server_reported(llama_project, cli):
    replies = spoken(chat(cli, "@jam go")) + spoken(chat(cli, "@archer and you?"))
    room = cli("room", "show", "--json")
    assert room.exit_code == 0, room.stderr
    sessions = {entry["id"]: entry["session"] for entry in room.json()["roster"]}
    for agent in AGENTS:
        mine = [r["usage"] for r in replies if r["speaker"] == agent]
        assert sessions[agent]["turns"] == len(mine)
        assert sessions[agent]["input_tokens"] == sum(u["input_tokens"] for u in mine)
        assert sessions[agent]["output_tokens"] == sum(u["output_tokens"] for u in mine)


def test_transcript_records_who_spoke_with_model_and_usage(llama_project, cli):
    turn = chat(cli, "@jam go")
    run = cli("transcript", "--json")
    assert run.exit_code == 0, run.stderr
    records = run.json()
    assert records[-5]["id"] == turn["message"]["id"] and records[-5]["speaker"] == "tester"
    assert sorted(r["speaker"] for r in records[-4:]) == AGENTS
    assert {(r["kind"], r["model"]) for r in records[-4:]} == {("message", "llamacpp:tiny")}
    assert [r["usage"] for r in records[-4:]] == [r["usage"] for r in spoken(turn)]


def test_a_message_longer_than_the_slot_is_fitted_to_the_window_the_engine_reports(llama_project, llama_server, cli):
    # a token a character: 6000 characters would overflow the 4096-token slot (llama.cpp said 400, and
    # every later prompt carried it); the window comes from /props and the message is clipped to fit
    turn = chat(cli, "@archer " + "x " * 3000)
    [reply] = spoken(turn)
    assert reply["usage"]["input_tokens"] + reply["usage"]["output_tokens"] <= 4096
    assert turn["budget"]["remaining"] == turn["budget"]["total"] - 1
    [after] = spoken(chat(cli, "@builder still there?"))
    assert after["speaker"] == "builder" and after["usage"]["input_tokens"] < 4096


def test_handoff_summarises_the_session_through_the_model(llama_project, llama_server, cli):
    chat(cli, "@archer how are the numbers?")
    mark = llama_server.log_mark()
    run = cli("room", "handoff", "archer", "--json")
    assert run.exit_code == 0, run.stderr
    result = run.json()
    note = result["deliberation"]
    assert note["agent"] == "archer" and note["text"].strip()
    assert (llama_project / note["path"]).read_bytes().decode("utf-8").count(note["text"]) == 1
    assert result["record"]["kind"] == "handoff"
    assert [what for what, _, _ in llama_server.engine_events(mark)] == ["start", "end"]  # one summary call


def test_the_rooms_board_reaches_the_agents_prompt(llama_project, cli):
    # two rooms alike but for a task on one's board: the engine counts the board in the prompt
    # (a token a character, a byte at most, in this vocabulary)
    for room in ("plain", "board"):
        assert cli("room", "create", room, "--agent", "archer").exit_code == 0
    added = cli("task", "add", "Write the auth spec", "--lane", "archer", "--done", "specs/auth.md exists", "--room", "board")
    assert added.exit_code == 0, added.stderr
    board = cli("board", "--format", "md", "--room", "board").stdout.strip()
    assert "Write the auth spec" in board
    [plain] = spoken(chat(cli, "--room", "plain", "@archer hi"))
    [boarded] = spoken(chat(cli, "--room", "board", "@archer hi"))
    extra = boarded["usage"]["input_tokens"] - plain["usage"]["input_tokens"]
    assert len(board) <= extra <= len(board.encode("utf-8")) + 40, (extra, board)


def test_an_oversized_message_is_clipped_to_the_agents_window_and_answered(llama_project, cli):
    # rooms estimates 4 characters a token; this vocabulary has about one, so an agent's
    # context_window must be a quarter of the 4096-token slot for the estimate to fit the engine
    from rooms_cli.agents.definitions import create_agent, load_agent

    project = open_project(llama_project)
    archer = load_agent(project, "archer")
    archer.context_window = 1024
    create_agent(project, archer, overwrite=True)
    for text in ("@archer " + "x " * 3000, "@archer and now?"):
        replies = [r for r in spoken(chat(cli, text)) if r["speaker"] == "archer"]
        assert replies, "archer did not answer"
        assert 0 < replies[0]["usage"]["input_tokens"] < 4096 - 256


def test_chat_mode_in_a_terminal_streams_a_jam_from_the_engine(llama_project):
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo), "NO_COLOR": "1", "TERM": "xterm"}
    child = pexpect.spawn(sys.executable, ["-m", "rooms_cli", "chat"], env=env, encoding="utf-8", timeout=30,
                          dimensions=(40, 200), cwd=str(llama_project))
    child.expect("default> ")
    child.sendline("@jam ideas, go")
    seen = {child.expect([f"{agent}: " for agent in AGENTS]) for _ in AGENTS}
    assert seen == {0, 1, 2, 3}
    child.expect("default> ")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    replies = [m for m in read_transcript(open_project(llama_project), "default") if m.kind == "message" and m.speaker != "tester"]
    assert sorted(m.speaker for m in replies) == AGENTS and {m.model for m in replies} == {"llamacpp:tiny"}
