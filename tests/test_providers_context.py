"""Context fitted to the server: the window learned from llama.cpp, vLLM and Ollama, the server's
tokenizer, the conservative estimate, a prompt refused as too long (every server's wording) and
multi-line server errors shown as one line. Real HTTP servers on 127.0.0.1 (tests/fakeserver.py)."""

from __future__ import annotations

import asyncio
import json

import pytest
from fakeserver import FakeServer, Reply
from hypothesis import given
from hypothesis import strategies as st

from rooms_cli.agents.definitions import Agent
from rooms_cli.core.errors import ContextOverflow, ProviderError
from rooms_cli.models.anthropic import AnthropicProvider
from rooms_cli.models.base import Message
from rooms_cli.models.base import estimate_tokens as base_estimate
from rooms_cli.models.command import CommandProvider
from rooms_cli.models.http import one_line
from rooms_cli.models.offline import OfflineProvider
from rooms_cli.models.openai import OpenAIProvider
from rooms_cli.models.tokens import clip_to_tokens, estimate_tokens

MESSAGES = [Message("system", "You are terse."), Message("user", "Hello there.")]


@pytest.fixture
def server():
    with FakeServer("Fine.") as s:
        yield s


def openai(server: FakeServer, **spec) -> OpenAIProvider:
    return OpenAIProvider("local", {"type": "openai", "base_url": server.openai_url, "retry_backoff": 0.01, **spec})


def run(coro):
    return asyncio.run(coro)


# -- the window -----------------------------------------------------------------------------------

def test_the_window_is_learned_from_llamacpp_props_once_per_process(server):
    server.n_ctx = 2048
    provider = openai(server)
    assert run(provider.context_window("m")) == 2048
    assert run(openai(server).context_window("m")) == 2048  # another provider object, same server
    assert [p.path for p in server.probes] == ["/props"]
    assert server.requests == []  # asking about the server is not a model call


def test_a_smaller_configured_window_caps_the_servers(server):
    server.n_ctx = 8192
    assert run(openai(server, context_window=4096).context_window("m")) == 4096
    assert run(openai(server, context_window=65536).context_window("m")) == 8192


def test_the_window_comes_from_vllm_models_when_there_are_no_props():
    with FakeServer("x", model="m") as server:
        server.max_model_len = 4096
        assert run(openai(server).context_window("m")) == 4096
        assert [p.path for p in server.probes] == ["/props", "/v1/models"]


