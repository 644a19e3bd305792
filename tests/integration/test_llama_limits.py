"""The provider layer against llama.cpp's real server: the window from /props, counts from
/tokenize, max_tokens honoured, json_schema output, a too-long prompt as ContextOverflow, and (with
SmolLM2) a chat template's refusal as one line."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

pytestmark = pytest.mark.integration

VOTE = {"type": "object", "properties": {"vote": {"enum": ["yes", "no"]}}, "required": ["vote"],
        "additionalProperties": False}


def provider_for(server, name: str = "llamacpp"):
    from rooms_cli.models.openai import OpenAIProvider

    return OpenAIProvider(name, {"type": "openai", "base_url": server.base_url, "timeout": 120, "max_retries": 0})


def messages(*pairs):
    from rooms_cli.models import Message

    return [Message(role, content) for role, content in pairs]


ASK = messages(("system", "You are terse."), ("user", "Should we ship on Friday? Answer yes or no."))


def test_the_window_is_the_servers_per_slot_context_from_props(llama_server):
    props = httpx.get(f"{llama_server.url}/props", timeout=10).json()
    window = asyncio.run(provider_for(llama_server).context_window("tiny"))
    assert window == props["default_generation_settings"]["n_ctx"] and 0 < window <= 16384


def test_tokens_are_counted_by_the_servers_tokenizer(llama_server):
    text = "deadbeef 0123 héllo 🙂 " * 5
    real = len(httpx.post(f"{llama_server.url}/tokenize", json={"content": text}, timeout=10).json()["tokens"])
    assert asyncio.run(provider_for(llama_server).count_tokens("tiny", text)) == real


@pytest.mark.parametrize("stream", [False, True])
def test_max_tokens_is_honoured_and_a_cut_reply_is_marked(llama_server, stream):
    done = provider_for(llama_server).complete(ASK, model="tiny", max_tokens=6, on_delta=(lambda _: None) if stream else None)
    assert 0 < done.usage.output_tokens <= 6
    assert done.finish_reason in ("length", "stop") and done.cut == (done.finish_reason == "length")


def test_a_grammar_the_server_cannot_sample_falls_back_to_text(llama_server):
    # the tiny model's vocabulary has no end-of-grammar path: llama.cpp answers 400 "Failed to
    # initialize samplers"; the same request without response_format is answered
    done = provider_for(llama_server).complete(ASK, model="tiny", schema=VOTE, max_tokens=8, temperature=0)
    assert not done.structured and done.text


@pytest.mark.realmodel
def test_json_schema_output_parses(smol_server):
    done = provider_for(smol_server).complete(ASK, model="smol", schema=VOTE, max_tokens=60, temperature=0)
    assert done.structured
    assert json.loads(done.text)["vote"] in ("yes", "no")


def test_a_prompt_longer_than_the_window_is_a_context_overflow_naming_the_knob(llama_server):
    from rooms_cli.core.errors import ContextOverflow

    provider = provider_for(llama_server)
    window = asyncio.run(provider.context_window("tiny"))
    huge = messages(("user", "3f " * window * 2))
    with pytest.raises(ContextOverflow) as caught:
        provider.complete(huge, model="tiny", max_tokens=4)
    assert caught.value.n_ctx == window and caught.value.n_prompt and caught.value.n_prompt > window
    assert "context_window" in caught.value.message and "\n" not in caught.value.message


@pytest.mark.realmodel
def test_smollm2_stops_at_a_stop_string_and_reports_its_window(smol_server):
    provider = provider_for(smol_server)
    assert asyncio.run(provider.context_window("smol")) == 2048
    done = provider.complete(messages(("user", "Count from one to ten, in words, separated by commas.")),
                             model="smol", max_tokens=40, temperature=0, stop=["five"])
    assert "five" not in done.text and done.finish_reason in ("stop", "length")


@pytest.mark.realmodel
def test_a_strict_template_never_sees_two_user_messages_and_its_refusal_would_be_one_line(strict_server):
    import httpx

    from rooms_cli.models.http import error_detail

    wrong = messages(("system", "Be brief."), ("user", "ann: hi"), ("user", "bo: hello"))
    done = provider_for(strict_server).complete(wrong, model="smol", max_tokens=8)  # shaped first: models/prompt.py
    assert done.text
    raw = httpx.post(f"{strict_server.base_url}/chat/completions", timeout=120, json={
        "model": "smol", "max_tokens": 8, "messages": [m.to_json() for m in wrong]})
    assert raw.status_code == 400
    line, _ = error_detail(raw.content)
    assert "Conversation roles must alternate" in line and "\n" not in line
