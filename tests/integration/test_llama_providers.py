"""The openai provider and `rooms models test` against llama.cpp's real server."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

pytestmark = pytest.mark.integration

MESSAGES = [
    ("system", "You are a terse assistant."),
    ("user", "Name three colours, héllo 🙂."),
]


def messages():
    from rooms_cli.models import Message

    return [Message(role, content) for role, content in MESSAGES]


@pytest.fixture
def provider(llama_project):
    from rooms_cli.models import get_provider
    from rooms_cli.project.config import load_config
    from rooms_cli.store.paths import open_project

    return get_provider("llamacpp", load_config(open_project(llama_project)))


def test_models_test_reports_a_streamed_round_trip_with_real_usage(llama_project, llama_server, rooms):
    run = rooms("models", "test", "llamacpp:tiny", "--json")
    assert run.exit_code == 0, run.stderr
    report = run.json()
    assert report["ok"] is True
    assert (report["provider"], report["type"], report["model"]) == ("llamacpp", "openai", "tiny")
    assert report["base_url"] == llama_server.base_url
    assert report["offline"] is False
    assert report["first_token_s"] is not None and report["first_token_s"] <= report["latency_s"]
    assert 0 < report["usage"]["output_tokens"] <= 64
    # the server's own count (about a token a character here), not the 4-characters-a-token estimate
    assert report["usage"]["input_tokens"] >= len("Reply with the single word: pong")
    assert report["finish_reason"] in ("length", "stop")


def test_models_test_of_an_agent_uses_the_agents_model(llama_project, rooms):
    run = rooms("models", "test", "archer", "--json")
    assert run.exit_code == 0, run.stderr
    assert (run.json()["agent"], run.json()["target"]) == ("archer", "llamacpp:tiny")


def test_models_test_human_output_names_the_server(llama_project, llama_server, rooms):
    run = rooms("models", "test", "llamacpp:tiny")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.startswith("ok  llamacpp:tiny")
    assert llama_server.base_url in run.stdout


def test_non_streaming_completion_reports_the_servers_usage(provider, llama_server):
    completion = provider.complete(messages(), model="tiny", max_tokens=10, temperature=0)
    raw = httpx.post(
        f"{llama_server.base_url}/chat/completions", timeout=30,
        json={"model": "tiny", "max_tokens": 10, "temperature": 0,
              "messages": [{"role": r, "content": c} for r, c in MESSAGES]},
    ).json()
    assert completion.model == "llamacpp:tiny" and completion.offline is False
    assert completion.finish_reason == raw["choices"][0]["finish_reason"]
    assert completion.text == raw["choices"][0]["message"]["content"]  # greedy: the same reply
    assert completion.usage.input_tokens == raw["usage"]["prompt_tokens"]
    assert completion.usage.output_tokens == raw["usage"]["completion_tokens"]
    assert completion.elapsed_s > 0


def test_streaming_delivers_deltas_that_add_up_to_the_reply(provider):
    pieces: list[str] = []
    streamed = provider.complete(messages(), model="tiny", max_tokens=12, temperature=0, on_delta=pieces.append)
    whole = provider.complete(messages(), model="tiny", max_tokens=12, temperature=0)
    assert len(pieces) >= 2
    assert "".join(pieces) == streamed.text == whole.text
    assert streamed.finish_reason == whole.finish_reason
    # usage came from the server's last chunk (include_usage), equal to the non-streamed count
    assert streamed.usage.to_json() == whole.usage.to_json()


@pytest.mark.parametrize("stream", [False, True])
def test_max_tokens_caps_the_reply(provider, stream):
    on_delta = (lambda piece: None) if stream else None
    completion = provider.complete(messages(), model="tiny", max_tokens=4, temperature=1.0, on_delta=on_delta)
    assert 0 < completion.usage.output_tokens <= 4
    if completion.finish_reason == "length":
        assert completion.usage.output_tokens == 4


def test_usage_grows_with_the_prompt(provider):
    from rooms_cli.models import Message

    short = provider.complete([Message("user", "hi")], model="tiny", max_tokens=2)
    long = provider.complete([Message("user", "hi " * 200)], model="tiny", max_tokens=2)
    assert long.usage.input_tokens - short.usage.input_tokens >= 400


def _slots_busy(server) -> bool:
    return any(slot.get("is_processing") for slot in httpx.get(f"{server.url}/slots", timeout=5).json())


def test_cancelling_mid_stream_stops_the_generation_on_the_server(provider, llama_server):
    # 4000 tokens take the engine a couple of seconds; cancelled after the first delta, the
    # connection is closed and llama.cpp releases the slot long before that.
    async def scenario():
        first = asyncio.Event()
        pieces: list[str] = []

        def on_delta(piece):
            pieces.append(piece)
            first.set()

        mark = llama_server.log_mark()
        task = asyncio.create_task(
            provider.acomplete(messages(), model="tiny", max_tokens=4000, temperature=1.0, on_delta=on_delta)
        )
        await asyncio.wait_for(first.wait(), 30)
        assert _slots_busy(llama_server)
        cancelled_at = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        returned_in = time.monotonic() - cancelled_at
        return pieces, mark, returned_in

    pieces, mark, returned_in = asyncio.run(scenario())
    assert pieces and returned_in < 1.0
    deadline = time.monotonic() + 10
    while _slots_busy(llama_server) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _slots_busy(llama_server)
    released = [tokens for what, _, tokens in llama_server.engine_events(mark) if what == "end"]
    # the slot was released well before the 4000 tokens asked for (prompt included)
    assert released and released[-1] < 3500, released
