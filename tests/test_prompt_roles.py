"""One prompt builder for every model call (models/prompt.py): what each kind of call BUILDS alternates
(system first, then user, assistant, …, user), without a model, for every call kind a session makes:
chat in every mode, roundtable turns and lessons, a debate, a hand-off note, group members, votes,
ballots, `send --wake` and a spawn. The real-model suite sends the same calls to a strict template
(tests/integration/test_real_session.py)."""

from __future__ import annotations

import pytest

from rooms_cli.models.base import Message, Provider
from rooms_cli.models.prompt import (
    OPENING,
    alternate,
    alternates,
    conversation,
    fold_system,
    for_server,
    roles,
    template_has_system_role,
)


@pytest.fixture
def built(monkeypatch):
    """Every (purpose, roles, alternates) a caller handed to Provider.acomplete, before any shaping."""
    seen: list[tuple[str, str, bool]] = []
    original = Provider.acomplete

    async def recording(self, messages, **kwargs):
        seen.append((kwargs.get("purpose", "answer"), roles(messages), alternates(messages)))
        return await original(self, messages, **kwargs)

    monkeypatch.setattr(Provider, "acomplete", recording)
    return seen


def test_every_call_kind_of_a_session_builds_alternating_roles(project, cli, built):
    def ok(*args):
        run = cli(*args)
        assert run.exit_code in (0, 1), run.stderr  # a vote with no winner exits 1: its calls still count
        return run

    ok("chat", "what should we ship first this week?")
    ok("chat", "@analyst how many users hit the login bug?")
    ok("chat", "@everyone one line each: are we ready?")
    ok("chat", "@jam name one risk")
    ok("room", "continue")
    ok("chat", "@boss and the deadline?")
    ok("roundtable", "run", "standup", "--topic", "launch week", "--participants", "boss,analyst,hustler", "--turns", "6")
    ok("roundtable", "run", "debate", "--topic", "monorepo", "--participants", "analyst,hustler", "--turns", "6")
    ok("room", "handoff", "boss")
    ok("group", "ask", "--profiles", "analyst,boss,hustler", "--objective", "Ship on Friday? YES or NO", "--reducer", "majority_vote")
    ok("group", "ask", "--profiles", "analyst,boss,hustler", "--objective", "Plan the week.", "--reducer", "rank")
    ok("send", "--to", "analyst", "--wake", "the login numbers by noon?")
    purposes = {purpose for purpose, _, _ in built}
    assert {"chat", "answer", "roundtable", "summary", "vote", "rank"} <= purposes, purposes
    assert [b for b in built if not b[2]] == []
    assert any(shape.startswith("SUAU") for purpose, shape, _ in built if purpose == "roundtable"), "own turns as the assistant"


def test_a_spawns_call_alternates(project, monkeypatch, built):
    from rooms_cli.messaging import worker
    from rooms_cli.messaging.spawn import Spawn

    spawn = Spawn(id="s-1", parent="tester", alias="helper", prompt="list three risks", model="offline", profile="analyst")
    assert worker.run_model(project, spawn)
    assert built == [("task", "SU", True)]


def test_the_builder_merges_runs_of_one_role_and_opens_with_the_user():
    messages = conversation("sys", [("assistant", "I opened."), ("user", "a: hi"), ("user", "b: hello"), ("user", "your turn")])
    assert [(m.role, m.content) for m in messages] == [
        ("system", "sys"), ("user", OPENING), ("assistant", "I opened."), ("user", "a: hi\n\nb: hello\n\nyour turn")]
    assert alternates(messages)
    assert roles(alternate([Message("user", "x"), Message("assistant", "")])) == "U"  # empty messages dropped
    assert roles(alternate([Message("system", "s"), Message("user", "x"), Message("assistant", "y")])) == "SUAU"


def test_a_template_without_a_system_role_gets_the_system_text_in_the_first_user_message():
    messages = [Message("system", "Be brief."), Message("user", "hi"), Message("assistant", "yo"), Message("user", "go")]
    folded = fold_system(messages)
    assert roles(folded) == "UAU" and folded[0].content == "Be brief.\n\nhi"
    assert for_server(messages, system_role=True) == messages
    assert template_has_system_role({"chat_template_caps": {"supports_system_role": False}}) is False
    assert template_has_system_role({"chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"}) is False
    assert template_has_system_role({"chat_template": "{% if messages[0]['role'] == 'system' %}…"}) is True
    assert template_has_system_role(None) is True  # not llama.cpp: it says nothing


def test_the_server_sees_folded_alternating_messages_when_its_template_has_no_system_role():
    """llama.cpp's /props says the template has no system role: the system text goes in the first user
    message, on both protocols; a server that says nothing gets the system message."""
    from fakeserver import FakeServer

    from rooms_cli.models.anthropic import AnthropicProvider
    from rooms_cli.models.base import forget_servers
    from rooms_cli.models.openai import OpenAIProvider

    with FakeServer("fine") as server:
        server.n_ctx = 2048
        server.props_extra = {"chat_template_caps": {"supports_system_role": False}}
        messages = [Message("system", "Be brief."), Message("user", "a: hi"), Message("user", "b: ho")]
        OpenAIProvider("local", {"type": "openai", "base_url": server.openai_url}).complete(messages, model="m")
        assert server.requests[-1].messages == [{"role": "user", "content": "Be brief.\n\na: hi\n\nb: ho"}]
        AnthropicProvider("gw", {"type": "anthropic", "base_url": server.base_url}).complete(messages, model="m")
        body = server.requests[-1].json
        assert "system" not in body and body["messages"] == [{"role": "user", "content": "Be brief.\n\na: hi\n\nb: ho"}]
        forget_servers()
        server.props_extra = {}
        OpenAIProvider("local", {"type": "openai", "base_url": server.openai_url}).complete(messages, model="m")
        assert [m["role"] for m in server.requests[-1].messages] == ["system", "user"]
