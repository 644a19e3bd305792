"""Bounded replies on every provider type, against real servers and programs: max_tokens, stop
strings, finish_reason, structured output and the fallback when a server refuses it."""

from __future__ import annotations

import json
import sys
import time

import pytest
from fakeserver import FakeServer, Reply
from hypothesis import given
from hypothesis import strategies as st

from rooms_cli.agents.definitions import Agent
from rooms_cli.models.anthropic import AnthropicProvider
from rooms_cli.models.base import Message, StopFilter, first_stop
from rooms_cli.models.command import CommandProvider
from rooms_cli.models.limits import DEFAULT_MAX_TOKENS, reply_limit
from rooms_cli.models.offline import OfflineProvider
from rooms_cli.models.openai import OpenAIProvider

MESSAGES = [Message("system", "You are terse."), Message("user", "Should we ship the parser on Friday?")]
LONG = " ".join(f"word{i}" for i in range(60))
SCHEMA = {"type": "object", "properties": {"speak": {"type": "boolean"}, "message": {"type": "string"}},
          "required": ["speak", "message"]}


@pytest.fixture
def server():
    with FakeServer(LONG) as s:
        yield s


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")


def openai(server: FakeServer, **spec) -> OpenAIProvider:
    return OpenAIProvider("local", {"type": "openai", "base_url": server.openai_url, "retry_backoff": 0.01, **spec})


def anthropic(server: FakeServer, **spec) -> AnthropicProvider:
    return AnthropicProvider("claude", {"type": "anthropic", "base_url": server.base_url,
                                        "api_key_env": "ANTHROPIC_API_KEY", "retry_backoff": 0.01, **spec})


def command(script: str, **spec) -> CommandProvider:
    return CommandProvider("prog", {"type": "command", "command": [sys.executable, "-c", script], **spec})


def stream_or_not(stream: bool, deltas: list[str]):
    return deltas.append if stream else None


# -- the limit ------------------------------------------------------------------------------------

def test_reply_limit_takes_the_override_then_the_agent_then_the_provider_then_the_purpose():
    agent = Agent(id="ann", directive="x", max_tokens=222)
    assert reply_limit("chat", agent=agent, provider_spec={"max_tokens": 333}, override=111) == 111
    assert reply_limit("chat", agent=agent, provider_spec={"max_tokens": 333}) == 222
    assert reply_limit("chat", agent=Agent(id="bo", directive="x"), provider_spec={"max_tokens": 333}) == 333
    assert reply_limit("vote") == DEFAULT_MAX_TOKENS["vote"] < reply_limit("chat") == DEFAULT_MAX_TOKENS["chat"]
    assert reply_limit("something new") == DEFAULT_MAX_TOKENS["answer"]


def test_every_kind_of_call_has_a_default_limit():
    for purpose in ("chat", "answer", "handoff", "summary", "vote", "rank", "lessons", "roundtable", "group"):
        assert 0 < DEFAULT_MAX_TOKENS[purpose] <= 1000


@pytest.mark.parametrize("stream", [False, True])
def test_openai_sends_max_tokens_and_records_a_cut_reply(server, stream):
    deltas: list[str] = []
    done = openai(server).complete(MESSAGES, model="m", max_tokens=5, on_delta=stream_or_not(stream, deltas))
    assert server.requests[0].json["max_tokens"] == 5
    assert done.finish_reason == "length" and done.cut
    assert done.text == "word0 word1 word2 word3 word4 "
    assert not stream or "".join(deltas) == done.text


@pytest.mark.parametrize("purpose", ["chat", "vote", "rank"])
def test_a_call_without_max_tokens_is_bounded_by_the_purposes_default(server, purpose):
    done = openai(server).complete(MESSAGES, model="m", purpose=purpose)
    assert server.requests[0].json["max_tokens"] == DEFAULT_MAX_TOKENS[purpose]
    assert done.finish_reason == "stop" and not done.cut


