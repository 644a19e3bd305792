"""The anthropic provider against a real HTTP server on 127.0.0.1 speaking the Messages API (tests/fakeserver.py)."""

from __future__ import annotations

import asyncio
import time

import pytest
from fakeserver import FakeServer, Reply

from rooms_cli.core.errors import ProviderError
from rooms_cli.models import get_provider
from rooms_cli.models.anthropic import AnthropicProvider, to_anthropic
from rooms_cli.models.base import Message
from rooms_cli.models.http import ProviderTimeout
from rooms_cli.models.limits import DEFAULT_MAX_TOKENS
from rooms_cli.models.tokens import estimate_tokens
from rooms_cli.project.config import Config

MESSAGES = [
    Message("system", "You are the scribe."),
    Message("user", "alice: what did we decide?"),
    Message("user", "bob: and who owns it?"),
]
SECRET = "sk-ant-test-SECRET-0123456789"


@pytest.fixture
def server():
    with FakeServer("We decided to ship on Friday.") as s:
        yield s


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    return SECRET


def provider(server: FakeServer, name: str = "claude", **spec) -> AnthropicProvider:
    spec = {"type": "anthropic", "base_url": server.base_url, "api_key_env": "ANTHROPIC_API_KEY",
            "retry_backoff": 0.01, **spec}
    return AnthropicProvider(name, spec)


def test_non_streaming_request_has_the_messages_api_shape(server, key):
    server.push(Reply(usage=(30, 8)))
    done = provider(server).complete(MESSAGES, model="claude-sonnet-4-5", temperature=0.2)
    assert done.text == "We decided to ship on Friday."
    assert (done.usage.input_tokens, done.usage.output_tokens) == (30, 8)
    assert done.finish_reason == "stop" and done.model == "claude:claude-sonnet-4-5"
    req = server.requests[0]
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == SECRET and req.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in req.headers
    assert req.json["system"] == "You are the scribe."
    assert req.json["messages"] == [{"role": "user", "content": "alice: what did we decide?\n\nbob: and who owns it?"}]
    assert req.json["max_tokens"] == DEFAULT_MAX_TOKENS["answer"] and req.json["temperature"] == 0.2
    assert "stream" not in req.json


def test_version_header_and_max_tokens_come_from_the_spec(server, key):
    provider(server, anthropic_version="2024-01-01", max_tokens=99).complete(MESSAGES, model="m")
    req = server.requests[0]
    assert req.headers["anthropic-version"] == "2024-01-01" and req.json["max_tokens"] == 99


def test_streaming_deltas_arrive_in_order_and_usage_is_read_from_the_events(server, key):
    server.push(Reply(text="Ship it on Friday", usage=(21, 4)))
    deltas: list[str] = []
    done = provider(server).complete(MESSAGES, model="m", on_delta=deltas.append)
    # a key is configured: the last 7 characters are held back until more arrive (secrets are masked live)
    assert len(deltas) > 1 and "".join(deltas) == done.text == "Ship it on Friday"
    assert (done.usage.input_tokens, done.usage.output_tokens) == (21, 4)
    assert done.finish_reason == "stop"  # end_turn, normalised
    assert server.requests[0].json["stream"] is True


@pytest.mark.parametrize("stream", [False, True])
def test_usage_is_estimated_when_absent(server, key, stream):
    server.push(Reply(text="y" * 80, omit_usage=True))
    done = provider(server).complete(MESSAGES, model="m", on_delta=(lambda _: None) if stream else None)
    assert done.usage.output_tokens == estimate_tokens("y" * 80) and done.usage.input_tokens > 0


def test_429_with_retry_after_then_success(server, key):
    server.push(Reply.rate_limited(retry_after="0.7"))
    assert provider(server).complete(MESSAGES, model="m").text.startswith("We decided")
    first, second = server.requests
    assert second.at - first.at >= 0.65


def test_overloaded_529_is_retried(server, key):
    server.fail(1, status=529, message="Overloaded")
    assert provider(server).complete(MESSAGES, model="m").text
    assert len(server.requests) == 2


