"""The openai provider against a real OpenAI-compatible HTTP server on 127.0.0.1 (tests/fakeserver.py)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from email.utils import formatdate
from pathlib import Path

import pytest
from fakeserver import FakeServer, Reply

from rooms_cli.core.errors import ProviderError
from rooms_cli.models import get_provider
from rooms_cli.models.base import Message
from rooms_cli.models.http import ProviderTimeout
from rooms_cli.models.openai import OpenAIProvider, ollama_base_url
from rooms_cli.models.tokens import estimate_tokens
from rooms_cli.project.config import Config

MESSAGES = [Message("system", "You are terse."), Message("user", "Say hello to the team.")]
SECRET = "sk-test-SECRET-0123456789abcdef"


@pytest.fixture
def server():
    with FakeServer("Hello team, good to see you.") as s:
        yield s


def provider(server: FakeServer, name: str = "local", **spec) -> OpenAIProvider:
    return OpenAIProvider(name, {"type": "openai", "base_url": server.openai_url, "retry_backoff": 0.01, **spec})


def test_non_streaming_reply_carries_text_usage_and_the_request_is_the_documented_body(server):
    server.push(Reply(usage=(42, 7)))
    done = provider(server).complete(MESSAGES, model="llama3.2", temperature=0.3, max_tokens=50)
    assert done.text == "Hello team, good to see you."
    assert (done.usage.input_tokens, done.usage.output_tokens) == (42, 7)
    assert done.model == "local:llama3.2" and done.finish_reason == "stop" and not done.offline
    req = server.requests[0]
    assert req.path == "/v1/chat/completions" and req.method == "POST"
    assert req.json["model"] == "llama3.2" and req.json["stream"] is False
    assert req.json["messages"] == [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hello to the team."}]
    assert req.json["temperature"] == 0.3 and req.json["max_tokens"] == 50
    assert "authorization" not in req.headers  # no key configured: none sent
    assert server.closed_early == 0  # a finished call is not counted as a close mid-answer


def test_streaming_deltas_arrive_in_order_and_join_to_the_text(server):
    server.push(Reply(text="one two three four five", usage=(11, 5)))
    deltas: list[str] = []
    done = provider(server).complete(MESSAGES, model="m", on_delta=deltas.append)
    assert deltas == ["one ", "two ", "three ", "four ", "five"]
    assert "".join(deltas) == done.text == "one two three four five"
    assert (done.usage.input_tokens, done.usage.output_tokens) == (11, 5)
    req = server.requests[0]
    assert req.json["stream"] is True and req.json["stream_options"] == {"include_usage": True}
    assert req.headers["accept"] == "text/event-stream"
    assert server.closed_early == 0


def test_deltas_are_delivered_as_they_arrive_not_at_the_end(server):
    server.push(Reply(text="a b c d", chunk_delay=0.15))
    stamps: list[float] = []
    provider(server).complete(MESSAGES, model="m", on_delta=lambda _: stamps.append(time.monotonic()))
    assert len(stamps) == 4
    assert stamps[-1] - stamps[0] > 0.3  # spread out like the server sent them


@pytest.mark.parametrize("stream", [False, True])
def test_usage_is_estimated_when_the_server_reports_none(server, stream):
    server.push(Reply(text="x" * 40, omit_usage=True))
    done = provider(server).complete(MESSAGES, model="m", on_delta=(lambda _: None) if stream else None)
    assert done.usage.output_tokens == estimate_tokens("x" * 40)  # the conservative estimate
    assert done.usage.input_tokens > 0


def test_429_with_retry_after_waits_as_told_then_succeeds(server):
    server.push(Reply.rate_limited(retry_after="0.8"))
    done = provider(server).complete(MESSAGES, model="m")
    assert done.text == "Hello team, good to see you."
    first, second = server.requests
    assert second.at - first.at >= 0.75  # the wait honoured Retry-After (backoff alone is ~0.01 s)


def test_retry_after_as_an_http_date_is_honoured(server):
    server.push(Reply.rate_limited(retry_after=formatdate(time.time() + 2, usegmt=True)))
    provider(server).complete(MESSAGES, model="m")
    first, second = server.requests
    assert second.at - first.at >= 0.5  # one-second resolution: at least the remaining part of it


def test_retry_after_is_capped_by_max_retry_wait(server):
    server.push(Reply.rate_limited(retry_after="3600"))
    start = time.monotonic()
    provider(server, max_retry_wait=0.2).complete(MESSAGES, model="m")
    assert time.monotonic() - start < 5


def test_500_a_few_times_then_success_within_max_retries(server):
    server.fail(2, status=503)
    assert provider(server).complete(MESSAGES, model="m").text.startswith("Hello")
    assert len(server.requests) == 3


def test_500_every_time_ends_in_one_clear_error_after_max_retries(server):
    server.fail(10, status=500, message="the GPU caught fire")
    with pytest.raises(ProviderError) as err:
        provider(server, max_retries=2).complete(MESSAGES, model="m")
    msg = str(err.value)
    assert msg == f"provider 'local' ({server.openai_url}): HTTP 500 after 3 tries: the GPU caught fire"
    assert len(server.requests) == 3


def test_rate_limit_every_time_says_so(server):
    server.set_default(Reply.rate_limited(retry_after="0"))
    with pytest.raises(ProviderError, match=r"rate limited \(HTTP 429\) after 2 tries"):
        provider(server, max_retries=1).complete(MESSAGES, model="m")


def test_client_errors_are_not_retried(server):
    server.push(Reply.server_error(400, "model 'nope' not found"))
    with pytest.raises(ProviderError, match=r"HTTP 400: model 'nope' not found"):
        provider(server).complete(MESSAGES, model="nope")
    assert len(server.requests) == 1


def test_connection_refused_is_retried_then_a_clear_error(closed_port):
    port = closed_port
    p = OpenAIProvider("ollama", {"type": "openai", "base_url": f"http://127.0.0.1:{port}/v1", "retry_backoff": 0.01})
    with pytest.raises(ProviderError) as err:
        p.complete(MESSAGES, model="m")
    assert str(err.value) == (
        f"provider 'ollama' (http://127.0.0.1:{port}/v1): connection refused after 4 tries; is the server running?"
    )


def test_a_stream_cut_mid_way_is_an_error_never_a_half_message(server):
    server.push(Reply.cut(after=2, text="one two three four"))
    deltas: list[str] = []
    with pytest.raises(ProviderError, match="cut off mid-reply after 8 characters"):
        provider(server).complete(MESSAGES, model="m", on_delta=deltas.append)
    assert deltas == ["one ", "two "]
    assert len(server.requests) == 1  # text was already streamed: never retried


def test_a_stream_that_stops_before_the_end_is_an_error(server):
    server.push(Reply(end_early=True))
    with pytest.raises(ProviderError, match="ended before the reply was complete"):
        provider(server).complete(MESSAGES, model="m", on_delta=lambda _: None)


def test_a_non_streaming_body_cut_mid_way_is_an_error(server):
    server.push(Reply.cut(after=0))
    with pytest.raises(ProviderError, match="cut before the reply was complete"):
        provider(server).complete(MESSAGES, model="m")


def test_invalid_json_reply_is_a_clear_error(server):
    server.push(Reply.invalid_json())
    with pytest.raises(ProviderError, match="the reply is not valid JSON"):
        provider(server).complete(MESSAGES, model="m")


def test_invalid_json_in_the_stream_is_a_clear_error(server):
    server.push(Reply(bad_json_after=1))
    with pytest.raises(ProviderError, match="invalid JSON in the event stream"):
        provider(server).complete(MESSAGES, model="m", on_delta=lambda _: None)


def test_an_error_event_mid_stream_is_a_provider_error(server):
    server.push(Reply(stream_error="server overloaded"))
    with pytest.raises(ProviderError, match="error mid-stream: server overloaded"):
        provider(server).complete(MESSAGES, model="m", on_delta=lambda _: None)


def test_a_silent_server_times_out_and_the_connection_is_closed(server):
    server.push(Reply.hanging())
    start = time.monotonic()
    with pytest.raises(ProviderTimeout, match=r"no answer within 0.5 s \(timeout\)"):
        provider(server, timeout=0.5).complete(MESSAGES, model="m")
    assert time.monotonic() - start < 3
    assert server.wait_closed_early(1, timeout=3)


def test_a_stream_that_stalls_times_out(server):
    server.push(Reply(text="a b c", chunk_delay=2.0))
    with pytest.raises(ProviderTimeout, match="stream stalled"):
        provider(server, timeout=0.4).complete(MESSAGES, model="m", on_delta=lambda _: None)


def test_cancelling_mid_stream_closes_the_connection_at_once(server):
    server.push(Reply(text="w " * 40, chunk_delay=0.2))

    async def scenario():
        first = asyncio.Event()
        task = asyncio.create_task(provider(server).acomplete(MESSAGES, model="m", on_delta=lambda _: first.set()))
        await asyncio.wait_for(first.wait(), 5)
        task.cancel()
        cancelled_at = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await task
        return cancelled_at

    cancelled_at = asyncio.run(scenario())
    assert server.wait_closed_early(1, timeout=3)
    assert server.requests[0].closed_at - cancelled_at < 1.0


def test_cancelling_while_waiting_for_the_answer_closes_the_connection(server):
    server.push(Reply.hanging())

    async def scenario():
        task = asyncio.create_task(provider(server).acomplete(MESSAGES, model="m"))
        await asyncio.to_thread(server.wait_requests, 1, 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic()

    cancelled_at = asyncio.run(scenario())
    assert server.wait_closed_early(1, timeout=3)
    assert server.requests[0].closed_at - cancelled_at < 1.0


def test_calls_run_in_parallel_with_asyncio(server):
    server.set_default(Reply(delay=0.4))
    p = provider(server)

    async def scenario():
        return await asyncio.gather(*(p.acomplete(MESSAGES, model="m") for _ in range(6)))

    start = time.monotonic()
    results = asyncio.run(scenario())
    elapsed = time.monotonic() - start
    assert len(results) == 6 and all(r.text for r in results)
    assert elapsed < 6 * 0.4 * 0.6  # serial would take 2.4 s


def test_key_is_sent_as_bearer_and_never_appears_in_errors_or_repr(server, monkeypatch):
    monkeypatch.setenv("MY_LLM_KEY", SECRET)
    server.push(Reply.server_error(401, f"Incorrect API key provided: {SECRET}"))
    p = provider(server, api_key_env="MY_LLM_KEY")
    with pytest.raises(ProviderError) as err:
        p.complete(MESSAGES, model="m")
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    text = str(err.value) + repr(err.value) + repr(p) + repr(p.spec) + str(err.value.to_json())
    assert SECRET not in text
    assert "HTTP 401" in text and "****" in text and "check the API key" in text


def test_key_file_is_read_outside_the_repo(server, tmp_path):
    key_file = tmp_path / "key.txt"
    key_file.write_text(SECRET + "\n")
    provider(server, api_key_file=str(key_file)).complete(MESSAGES, model="m")
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


def test_missing_key_error_names_both_fixes(server):
    with pytest.raises(ProviderError) as err:
        provider(server, name="openrouter", api_key_env="OPENROUTER_API_KEY").complete(MESSAGES, model="m")
    msg = str(err.value)
    assert "export OPENROUTER_API_KEY=" in msg and "api_key_env" in msg and "api_key_file" in msg and ".rooms.yaml" in msg
    assert server.requests == []


def test_openai_key_is_never_sent_to_another_server(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    provider(server).complete(MESSAGES, model="m")
    assert "authorization" not in server.requests[0].headers


def test_builtin_openai_honours_openai_base_url_and_key(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    done = get_provider("openai", Config()).complete(MESSAGES, model="gpt-4o-mini")
    assert done.model == "openai:gpt-4o-mini"
    assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"


def test_builtin_openai_without_a_key_fails_before_any_request(monkeypatch):
    with pytest.raises(ProviderError, match="export OPENAI_API_KEY="):
        get_provider("openai", Config()).complete(MESSAGES, model="gpt-4o-mini")


def test_builtin_ollama_follows_ollama_host_and_needs_no_key(server, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{server.port}")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    done = get_provider("ollama", Config()).complete(MESSAGES, model="llama3.2")
    assert done.text.startswith("Hello") and done.model == "ollama:llama3.2"
    assert "authorization" not in server.requests[0].headers


@pytest.mark.parametrize(
    "host, url",
    [
        (None, "http://localhost:11434/v1"),
        ("", "http://localhost:11434/v1"),
        ("127.0.0.1", "http://127.0.0.1:11434/v1"),
        ("gpu-box:8080", "http://gpu-box:8080/v1"),
        ("https://ollama.example.com", "https://ollama.example.com:11434/v1"),
        ("http://10.0.0.5:11434/", "http://10.0.0.5:11434/v1"),
        ("http://10.0.0.5:11434/v1", "http://10.0.0.5:11434/v1"),
    ],
)
def test_ollama_host_forms(host, url):
    assert ollama_base_url(host) == url


def test_spec_headers_are_sent(server):
    provider(server, headers={"X-Title": "rooms"}).complete(MESSAGES, model="m")
    assert server.requests[0].headers["x-title"] == "rooms"


def test_a_model_name_is_required_unless_the_spec_has_one(server):
    with pytest.raises(ProviderError, match=r"needs a model name: write local:MODEL"):
        provider(server).complete(MESSAGES, model="")
    done = provider(server, model="llama3.2").complete(MESSAGES, model="")
    assert server.requests[0].json["model"] == "llama3.2" and done.model == "local:llama3.2"


def test_startup_does_not_import_httpx():
    code = "import rooms_cli.cli.app, sys; print('httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=str(Path(__file__).resolve().parent.parent))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_base_url_without_a_scheme_is_a_clear_error():
    p = OpenAIProvider("local", {"type": "openai", "base_url": "localhost:8080/v1"})
    with pytest.raises(ProviderError, match=r"invalid URL .*fix providers.local.base_url in .rooms.yaml"):
        p.complete(MESSAGES, model="m")


def test_speaker_names_are_sent_in_the_form_openai_accepts(server):
    provider(server).complete([Message("user", "hi", name="dr.who")], model="m")
    assert server.requests[0].json["messages"] == [{"role": "user", "content": "hi", "name": "dr_who"}]


def test_connect_timeout_applies_when_the_server_never_accepts():
    # a listening socket whose backlog is full: the kernel drops further SYNs, so connecting hangs
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(4):
        filler = socket.socket()
        filler.setblocking(False)
        try:
            filler.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(filler)
    try:
        p = OpenAIProvider("local", {"type": "openai", "base_url": f"http://127.0.0.1:{port}/v1",
                                     "connect_timeout": 0.3, "max_retries": 1, "retry_backoff": 0.01})
        start = time.monotonic()
        with pytest.raises(ProviderError, match="connection timed out after 2 tries"):
            p.complete(MESSAGES, model="m")
        assert time.monotonic() - start < 5
    finally:
        for s in [*fillers, listener]:
            s.close()