def test_the_providers_max_tokens_is_honoured_for_openai(server):
    openai(server, max_tokens=7).complete(MESSAGES, model="m")
    openai(server, max_tokens=7).complete(MESSAGES, model="m", agent=Agent(id="ann", directive="x", max_tokens=9))
    assert [r.json["max_tokens"] for r in server.requests] == [7, 9]


def test_a_server_that_wants_max_completion_tokens_gets_it_and_keeps_getting_it(server):
    server.push(Reply(status=400, error="Unsupported parameter: 'max_tokens' is not supported with this model. "
                                        "Use 'max_completion_tokens' instead."))
    provider = openai(server)
    first = provider.complete(MESSAGES, model="m", max_tokens=5)
    provider.complete(MESSAGES, model="m", max_tokens=6)
    sent = [r.json for r in server.requests]
    assert "max_tokens" in sent[0] and sent[1]["max_completion_tokens"] == 5 and "max_tokens" not in sent[1]
    assert sent[2]["max_completion_tokens"] == 6 and len(sent) == 3  # remembered: no second refusal
    assert first.cut


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_records_max_tokens_as_a_cut_reply(server, key, stream):
    done = anthropic(server).complete(MESSAGES, model="m", max_tokens=3, on_delta=stream_or_not(stream, []))
    assert server.requests[0].json["max_tokens"] == 3
    assert done.finish_reason == "length" and done.cut and done.text == "word0 word1 word2 "


@pytest.mark.parametrize("stream", [False, True])
def test_a_command_reply_is_cut_at_max_tokens_and_the_program_stopped(stream):
    # a program that would talk forever
    provider = command("import sys\nwhile True:\n    sys.stdout.write('talk ' * 50); sys.stdout.flush()")
    deltas: list[str] = []
    start = time.monotonic()
    done = provider.complete(MESSAGES, model="", max_tokens=20, on_delta=stream_or_not(stream, deltas))
    assert time.monotonic() - start < 10
    assert done.finish_reason == "length" and done.cut
    assert 10 <= len(done.text.split()) <= 20
    assert not stream or "".join(deltas) == done.text


def test_a_command_reply_within_the_limit_is_whole():
    done = command("print('short answer')").complete(MESSAGES, model="", max_tokens=50)
    assert done.text == "short answer" and done.finish_reason == "stop" and not done.cut


def test_the_offline_model_is_cut_at_max_tokens():
    agent = Agent(id="ann", directive="x", tags=["parser"], disposition="direct")
    whole = OfflineProvider("offline").complete(MESSAGES, model="", agent=agent, purpose="answer")
    cut = OfflineProvider("offline").complete(MESSAGES, model="", agent=agent, purpose="answer", max_tokens=3)
    assert whole.finish_reason == "stop" and not whole.cut
    assert cut.finish_reason == "length" and cut.cut and whole.text.startswith(cut.text) and len(cut.text) < len(whole.text)


# -- stop strings ---------------------------------------------------------------------------------

SPEAKERS = "I think we ship.\nops: no we do not\narchitect: maybe"


@pytest.mark.parametrize("stream", [False, True])
def test_openai_sends_at_most_four_stop_strings_and_the_server_stops_there(server, stream):
    server.push(Reply(text=SPEAKERS))
    stops = ["\nops:", "\narchitect:", "\nA:", "\nB:", "\nC:", "\nD:"]
    done = openai(server).complete(MESSAGES, model="m", stop=stops, on_delta=stream_or_not(stream, []))
    assert server.requests[0].json["stop"] == stops[:4]
    assert done.text == "I think we ship." and done.finish_reason == "stop"


