"""Where a server takes a forced tool call and answers in text (llama.cpp's /v1/messages), votes,
ballots and lessons are asked with their JSON's opening as a prefill; readers refuse what a
prefilled small model copies (the option list); what a server honours is probed once and kept."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from conftest import add_provider
from fakeserver import FakeServer, Reply

from rooms_cli.groups.rank import ballot_schema, parse_ballot
from rooms_cli.groups.votes import read_vote, vote_schema
from rooms_cli.models import capabilities
from rooms_cli.models.anthropic import AnthropicProvider
from rooms_cli.models.base import Message
from rooms_cli.models.openai import OpenAIProvider
from rooms_cli.models.prompt import Prefill, conversation, for_server, prefilled, roles
from rooms_cli.models.structured import FALLBACK, TEXT, ask_structured, honours_schemas, opening

VOTE = vote_schema(["YES", "NO"])


def anthropic(server: FakeServer) -> AnthropicProvider:
    return AnthropicProvider("local", {"type": "anthropic", "base_url": server.base_url, "retry_backoff": 0.01})


def openai(server: FakeServer) -> OpenAIProvider:
    return OpenAIProvider("local", {"type": "openai", "base_url": server.openai_url, "retry_backoff": 0.01})


def vote_messages(structured: bool) -> list[Message]:
    return conversation("You are Analyst.", [("user", "Ship on Friday? " + ("JSON" if structured else "in words"))])


def test_the_opening_of_a_shape_is_its_first_key_and_the_start_of_its_value_with_no_trailing_space():
    assert opening(VOTE) == '{"vote": "'
    assert opening(ballot_schema(["R1", "R2"])) == '{"ranking": ["'
    assert opening({"type": "object", "properties": {"speak": {"type": "boolean"}}, "required": ["speak"]}) == '{"speak":'
    assert opening({"type": "array"}) == ""


def test_a_prefill_stays_last_and_the_conversation_before_it_still_alternates():
    sent = for_server(prefilled([Message("system", "S"), Message("user", "a"), Message("user", "b")], '{"vote": "'),
                      system_role=False)
    assert roles(sent) == "UA" and isinstance(sent[-1], Prefill) and sent[0].content == "S\n\na\n\nb"


def test_the_messages_api_continues_the_prefill_and_the_reply_starts_with_it_once():
    with FakeServer() as server:
        server.push(Reply(text='YES", "reason": "ready"}'), Reply(text='{"vote": "NO"}'))
        provider = anthropic(server)
        first = provider.complete(prefilled(vote_messages(True), '{"vote": "'), model="m")
        again = provider.complete(prefilled(vote_messages(True), '{"vote": "'), model="m")  # llama.cpp repeats it
        assert first.text == '{"vote": "YES", "reason": "ready"}' and again.text == '{"vote": "NO"}'
        assert server.requests[0].json["messages"][-1] == {"role": "assistant", "content": '{"vote": "'}


def test_a_provider_that_cannot_continue_a_reply_is_never_sent_a_prefill():
    with FakeServer('{"vote": "NO"}') as server:
        done = openai(server).complete(prefilled(vote_messages(True), '{"vote": "'), model="m")
        assert done.text == '{"vote": "NO"}' and server.requests[0].json["messages"][-1]["role"] == "user"


def test_a_forced_tool_answered_in_text_is_asked_again_prefilled_then_every_later_call_goes_prefilled():
    with FakeServer() as server:
        server.honour_tools = False
        server.push(Reply(text="Ship the vote on Friday."), Reply(text='NO", "reason": "not ready"}'),
                    Reply(text='YES", "reason": "go"}'))
        provider = anthropic(server)
        got = asyncio.run(ask_structured(provider, vote_messages, VOTE, model="m"))
        assert (got.path, got.value) == (FALLBACK, {"vote": "NO", "reason": "not ready"})
        first, second = server.requests[0].json, server.requests[1].json
        assert "tools" in first and first["messages"][-1]["role"] == "user"
        assert "tools" not in second and second["messages"][-1] == {"role": "assistant", "content": '{"vote": "'}
        assert second["messages"][0]["content"].endswith("JSON")  # the prompt for a shape held at its start
        later = asyncio.run(ask_structured(provider, vote_messages, VOTE, model="m"))
        assert (later.path, later.value) == (TEXT, {"vote": "YES", "reason": "go"})
        assert "tools" not in server.requests[2].json and server.requests[2].json["messages"][-1]["role"] == "assistant"


def test_a_prefilled_ballot_stops_at_the_end_of_its_list():
    with FakeServer() as server:
        server.honour_tools = False
        server.push(Reply(text='R2", "R1"], "why": "x"}'))
        provider = anthropic(server)
        from rooms_cli.models.structured import not_honoured

        not_honoured(provider)
        got = asyncio.run(ask_structured(provider, vote_messages, ballot_schema(["R1", "R2"]), model="m"))
        assert server.requests[0].json["stop_sequences"] == ["]"] and got.completion.text == '{"ranking": ["R2", "R1"'
        assert parse_ballot(got.completion.text, ["R1", "R2"]) == (["R2", "R1"], "")


def test_a_vote_that_names_the_option_list_is_no_vote_and_a_vote_cut_after_its_option_is_one():
    assert read_vote('{"vote": "yes, no, reason: "100%"}', ["YES", "NO"])[0] is None
    assert read_vote('{"vote": "YES or NO"}', ["YES", "NO"])[0] is None
    assert read_vote('{"vote": "YES, we are ready', ["YES", "NO"]) == ("YES", "")


def test_a_prefilled_ballot_cut_or_looping_on_its_labels_is_read_in_the_order_first_named():
    assert parse_ballot('{"ranking": ["R3", "R1", "R4", "R3", "R1', ["R1", "R3", "R4"]) == (["R3", "R1", "R4"], "")
    assert parse_ballot('{"ranking": [1, 2, 3, 4', ["R1", "R3"])[0] == []


# -- what a server honours, probed once and kept ------------------------------------------------------

def _counting(server: FakeServer) -> None:
    def reply(request):
        if request.json.get("response_format"):
            return Reply(text='{"ok": true}')
        return Reply(text="1, 2, 3, 4, 5, 6, 7, 8, 9")
    server.set_default(reply)


def test_what_a_server_honours_is_probed_once_kept_as_checked_json_and_adopted_by_later_processes(project):
    with FakeServer() as server:
        _counting(server)
        provider = openai(server)
        facts = asyncio.run(capabilities.learn(project, provider, "m"))
        assert facts is not None and (facts["stop"], facts["structured"], facts["system_role"]) == (True, True, True)
        calls = len(server.requests)
        assert asyncio.run(capabilities.learn(project, provider, "m")) == facts and len(server.requests) == calls
        server.honour_stop = False
        assert asyncio.run(capabilities.learn(project, provider, "m", again=True))["stop"] is False
    path = Path(project.path("run", "providers.json"))
    doc = json.loads(path.read_text())
    assert doc["version"] == capabilities.VERSION and list(doc["entries"]) == [capabilities.entry_key(provider, "m")]


def test_a_damaged_or_ill_typed_entry_is_not_trusted(project):
    with FakeServer() as server:
        provider = openai(server)
        path = Path(project.path("run", "providers.json"))
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"system_role": "yes", "stop": True, "structured": True, "structured_via": "json_schema",
                 "structured_note": None, "prefill": False, "probed_at": "2026-11-28T00:00:00Z"}
        path.write_text(json.dumps({"version": capabilities.VERSION, "entries": {capabilities.entry_key(provider, "m"): entry}}))
        assert capabilities.known(project, provider, "m") is None
        path.write_text("{not json")
        assert capabilities.known(project, provider, "m") is None


def test_a_server_kept_as_not_honouring_schemas_is_sent_none_from_the_first_call(project):
    with FakeServer() as server:
        provider = anthropic(server)
        capabilities.keep(project, provider, "m", {"system_role": True, "stop": True, "structured": False,
                                                   "structured_via": "forced tool call", "structured_note": "text",
                                                   "prefill": True, "probed_at": "2026-11-28T00:00:00Z"})
        assert honours_schemas(provider)
        capabilities.adopt(project, provider, "m")
        assert not honours_schemas(provider)


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_models_list_says_what_each_configured_server_honours_once_probed(cli, project_dir, protocol):
    with FakeServer() as server:
        _counting(server)
        server.honour_tools = False
        url = server.openai_url if protocol == "openai" else server.base_url
        add_provider(project_dir, f'local: {{type: {protocol}, base_url: "{url}", model: m}}')
        listed = json.loads(cli("models", "list", "--json").stdout)
        assert next(p for p in listed["providers"] if p["name"] == "local")["honours"] is None
        probed = json.loads(cli("models", "list", "--probe", "--json").stdout)
        honours = next(p for p in probed["providers"] if p["name"] == "local")["honours"]
        assert honours["structured"] is (protocol == "openai") and honours["prefill"] is (protocol == "anthropic")
        assert honours["stop"] is True
        again = json.loads(cli("models", "list", "--json").stdout)  # kept: no call
        assert next(p for p in again["providers"] if p["name"] == "local")["honours"] == honours
        shown = cli("models", "list").stdout
        assert "honours: system role yes · stop sequences yes · JSON schema" in shown


def test_a_provider_listed_with_no_model_shows_the_latest_probe_of_its_server(project):
    with FakeServer() as server:
        _counting(server)
        provider = openai(server)
        facts = asyncio.run(capabilities.learn(project, provider, "smollm2"))
        assert capabilities.known(project, provider, "") == facts
        assert capabilities.known(project, provider, "other") is None
