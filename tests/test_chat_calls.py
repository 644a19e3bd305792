"""What a chat turn sends a real OpenAI-compatible server and how it reads the reply (issue 24):
bounded replies, prompts every chat template accepts, a context fitted to the server, hygiene,
passing. The server (tests/fakeserver.py) is real HTTP on 127.0.0.1; the assertions are about what
it RECEIVED and what the room stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from chatkit import new_agent, records, room, say, state
from fakeserver import FakeServer, Reply, Request

from rooms_cli.chat import sessions
from rooms_cli.chat.calling import CHAT_TEMPERATURE, TIGHT_MESSAGES
from rooms_cli.core.passes import PASS_SCHEMA
from rooms_cli.models.limits import DEFAULT_MAX_TOKENS


@pytest.fixture
def server():
    with FakeServer() as srv:  # the openai type asks for {speak, message}; a plain-text reply is read as text
        yield srv


def use_server(project, server, agents: list[str], **fields) -> None:
    config = {"default_model": "offline", "providers": {"fake": {"type": "openai", "base_url": server.openai_url,
                                                                 "max_retries": 0}}}
    (Path(project.root) / ".rooms.yaml").write_text(yaml.safe_dump(config))
    for agent_id in agents:
        new_agent(project, agent_id, tags=["anything"], model="fake:m", **fields)


def speaker_of(request: Request) -> str:
    return request.messages[0]["content"].split("You are ", 2)[-1].split(" ", 1)[0]


def alternates(messages: list[dict]) -> bool:
    roles = [m["role"] for m in messages]
    body = roles[1:]
    return (roles[0] == "system" and body[0] == "user" and body[-1] == "user"
            and all(a != b for a, b in zip(body, body[1:], strict=False)))


def test_every_call_sends_a_reply_limit_a_temperature_and_stop_sequences(project, server):
    use_server(project, server, ["a0", "a1"])
    new_agent(project, "brief", model="fake:m", max_tokens=50, temperature=0.2)
    room(project, agents=["a0", "a1", "brief"])
    server.set_default(Reply(text=lambda r: f"a view from {speaker_of(r)}"))
    say(project, "@everyone what now?")
    sent = {speaker_of(r): r.json for r in server.requests}
    assert sent["a0"]["max_tokens"] == DEFAULT_MAX_TOKENS["chat"] and sent["a0"]["temperature"] == CHAT_TEMPERATURE
    assert sent["brief"]["max_tokens"] == 50 and sent["brief"]["temperature"] == 0.2
    for body in sent.values():
        assert body["stop"][0] == "\nalice:" and len(body["stop"]) <= 4
        assert f"\n{speaker_of_body(body)}:" not in body["stop"], "never its own label"
    assert set(sent["a1"]["stop"]) == {"\nalice:", "\na0:", "\nbrief:"}


def speaker_of_body(body: dict) -> str:
    return body["messages"][0]["content"].split("You are ", 2)[-1].split(" ", 1)[0]


def test_everyone_prompts_alternate_and_carry_the_message_being_answered_once(project, server):
    agents = ["a0", "a1", "a2"]
    use_server(project, server, agents)
    room(project, agents=agents)
    server.set_default(Reply(text=lambda r: f"my own take, says {speaker_of(r)}"))
    say(project, "@a0 warm up first")
    say(project, "@everyone is the QQ-cache QQ-ready?")
    for request in server.requests:
        assert alternates(request.messages), [m["role"] for m in request.messages]
    for request in server.requests[1:]:
        assert sum(m["content"].count("QQ-cache QQ-ready") for m in request.messages) == 1
        assert request.messages[-1]["content"].count("alice: @everyone is the QQ-cache QQ-ready?") == 1
    last = server.requests[-1].messages[-1]["content"]
    assert last.index("a0: my own take") < last.index("alice: @everyone"), "replies so far come before it"


def test_a_reply_cut_by_the_limit_is_marked_with_closed_fences_and_the_reason_recorded(project, server):
    use_server(project, server, ["a0"], max_tokens=6)
    room(project, agents=["a0", "ops"])
    server.set_default("Run this first:\n```sh\nmake migrate && make deploy && make verify\n```")
    result = say(project, "@a0 how do I deploy?")
    reply = result.replies[0]
    assert server.requests[0].json["max_tokens"] == 6
    assert reply.meta["cut"] is True and reply.meta["finish_reason"] == "length"
    assert reply.text.endswith("\n```\n…[cut at 6 tokens]") and reply.text.count("```") == 2
    turn = [r for r in sessions.read_session(project, "sync", "a0") if r.get("kind") == "turn"][-1]
    assert turn["finish_reason"] == "length"


@pytest.mark.parametrize(("raw", "stored"), [
    ("a0: a1: @everyone: the lock order", "the lock order"),
    ("<|im_start|>assistant\nRoll back first.", "Roll back first."),
    ("Roll back first.\nalice: and then?\na0: then page ops", "Roll back first."),
])
def test_speaker_labels_and_other_speakers_turns_never_reach_the_transcript(project, server, raw, stored):
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.honour_stop = False  # as a server that ignores `stop`: the client cuts
    server.set_default(raw)
    result = say(project, "@a0 what first?")
    assert [r.text for r in result.replies] == [stored]


def test_a_looping_reply_is_cut_at_the_repetition_and_flagged(project, server):
    use_server(project, server, ["a0"])
    room(project, agents=["a0", "ops"])
    server.set_default("Use salt: " + "salt_" * 300)
    reply = say(project, "@a0 how do we hash?").replies[0]
    assert reply.text == "Use salt: salt…" and reply.meta["repeated"] is True


def test_a_reply_that_copies_another_agents_is_a_repeat_that_costs_nothing(project, server):
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.set_default("I'm a chatbot and I can help you with the deploy today.")
    result = say(project, "@everyone deploy?")
    assert [(r.speaker, r.kind) for r in result.replies] == [("a0", "message"), ("a1", "repeat")]
    assert result.replies[1].meta["copy_of"] == result.replies[0].id
    assert state(project).budget_remaining == state(project).budget_total - 1
    server.set_default(Reply(text=lambda r: f"fresh words from {speaker_of(r)} about rollbacks and canaries"))
    say(project, "@a1 anything else?")
    assert not any("I'm a chatbot" in m["content"] for m in server.requests[-1].messages[1:-1]
                   if m["role"] == "assistant"), "a repeat is not the agent's own turn in later prompts"


@pytest.mark.parametrize("text", ["a0: /pass", '"/pass"', "/pass — nothing to add", "PASS", "Nothing new from me. /pass"])
def test_passes_in_the_words_real_models_use_cost_nothing_and_stream_nothing(project, server, text):
    from rooms_cli.chat.coordinator import run_message
    from rooms_cli.project.config import load_config

    use_server(project, server, ["a0"])
    room(project, agents=["a0"])
    server.set_default(text)
    events = []
    result = run_message(project, load_config(project), "sync", "alice", "anything?", on_event=lambda k, d: events.append(k))
    assert [r.kind for r in result.replies] == ["pass"] and "delta" not in events
    assert state(project).budget_remaining == state(project).budget_total
    assert server.requests[0].messages[-1]["content"].endswith('otherwise pass.)'), "how to pass, at the end"


def test_only_an_open_message_offers_a_pass_an_agent_asked_by_name_is_told_to_answer(project, server):
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.set_default(Reply(text=lambda r: json.dumps({"speak": True, "message": f"on it, says {speaker_of(r)}"})
                             if "response_format" in r.json else f"on it, says {speaker_of(r)}"))
    say(project, "@a0 draft the release note")
    say(project, "@jam one risk each?")
    for request in server.requests:
        assert "response_format" not in request.json and "/pass" not in request.messages[-1]["content"]
        assert request.messages[-1]["content"].endswith(("alice: @a0 draft the release note", "alice: @jam one risk each?"))
    say(project, "anything else before we wrap up?")
    assert all("response_format" in r.json for r in server.requests[3:])


def test_a_server_that_takes_the_pass_schema_but_answers_text_is_told_how_to_pass_in_words(project, server):
    """The reply to a schema is checked: a server that took it and answered in free text (as
    llama.cpp's /v1/messages does with a forced tool call) is not sent it again in that process,
    and the next prompt says how to pass (/pass) in words."""
    use_server(project, server, ["a0"])
    room(project, agents=["a0"])
    server.set_default(Reply(text="We should ship the login fix first."))
    first = say(project, "what should we ship first?")
    assert [r.kind for r in first.replies] == ["message"]  # read as text
    say(project, "anything else?")
    assert "response_format" in server.requests[0].json
    assert "response_format" not in server.requests[-1].json and "/pass" in server.requests[-1].messages[-1]["content"]


def test_a_structured_provider_is_asked_for_speak_and_message_and_a_pass_is_read_from_it(project, server):
    from rooms_cli.chat.coordinator import run_message
    from rooms_cli.project.config import load_config

    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.push(json.dumps({"speak": False, "message": ""}),
                Reply(text=json.dumps({"speak": True, "message": "Roll back, then look at the \"lock\" order."}),
                      pieces=['{"speak": true, "mess', 'age": "Roll back, then ', 'look at the \\"lock\\" order', '."}']))
    events = []
    result = run_message(project, load_config(project), "sync", "alice", "what now?",
                         on_event=lambda kind, data: events.append((kind, data)))
    schema = server.requests[0].json["response_format"]["json_schema"]["schema"]
    assert schema == PASS_SCHEMA
    assert [(r.speaker, r.kind) for r in result.replies] == [("a0", "pass"), ("a1", "message")]
    assert result.replies[1].text == 'Roll back, then look at the "lock" order.'
    shown = "".join(d["text"] for kind, d in events if kind == "delta")
    assert shown == 'Roll back, then look at the "lock" order.', "the stream shows the message, not the JSON"


def test_a_server_that_refuses_the_schema_is_read_as_text(project, server):
    server.refuse = {"response_format"}
    use_server(project, server, ["a0"])
    room(project, agents=["a0"])
    server.set_default("Plain words, no JSON.")
    assert say(project, "hi, anything?").replies[0].text == "Plain words, no JSON."
    assert "response_format" in server.requests[0].json and "response_format" not in server.requests[1].json


def test_the_prompt_fits_the_window_the_server_reports_and_a_hex_dump_jams_nothing(project, server, cli):
    server.n_ctx = 1024
    server.tokenize = lambda text: len(text) // 2 + 1  # hex: about two characters a token
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    # a different line each time: saying its own line again is a repeat, not a message
    server.set_default(Reply(text=lambda r: f"noted, says {speaker_of(r)} ({len(server.requests)})"))
    dump = "".join(f"{i:08x}" for i in range(1250))  # 10 KB
    assert cli("chat", "--room", "sync", f"@a0 what is this? {dump}").exit_code == 0
    for text in ("@a1 and you?", "@a0 anything else?", "@everyone done?"):
        run = cli("chat", "--room", "sync", "--json", text)
        assert run.exit_code == 0, run.stderr
        assert all(r["kind"] == "message" for r in json.loads(run.stdout)["replies"])
    for request in server.requests:
        prompt = sum(server.tokenize(m["content"]) + 8 for m in request.messages)
        assert prompt + request.json["max_tokens"] <= 1024, "prompt and reply fit the server's window"
    assert any(p.path.endswith("/tokenize") for p in server.probes), "counted with the server's tokenizer"
    assert any("…[clipped: " in m["content"] for m in server.requests[0].messages), "clipped, visibly"


def test_a_prompt_refused_as_too_long_is_retried_once_trimmed(project, server):
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.set_default(Reply(text=lambda r: f"ok from {speaker_of(r)} {len(server.requests)}"))
    for i in range(4):  # the budget of 6 keeps two turns
        say(project, f"@a1 line {i} of the history")
    server.push(Reply(status=400, error="the request exceeds the available context size, try increasing it"))
    result = say(project, "@a0 summarise")
    assert [r.kind for r in result.replies] == ["message"] and result.replies[0].meta["trimmed"] is True
    first, second = server.requests[-2:]

    def history(request) -> int:
        return sum(m["content"].count("of the history") + m["content"].count("ok from a1") for m in request.messages)

    assert history(first) == 8 and history(second) == TIGHT_MESSAGES, "only the last few, with the trigger"
    assert "alice: @a0 summarise" in second.messages[-1]["content"]


def test_when_even_the_trimmed_prompt_is_refused_the_error_names_the_knobs_and_chat_exits_1(project, server, cli):
    use_server(project, server, ["a0"])
    room(project, agents=["a0", "ops"])
    server.set_default(Reply(status=400, error="the request exceeds the available context size, try increasing it"))
    run = cli("chat", "--room", "sync", "@a0 hello")
    assert run.exit_code == 1 and "no agent could answer" in run.stderr
    line = [r for r in records(project) if r.kind == "system"][-1].text
    assert "a0 failed to answer" in line and "context_window:" in line and "max_tokens:" in line
    assert len(server.requests) == 2, "retried once, not more"


def test_a_turn_whose_only_agent_fails_exits_1_and_one_that_answers_exits_0(project, server, cli):
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.push(Reply.server_error(500, "down"))
    run = cli("chat", "--room", "sync", "@a0 hi")
    assert run.exit_code == 1 and "no agent could answer (a0 failed" in run.stderr
    server.push(Reply.server_error(500, "down"), "I am here")
    assert cli("chat", "--room", "sync", "@everyone hi").exit_code == 0, "one answered"


def test_the_handoff_suggestion_reads_the_last_prompt_not_the_sum_of_all_turns(project, server):
    use_server(project, server, ["a0"], context_window=1000)
    room(project, agents=["a0", "ops"])
    usage = {"first": (400, 10), "second": (420, 10), "third": (700, 20)}
    asked = lambda r: r.last_user_text.split("@a0 ")[-1].split("\n")[0]  # noqa: E731
    server.set_default(lambda r: Reply(text=f"fine, {asked(r)}", usage=usage[asked(r)]))
    say(project, "@a0 first")
    say(project, "@a0 second")  # 840 tokens summed: past 0.70 x 1000, but each prompt is under it
    assert records(project, kind="handoff_suggested") == []
    say(project, "@a0 third")
    suggestion = records(project, kind="handoff_suggested")
    assert len(suggestion) == 1 and "720 of 1000" in suggestion[0].text


def test_a_handoff_summary_is_bounded_and_a_cut_one_is_marked(project, server, cli):
    use_server(project, server, ["a0"], max_tokens=5)
    room(project, agents=["a0", "ops"])
    server.set_default("fine")
    say(project, "@a0 hello")
    server.set_default("We discussed the deploy, the rollback plan, the canary and who pages whom.")
    run = cli("room", "handoff", "a0", "--room", "sync", "--json")
    assert run.exit_code == 0, run.stderr
    body = server.requests[-1].json
    assert body["max_tokens"] == 5 and body["temperature"] == 0.3 and alternates(body["messages"])
    assert run.json()["deliberation"]["text"] == "We discussed the deploy, the…[cut at 5 tokens]"


def test_a_structured_reply_cut_by_the_limit_keeps_its_message_so_far_marked_as_cut(project, server):
    use_server(project, server, ["a0"], max_tokens=3)
    room(project, agents=["a0"])
    server.push(Reply(text='{"speak": true, "message": "Roll back now please"}',
                      pieces=['{"speak": true, "message": "Roll ', "back ", "now", ' please"}']))
    reply = say(project, "what now?").replies[0]
    assert server.requests[0].json["response_format"]["json_schema"]["schema"] == PASS_SCHEMA
    assert (reply.kind, reply.text) == ("message", "Roll back now…[cut at 3 tokens]") and reply.meta["cut"] is True


def test_a_repeat_record_is_a_known_kind_to_the_readers_and_to_doctor(project, server, cli):
    use_server(project, server, ["a0", "a1"])
    room(project, agents=["a0", "a1"])
    server.set_default("I'm a chatbot and I can help you with the deploy today.")
    say(project, "@everyone deploy?")
    shown = cli("transcript", "--room", "sync", "--json").json()
    assert [r["kind"] for r in shown][-1] == "repeat"
    doctor = cli("doctor", "--json")
    assert "repeat" not in doctor.stdout + doctor.stderr, doctor.stdout


def test_a_structured_prompt_describes_the_decision_in_words_not_json(project, server):
    use_server(project, server, ["a0"])
    room(project, agents=["a0"])
    server.set_default(json.dumps({"speak": True, "message": "Ship the fix."}))
    say(project, "what now?")
    body = server.requests[0].json
    assert body["response_format"]["json_schema"]["schema"] == PASS_SCHEMA, "the schema gives the shape"
    prompt = "\n".join(m["content"] for m in body["messages"])
    assert "JSON" not in prompt and "\"speak\"" not in prompt and "\"message\"" not in prompt
    assert "your one short message" not in prompt, "no placeholder a small model copies as its answer"
    assert "decide whether to speak" in prompt and "pass" in body["messages"][-1]["content"]


def test_a_looping_stream_is_ended_at_the_repetition_and_the_record_says_cut(project, server):
    use_server(project, server, ["a0"])
    room(project, agents=["a0", "ops"])
    loop = "Roll back first. " + "The lock order matters here and we should check it. " * 60
    server.set_default(Reply(text=loop, chunk_delay=0.02))
    events = []
    from rooms_cli.chat.coordinator import run_message
    from rooms_cli.project.config import load_config

    result = run_message(project, load_config(project), "sync", "alice", "@a0 what first?",
                         on_event=lambda kind, data: events.append((kind, data)))
    reply = result.replies[0]
    assert server.wait_closed_early(1), "the call was ended, not read to its end"
    assert reply.text == "Roll back first. The lock order matters here and we should check it…"
    assert reply.meta["cut"] is True and reply.meta["finish_reason"] == "repetition"
    shown = "".join(d["text"] for kind, d in events if kind == "delta")
    assert len(shown) < 400, "the stream stopped soon after the repetition began"
    stored = [r for r in records(project, "sync") if r.kind == "message"][-1]
    assert stored.meta["cut"] is True


def test_a_reply_the_limit_stopped_is_recorded_as_cut_even_when_the_guard_cut_it_too(project, server):
    use_server(project, server, ["a0"], max_tokens=20)
    room(project, agents=["a0", "ops"])
    server.set_default(Reply(text="Use salt: " + "salt_" * 30, pieces=["Use salt: "] + ["salt_"] * 30))
    reply = say(project, "@a0 how do we hash?").replies[0]
    assert reply.meta["finish_reason"] in ("length", "repetition") and reply.meta["cut"] is True
    assert reply.meta["repeated"] is True and reply.text == "Use salt: salt…"


def test_the_stream_guard_waits_for_whole_sentences():
    from rooms_cli.chat.calling import chat_guard

    guard = chat_guard(None, structured=False)
    for piece in ["I agree. ", "We ship on Friday and then we measure it all. ", "I agree", " with the plan as it is now."]:
        guard(piece)  # "I agree" half arrived is not a repeat of "I agree."
    assert not guard.tripped


@pytest.mark.parametrize("loop", ["Lol, no, no, no, no, no, no, no, no, no, no, no, no, no, no, no",
                                  "reparación reparación reparación reparación reparación reparación reparación",
                                  "we ship it we ship it we ship it we ship it we ship it we ship it"])
def test_the_stream_guard_stops_a_loop_of_words_that_never_ends_a_sentence(loop):
    from rooms_cli.chat.calling import chat_guard
    from rooms_cli.models.repetition import RepetitionStop

    guard = chat_guard(None, structured=False)
    with pytest.raises(RepetitionStop):
        for piece in loop.split(" "):
            guard(piece + " ")
    assert len(guard.text) < 80, "it stopped within a few words of the loop, not at the token limit"


def test_a_handoff_note_that_reads_back_its_instructions_keeps_only_its_own_words(project, server, cli):
    use_server(project, server, ["a0"])
    room(project, agents=["a0", "ops"])
    server.set_default("fine")
    say(project, "@a0 hello")
    server.set_default(lambda r: Reply(text=r.messages[0]["content"] + "\nOpen: the canary rollout and who pages ops."))
    run = cli("room", "handoff", "a0", "--room", "sync", "--json")
    assert run.json()["deliberation"]["text"] == "Open: the canary rollout and who pages ops."