def test_500_every_time_is_one_clear_error(server, key):
    server.set_default(Reply.server_error(500, "api_error"))
    with pytest.raises(ProviderError) as err:
        provider(server, max_retries=3).complete(MESSAGES, model="m")
    assert str(err.value) == f"provider 'claude' ({server.base_url}): HTTP 500 after 4 tries: api_error"
    assert len(server.requests) == 4


def test_connection_refused(key, closed_port):
    p = AnthropicProvider("claude", {"type": "anthropic", "base_url": f"http://127.0.0.1:{closed_port}", "retry_backoff": 0.01,
                                     "max_retries": 1})
    with pytest.raises(ProviderError, match=r"connection refused after 2 tries; is the server running\?"):
        p.complete(MESSAGES, model="m")


def test_a_stream_cut_mid_way_is_an_error(server, key):
    server.push(Reply.cut(after=1, text="one two three"))
    deltas: list[str] = []
    with pytest.raises(ProviderError, match="cut off mid-reply after 4 characters"):
        provider(server).complete(MESSAGES, model="m", on_delta=deltas.append)
    assert deltas == ["one "]


def test_a_stream_without_message_stop_is_an_error(server, key):
    server.push(Reply(end_early=True))
    with pytest.raises(ProviderError, match="ended before message_stop"):
        provider(server).complete(MESSAGES, model="m", on_delta=lambda _: None)


def test_invalid_json_is_a_clear_error(server, key):
    server.push(Reply.invalid_json(), Reply(bad_json_after=0))
    with pytest.raises(ProviderError, match="not valid JSON"):
        provider(server).complete(MESSAGES, model="m")
    with pytest.raises(ProviderError, match="invalid JSON in the event stream"):
        provider(server).complete(MESSAGES, model="m", on_delta=lambda _: None)


def test_an_error_event_mid_stream_is_a_provider_error(server, key):
    server.push(Reply(stream_error="Overloaded"))
    with pytest.raises(ProviderError, match="error mid-stream: Overloaded"):
        provider(server).complete(MESSAGES, model="m", on_delta=lambda _: None)


def test_timeout(server, key):
    server.push(Reply.slow(5))
    start = time.monotonic()
    with pytest.raises(ProviderTimeout):
        provider(server, timeout=0.4).complete(MESSAGES, model="m")
    assert time.monotonic() - start < 3