@pytest.mark.parametrize("stream", [False, True])
def test_stop_strings_are_enforced_even_when_the_server_ignores_them(server, stream):
    server.honour_stop = False
    server.push(Reply(text=SPEAKERS, pieces=["I think ", "we ship.\no", "ps: no we", " do not"]))
    deltas: list[str] = []
    done = openai(server).complete(MESSAGES, model="m", stop=["\nops:"], on_delta=stream_or_not(stream, deltas))
    assert done.text == "I think we ship." and done.finish_reason == "stop"
    assert not stream or "".join(deltas) == "I think we ship."  # the stop string split across pieces never shows


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_sends_stop_sequences(server, key, stream):
    server.push(Reply(text=SPEAKERS))
    done = anthropic(server).complete(MESSAGES, model="m", stop=["\nops:"], on_delta=stream_or_not(stream, []))
    assert server.requests[0].json["stop_sequences"] == ["\nops:"]
    assert done.text == "I think we ship." and done.finish_reason == "stop"


def test_a_command_reply_ends_at_a_stop_string():
    done = command("print('I think we ship.'); print('ops: no we do not')").complete(MESSAGES, model="", stop=["\nops:"])
    assert done.text == "I think we ship." and done.finish_reason == "stop"


def test_an_offline_reply_ends_at_a_stop_string():
    agent = Agent(id="ann", directive="x", tags=["parser"])
    whole = OfflineProvider("offline").complete(MESSAGES, model="", agent=agent, purpose="answer")
    word = whole.text.split()[2]
    done = OfflineProvider("offline").complete(MESSAGES, model="", agent=agent, purpose="answer", stop=[" " + word])
    assert whole.text.startswith(done.text) and (" " + word) not in done.text and done.finish_reason == "stop"


@given(st.text(alphabet="ab:\n ", max_size=40), st.lists(st.integers(1, 6), max_size=12),
       st.lists(st.text(alphabet="ab:\n", min_size=1, max_size=4), min_size=1, max_size=3))
def test_the_stop_filter_streams_exactly_the_text_before_the_first_stop(text, cuts, stops):
    pieces, rest = [], text
    for n in cuts:
        pieces.append(rest[:n])
        rest = rest[n:]
    pieces.append(rest)
    out: list[str] = []
    stopper = StopFilter(out.append, stops)
    for piece in pieces:
        stopper(piece)
    stopper.close()
    # what a server does: generate character by character, stop the moment a stop string is complete
    expected = text
    for end in range(len(text) + 1):
        done = [s for s in stops if text[:end].endswith(s)]
        if done:
            expected = text[: end - max(map(len, done))]
            break
    assert "".join(out) == expected
    at = first_stop(text, stops)  # the same cut made on a whole reply
    assert (text if at is None else text[:at]) == expected


# -- structured output ----------------------------------------------------------------------------

ANSWER = json.dumps({"speak": False, "message": ""})