def test_the_window_comes_from_ollama_show(server, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", server.base_url)
    server.ollama_show = {"parameters": "stop \"<|im_end|>\"\nnum_ctx 3072", "model_info": {"llama.context_length": 131072}}
    provider = OpenAIProvider("ollama", {"type": "openai", "ollama": True})
    assert run(provider.context_window("llama3.2")) == 3072
    probe = server.probes[-1]
    assert probe.path == "/api/show" and probe.json == {"model": "llama3.2"}


def test_an_ollama_model_without_num_ctx_gets_ollamas_default_window():
    with FakeServer("x") as server:
        server.ollama_show = {"parameters": "", "model_info": {"qwen2.context_length": 32768}}
        assert run(openai(server).context_window("qwen")) == 4096


def test_a_server_that_says_nothing_falls_back_to_the_config_then_the_agent_then_none(server):
    assert run(openai(server).context_window("m")) is None
    assert run(openai(server, context_window=3000).context_window("m")) == 3000
    assert run(openai(server).context_window("m", agent=Agent(id="a", directive="x", context_window=1024))) == 1024


def test_a_server_that_is_down_gives_no_window_and_no_error():
    provider = OpenAIProvider("gone", {"type": "openai", "base_url": "http://127.0.0.1:9/v1"})
    assert run(provider.context_window("m")) is None


@pytest.mark.parametrize("provider", [
    OfflineProvider("offline", {"type": "offline", "context_window": 2048}),
    CommandProvider("prog", {"type": "command", "command": ["true"], "context_window": 2048}),
    AnthropicProvider("claude", {"type": "anthropic", "context_window": 2048}),
])
def test_other_provider_types_take_the_configured_window(provider):
    assert run(provider.context_window("m")) == 2048


# -- counting -------------------------------------------------------------------------------------

def test_tokens_are_counted_by_llamacpps_tokenizer_and_remembered(server):
    server.n_ctx = 2048
    server.tokenize = lambda text: 3 * len(text)
    provider = openai(server)
    assert run(provider.count_tokens("m", "abcd")) == 12
    assert run(provider.count_tokens("m", "abcd")) == 12
    assert [p.path for p in server.probes] == ["/props", "/tokenize"]


def test_a_server_without_a_tokenizer_gets_the_estimate(server):
    assert run(openai(server).count_tokens("m", "deadbeef" * 10)) == estimate_tokens("deadbeef" * 10)
    assert run(OfflineProvider("offline").count_tokens("", "héllo wörld")) == estimate_tokens("héllo wörld")


def test_the_old_estimate_name_still_works():
    assert base_estimate is estimate_tokens


CODE = (
    'def reply_limit(purpose, *, agent=None, provider_spec=None, override=None):\n'
    '    for value in (override, getattr(agent, "max_tokens", None)):\n'
    '        if isinstance(value, int) and value > 0:\n'
    '            return value\n'
    '    return DEFAULT_MAX_TOKENS.get(purpose, 600)\n'
) * 3
# Token counts of these texts by SmolLM2-135M-Instruct's tokenizer (llama.cpp POST /tokenize),
# measured for docs/providers.md: the estimate must never be more than ~10% under them.
MEASURED = {
    "hex dump": (" ".join(f"{b:02x}" for b in range(256)) * 2, 1288),
    "compact hex": ("0123456789abcdef" * 64, 768),
    "digits": (" ".join(str(10**8 + i * 7919) for i in range(60)), 599),
    "json": (json.dumps([{"id": f"t-{i:04d}", "status": "open", "score": 0.5 + i} for i in range(30)]), 771),
    "cjk": ("这是一个用于测试分词器的中文句子。" * 10, 230),
    "prose": ("The parser ships on Friday unless the review finds a blocker in the error paths. " * 10, 171),
    "code": (CODE, 231),
    "emoji": ("ship it 🚀🔥 " * 20, 161),
}


@pytest.mark.parametrize("kind", sorted(MEASURED))
def test_the_estimate_does_not_undercount_what_smollm2_measured(kind):
    text, real = MEASURED[kind]
    assert 0.9 * real <= estimate_tokens(text) <= 1.6 * real


def test_hex_is_not_counted_at_four_characters_a_token():
    dump = " ".join(f"{b:02x}" for b in range(256)) * 10
    assert estimate_tokens(dump) > len(dump) / 2


@given(st.text(max_size=300))
def test_the_estimate_grows_with_the_text_and_clip_fits(text):
    assert estimate_tokens(text) >= (1 if text else 0)
    limit = max(1, estimate_tokens(text) // 2)
    clipped = clip_to_tokens(text, limit)
    assert text.startswith(clipped) and estimate_tokens(clipped) <= limit


# -- a prompt that does not fit -------------------------------------------------------------------

OVERFLOWS = {
    "llama.cpp": (400, {"error": {"code": 400, "message": "request (3031 tokens) exceeds the available context size "
                                  "(2048 tokens), try increasing it", "type": "exceed_context_size_error",
                                  "n_prompt_tokens": 3031, "n_ctx": 2048}}, 2048, 3031),
    "openai": (400, {"error": {"message": "This model's maximum context length is 8192 tokens. However, your messages "
                               "resulted in 9000 tokens. Please reduce the length of the messages.",
                               "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}},
               8192, 9000),
    "vllm": (400, {"object": "error", "message": "This model's maximum context length is 2048 tokens. However, you "
                   "requested 2100 tokens (2000 in the messages, 100 in the completion). Please reduce the length of "
                   "the messages or completion.", "type": "BadRequestError", "code": 400}, 2048, 2100),
    "llama.cpp (old, 500)": (500, {"error": {"code": 500, "message": "input is too large to process. increase the "
                                             "physical batch size", "type": "server_error"}}, None, None),
}


@pytest.mark.parametrize("server_kind", sorted(OVERFLOWS))
@pytest.mark.parametrize("stream", [False, True])
def test_a_prompt_the_server_refuses_as_too_long_is_a_context_overflow_not_retried(server, server_kind, stream):
    status, body, n_ctx, n_prompt = OVERFLOWS[server_kind]
    server.push(Reply(status=status, body=json.dumps(body)))
    with pytest.raises(ContextOverflow) as caught:
        openai(server).complete(MESSAGES, model="m", on_delta=(lambda _: None) if stream else None)
    err = caught.value
    assert (err.n_ctx, err.n_prompt) == (n_ctx, n_prompt)
    assert "context_window" in err.message and "max_tokens" in err.message and "\n" not in err.message
    assert err.code == "context_overflow" and err.exit_code == 1
    assert len(server.requests) == 1  # the same prompt would never fit: no retry


def test_anthropics_prompt_is_too_long_is_a_context_overflow(server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    server.push(Reply(status=400, body=json.dumps({"type": "error", "error": {
        "type": "invalid_request_error", "message": "prompt is too long: 208310 tokens > 200000 maximum"}})))
    provider = AnthropicProvider("claude", {"type": "anthropic", "base_url": server.base_url, "api_key_env": "ANTHROPIC_API_KEY"})
    with pytest.raises(ContextOverflow) as caught:
        provider.complete(MESSAGES, model="m")
    assert (caught.value.n_ctx, caught.value.n_prompt) == (200000, 208310)


def test_an_ordinary_400_is_not_a_context_overflow(server):
    server.push(Reply(status=400, error="model 'nope' not found"))
    with pytest.raises(ProviderError) as caught:
        openai(server).complete(MESSAGES, model="nope")
    assert not isinstance(caught.value, ContextOverflow)


# -- one line -------------------------------------------------------------------------------------

JINJA = (
    "Conversation roles must alternate user/assistant/user/assistant/...\n"
    "Traceback (most recent call last):\n"
    '  File "<template>", line 1, in top-level template code\n'
    "jinja2.exceptions.TemplateError: Conversation roles must alternate\n"
    "{% if messages[0]['role'] == 'system' %}\n"
)


@pytest.mark.parametrize("body", [
    json.dumps({"error": {"code": 400, "message": JINJA, "type": "invalid_request_error"}}),
    JINJA,  # not even JSON
])
def test_a_chat_template_error_is_reported_as_one_clear_line(server, body):
    server.push(Reply(status=400, body=body))
    with pytest.raises(ProviderError) as caught:
        openai(server).complete(MESSAGES, model="m")
    message = caught.value.message
    assert "\n" not in message and "Conversation roles must alternate user/assistant" in message
    assert "Traceback" not in message and "{%" not in message


def test_one_line_skips_noise_and_trims():
    assert one_line("\n\nTraceback (most recent call last):\n  File \"x\", line 1\nValueError: bad thing\n") == "ValueError: bad thing"
    assert one_line("Error:\n  the real reason  \nmore") == "the real reason"
    assert len(one_line("word " * 200)) <= 300 and one_line("word " * 200).endswith("…")


def test_llamacpps_template_failure_is_shown_with_the_templates_own_words():
    # the body llama.cpp (xllamacpp 2026.10) sends for a strict template and roles that do not alternate
    message = (
        "Unable to generate parser for this template. Automatic parser generation failed: \n------------\n"
        "While executing CallExpression at line 3, column 174 in source:\n"
        "...op.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user...\n"
        "                                           ^\n"
        "Error: Jinja Exception: Conversation roles must alternate user/assistant/user/assistant/..."
    )
    assert one_line(message) == (
        "Unable to generate parser for this template. Conversation roles must alternate user/assistant/user/assistant/..."
    )


def test_openrouters_models_list_gives_the_window():
    from rooms_cli.models.openai import models_window

    assert models_window({"data": [{"id": "meta/llama", "context_length": 131072}]}, "meta/llama") == 131072
    assert models_window({"data": [{"id": "other", "context_length": 5}]}, "meta/llama") is None
    assert models_window("not json", "m") is None


def test_an_unreachable_server_costs_one_refused_connection(closed_port):
    import time

    provider = OpenAIProvider("gone", {"type": "openai", "base_url": f"http://127.0.0.1:{closed_port}/v1"})
    start = time.monotonic()
    assert run(provider.context_window("m")) is None and run(provider.count_tokens("m", "abc")) == estimate_tokens("abc")
    assert time.monotonic() - start < 5


def test_claude_on_anthropics_api_has_its_documented_window(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    provider = AnthropicProvider("anthropic", {"type": "anthropic"})
    assert run(provider.context_window("claude-sonnet-4-5")) == 200_000
    assert run(AnthropicProvider("anthropic", {"type": "anthropic", "context_window": 50_000}).context_window("claude-x")) == 50_000


def test_an_anthropic_gateway_that_is_llamacpp_gives_its_window_and_tokenizer(server):
    server.n_ctx = 4096
    server.tokenize = lambda text: 2 * len(text)
    provider = AnthropicProvider("gw", {"type": "anthropic", "base_url": server.base_url})
    assert run(provider.context_window("tiny")) == 4096
    assert run(provider.count_tokens("tiny", "abc")) == 6
    assert [p.path for p in server.probes] == ["/props", "/tokenize"]


@given(st.text(max_size=2000))
def test_any_server_text_becomes_one_short_line(text):
    line = one_line(text)
    assert "\n" not in line and "\r" not in line and len(line) <= 300


@given(st.binary(max_size=500))
def test_any_error_body_is_read_without_failing(raw):
    from rooms_cli.models.http import Call, HttpSettings, context_overflow, error_detail

    message, err = error_detail(raw)
    assert "\n" not in message and isinstance(err, dict)
    call = Call(provider="p", url="u", endpoint="u", headers={}, body={}, settings=HttpSettings())
    overflow = context_overflow(call, message, err)
    assert overflow is None or isinstance(overflow, ContextOverflow)


def test_clipping_a_big_message_is_one_pass():
    import time

    text = "3f a9 0c " * 20_000  # 180 KB of hex dump
    start = time.monotonic()
    clipped = clip_to_tokens(text, 2000)
    assert time.monotonic() - start < 2.0  # a binary search of whole estimates took seconds
    assert estimate_tokens(clipped) <= 2000 < estimate_tokens(clipped + " 3f a9")
    assert estimate_tokens("\x1b[31m") >= 5  # control characters count too


def test_an_overflow_reported_inside_a_stream_is_a_context_overflow_too(server, monkeypatch):
    server.push(Reply(text="partial", stream_error="request (5000 tokens) exceeds the available context size (4096 tokens)"))
    with pytest.raises(ContextOverflow) as caught:
        openai(server).complete(MESSAGES, model="m", on_delta=lambda _: None)
    assert (caught.value.n_ctx, caught.value.n_prompt) == (4096, 5000)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    server.push(Reply(text="partial", stream_error="prompt is too long: 210000 tokens > 200000 maximum"))
    provider = AnthropicProvider("claude", {"type": "anthropic", "base_url": server.base_url, "api_key_env": "ANTHROPIC_API_KEY"})
    with pytest.raises(ContextOverflow):
        provider.complete(MESSAGES, model="m", on_delta=lambda _: None)


def test_forget_servers_forgets_windows_and_refused_fields(server):
    from rooms_cli.models.base import forget_servers

    server.n_ctx = 2048
    assert run(openai(server).context_window("m")) == 2048
    server.n_ctx = 4096
    assert run(openai(server).context_window("m")) == 2048  # remembered
    forget_servers()
    assert run(openai(server).context_window("m")) == 4096
