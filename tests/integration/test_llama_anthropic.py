"""The anthropic provider against llama.cpp's real server, which also speaks the Messages API (/v1/messages):
a local ANTHROPIC_BASE_URL needs no key, and the reply budget follows the agent's context window."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


@pytest.fixture
def gateway(llama_server, monkeypatch):
    """The built-in `anthropic` provider pointed at llama.cpp through the environment, with no key."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", llama_server.url)
    return llama_server


def _messages():
    from rooms_cli.models import Message

    return [Message("system", "You are terse."), Message("user", "Name three colours.")]


def _builtin():
    from rooms_cli.models import get_provider
    from rooms_cli.project.config import Config

    return get_provider("anthropic", Config())


@pytest.mark.parametrize("stream", [False, True])
def test_a_local_anthropic_base_url_answers_without_a_key(gateway, stream):
    deltas: list[str] = []
    done = _builtin().complete(_messages(), model="tiny", max_tokens=16, on_delta=deltas.append if stream else None)
    assert done.text and done.offline is False
    assert 0 < done.usage.output_tokens <= 16
    if stream:
        assert "".join(deltas) == done.text


def test_the_agents_max_tokens_bounds_the_reply(gateway):
    from rooms_cli.agents.definitions import Agent

    agent = Agent(id="tiny", directive="Be brief.", max_tokens=64)
    done = _builtin().complete(_messages(), model="tiny", agent=agent)
    assert 0 < done.usage.output_tokens <= 64


def test_an_agent_on_the_anthropic_gateway_chats_in_a_room(gateway, llama_project, rooms):
    from rooms_cli.agents.definitions import create_agent, load_agent
    from rooms_cli.store.paths import open_project

    project = open_project(llama_project)
    agent = load_agent(project, "archer")
    agent.model, agent.context_window, agent.max_tokens = "anthropic:tiny", 2048, 128
    create_agent(project, agent, overwrite=True)
    run = rooms("chat", "@archer what do the numbers say?", "--json", env={"ANTHROPIC_BASE_URL": gateway.url})
    assert run.exit_code == 0, run.stderr
    replies = [m for m in run.json()["replies"] if m["speaker"] == "archer"]
    assert replies and replies[0]["text"] and replies[0]["model"] == "anthropic:tiny"
    assert replies[0]["usage"]["output_tokens"] <= 128  # the agent's max_tokens