@pytest.mark.parametrize("stream", [False, True])
def test_openai_sends_the_schema_as_response_format(server, stream):
    server.push(Reply(text=ANSWER))
    done = openai(server).complete(MESSAGES, model="m", schema=SCHEMA, on_delta=stream_or_not(stream, []))
    fmt = server.requests[0].json["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == SCHEMA and fmt["json_schema"]["strict"] is True
    assert done.structured and json.loads(done.text) == {"speak": False, "message": ""}


def test_a_server_that_refuses_response_format_is_asked_once_more_without_it_and_never_again(server):
    server.refuse = {"response_format"}
    provider = openai(server)
    first = provider.complete(MESSAGES, model="m", schema=SCHEMA)
    second = provider.complete(MESSAGES, model="m", schema=SCHEMA)
    sent = ["response_format" in r.json for r in server.requests]
    assert sent == [True, False, False]
    assert not first.structured and not second.structured and first.text.startswith("word0")


@pytest.mark.parametrize("stream", [False, True])
def test_anthropic_structured_output_is_a_forced_tool_call(server, key, stream):
    server.push(Reply(text=ANSWER))
    deltas: list[str] = []
    done = anthropic(server).complete(MESSAGES, model="m", schema=SCHEMA, on_delta=stream_or_not(stream, deltas))
    body = server.requests[0].json
    assert body["tools"][0]["input_schema"] == SCHEMA and body["tool_choice"] == {"type": "tool", "name": "reply"}
    assert done.structured and json.loads(done.text) == {"speak": False, "message": ""} and done.finish_reason == "stop"
    assert not stream or json.loads("".join(deltas)) == {"speak": False, "message": ""}


def test_an_anthropic_server_that_refuses_tools_is_asked_without_them(server, key):
    server.refuse = {"tools"}
    done = anthropic(server).complete(MESSAGES, model="m", schema=SCHEMA)
    assert ["tools" in r.json for r in server.requests] == [True, False] and not done.structured


def test_providers_without_structured_output_ignore_the_schema():
    assert not OfflineProvider.structured and not CommandProvider.structured
    done = command("import sys; print(sys.stdin.read()[-20:])").complete(MESSAGES, model="", schema=SCHEMA)
    assert not done.structured and "json" not in done.text.lower()


# -- callers outside chat -------------------------------------------------------------------------

def test_a_woken_agents_cut_reply_is_marked_and_bounded_by_its_max_tokens(cli, project, project_dir, server):
    import yaml

    from rooms_cli.messaging.inbox import read_inbox

    config = project_dir / ".rooms.yaml"
    data = yaml.safe_load(config.read_text("utf-8")) or {}
    data["providers"] = {"local": {"type": "openai", "base_url": server.openai_url, "max_retries": 0}}
    config.write_text(yaml.safe_dump(data), "utf-8")
    (project_dir / ".rooms" / "agents" / "probe.md").write_text(
        "---\nid: probe\nmodel: local:m\nmax_tokens: 3\ntemperature: 0.3\n---\nYou answer questions.\n", "utf-8")
    run = cli("send", "--as", "alice", "--to", "probe", "--wake", "what is the api rate limit?", "--json")
    assert run.exit_code == 0, run.stderr
    sent = server.requests[0].json
    assert sent["max_tokens"] == 3 and sent["temperature"] == 0.3
    reply = read_inbox(project, "alice")[-1]
    assert reply.text == "word0 word1 word2…" and reply.meta["cut"] is True


def test_mark_cut_closes_an_open_code_fence():
    from rooms_cli.models.limits import mark_cut

    assert mark_cut("Here:\n```python\nprint(1)\n") == "Here:\n```python\nprint(1)…\n```"
    assert mark_cut("plain words ") == "plain words…"


@pytest.mark.parametrize("field, error", [
    ("stop", "Unsupported parameter: 'stop' is not supported with this model."),
    ("temperature", "Unsupported value: 'temperature' does not support 0.7 with this model. Only the default (1) value is supported."),
])
def test_a_server_that_refuses_stop_or_temperature_is_asked_without_it(server, field, error):
    server.push(Reply(status=400, error=error))
    provider = openai(server)
    done = provider.complete(MESSAGES, model="m", temperature=0.7, stop=["\nops:"])
    provider.complete(MESSAGES, model="m", temperature=0.7, stop=["\nops:"])
    assert [field in r.json for r in server.requests] == [True, False, False] and done.text


def test_anthropic_gets_no_whitespace_only_stop_sequence_but_it_still_stops_there(server, key):
    server.honour_stop = False
    server.push(Reply(text="first paragraph\n\nsecond paragraph"))
    done = anthropic(server).complete(MESSAGES, model="m", stop=["\n\n", "\nops:"])
    assert server.requests[0].json["stop_sequences"] == ["\nops:"]
    assert done.text == "first paragraph" and done.finish_reason == "stop"


def test_a_command_that_writes_other_speakers_turns_is_stopped_at_the_stop_string():
    script = "import sys, time\nsys.stdout.write('I agree.\\nops: and then'); sys.stdout.flush()\ntime.sleep(30)"
    start = time.monotonic()
    done = command(script).complete(MESSAGES, model="", stop=["\nops:"])
    assert time.monotonic() - start < 10  # stopped, not waited for
    assert done.text == "I agree." and done.finish_reason == "stop"