def test_cancelling_mid_stream_closes_the_connection(server, key):
    server.push(Reply(text="z " * 30, chunk_delay=0.2))

    async def scenario():
        first = asyncio.Event()
        task = asyncio.create_task(provider(server).acomplete(MESSAGES, model="m", on_delta=lambda _: first.set()))
        await asyncio.wait_for(first.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic()

    cancelled_at = asyncio.run(scenario())
    assert server.wait_closed_early(1, timeout=3)
    assert server.requests[0].closed_at - cancelled_at < 1.0


def test_key_never_appears_in_errors(server, key):
    server.push(Reply.server_error(401, f"invalid x-api-key {SECRET}"))
    with pytest.raises(ProviderError) as err:
        provider(server).complete(MESSAGES, model="m")
    assert SECRET not in str(err.value) and SECRET not in str(err.value.to_json())
    assert "HTTP 401" in str(err.value)


def test_builtin_anthropic_without_a_key_names_both_fixes():
    with pytest.raises(ProviderError) as err:
        get_provider("anthropic", Config()).complete(MESSAGES, model="claude-sonnet-4-5")
    msg = str(err.value)
    assert "export ANTHROPIC_API_KEY=" in msg and "api_key_env" in msg and "api_key_file" in msg


def test_anthropic_key_is_not_sent_to_a_base_url_that_did_not_ask_for_it(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)
    AnthropicProvider("proxy", {"type": "anthropic", "base_url": server.base_url}).complete(MESSAGES, model="m")
    assert "x-api-key" not in server.requests[0].headers


def test_messages_are_merged_so_roles_alternate():
    system, turns = to_anthropic([
        Message("system", "a"), Message("system", "b"), Message("user", "u1"), Message("user", "u2"),
        Message("assistant", "r1"), Message("user", "u3"),
    ])
    assert system == "a\n\nb"
    assert turns == [{"role": "user", "content": "u1\n\nu2"}, {"role": "assistant", "content": "r1"},
                     {"role": "user", "content": "u3"}]


# -- Anthropic-compatible gateways: ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN, the reply budget ------------


@pytest.fixture
def clean_env(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def builtin(**spec) -> AnthropicProvider:
    return AnthropicProvider("anthropic", {"type": "anthropic", "retry_backoff": 0.01, **spec})


def test_a_local_anthropic_base_url_works_without_a_key(server, clean_env):
    clean_env.setenv("ANTHROPIC_BASE_URL", server.base_url)
    assert builtin().complete(MESSAGES, model="local").text == "We decided to ship on Friday."
    req = server.requests[0]
    assert req.path == "/v1/messages"
    assert "x-api-key" not in req.headers and "authorization" not in req.headers


def test_anthropic_auth_token_is_sent_as_a_bearer_token(server, clean_env):
    clean_env.setenv("ANTHROPIC_BASE_URL", server.base_url)
    clean_env.setenv("ANTHROPIC_AUTH_TOKEN", SECRET)
    builtin().complete(MESSAGES, model="m")
    req = server.requests[0]
    assert req.headers["authorization"] == f"Bearer {SECRET}"
    assert "x-api-key" not in req.headers


def test_a_gateway_gets_the_key_the_environment_pairs_with_it(server, clean_env):
    clean_env.setenv("ANTHROPIC_BASE_URL", server.base_url + "/v1")
    clean_env.setenv("ANTHROPIC_API_KEY", SECRET)
    builtin().complete(MESSAGES, model="m")
    assert server.requests[0].headers["x-api-key"] == SECRET and server.requests[0].path == "/v1/messages"


def test_anthropics_own_api_accepts_an_auth_token_instead_of_a_key(clean_env):
    clean_env.setenv("ANTHROPIC_AUTH_TOKEN", SECRET)
    call = builtin()._call(MESSAGES, "claude-sonnet-4-5", None, None, stream=False)
    assert call.endpoint == "https://api.anthropic.com/v1/messages"
    assert call.headers["Authorization"] == f"Bearer {SECRET}" and SECRET in call.secrets


def test_a_configured_base_url_gets_only_the_token_it_names(server, clean_env):
    clean_env.setenv("ANTHROPIC_AUTH_TOKEN", "not-for-this-url")
    clean_env.setenv("GATEWAY_TOKEN", SECRET)
    AnthropicProvider("gw", {"type": "anthropic", "base_url": server.base_url}).complete(MESSAGES, model="m")
    assert "authorization" not in server.requests[0].headers
    AnthropicProvider("gw", {"type": "anthropic", "base_url": server.base_url, "auth_token_env": "GATEWAY_TOKEN"}).complete(MESSAGES, model="m")
    assert server.requests[1].headers["authorization"] == f"Bearer {SECRET}"


def test_a_bearer_token_never_appears_in_errors(clean_env, closed_port):
    clean_env.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{closed_port}/{SECRET}")
    clean_env.setenv("ANTHROPIC_AUTH_TOKEN", SECRET)
    with pytest.raises(ProviderError) as err:
        builtin(max_retries=0).complete(MESSAGES, model="m")
    assert SECRET not in str(err.value)


@pytest.mark.parametrize("purpose", ["chat", "vote", "rank", "summary"])
def test_the_default_reply_budget_is_the_purposes(server, key, purpose):
    provider(server).complete(MESSAGES, model="m", purpose=purpose)
    assert server.requests[0].json["max_tokens"] == DEFAULT_MAX_TOKENS[purpose]


def test_the_reply_budget_of_the_caller_then_the_agent_then_the_spec_wins(server, key):
    from rooms_cli.agents.definitions import Agent

    agent = Agent(id="scribe", directive="You write.", max_tokens=55)
    provider(server).complete(MESSAGES, model="m", agent=agent, max_tokens=77)
    provider(server, max_tokens=99).complete(MESSAGES, model="m", agent=agent)
    provider(server, max_tokens=99).complete(MESSAGES, model="m", agent=Agent(id="plain", directive="x"))
    assert [r.json["max_tokens"] for r in server.requests] == [77, 55, 99]
