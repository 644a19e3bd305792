"""The engine itself, spoken to with plain httpx: what the openai provider relies on holds for llama.cpp."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

pytestmark = pytest.mark.integration


def chat(server, **body) -> httpx.Response:
    body.setdefault("messages", [{"role": "user", "content": "Hello there, héllo 🙂 — how are you?"}])
    return httpx.post(f"{server.base_url}/chat/completions", json={"model": "tiny", **body}, timeout=30)


def test_chat_completion_has_openai_shape_and_usage(llama_server):
    reply = chat(llama_server, max_tokens=8)
    assert reply.status_code == 200, reply.text
    data = reply.json()
    choice = data["choices"][0]
    assert choice["message"]["role"] == "assistant"
    assert isinstance(choice["message"]["content"], str)
    assert choice["finish_reason"] in ("length", "stop")
    usage = data["usage"]
    assert 0 < usage["completion_tokens"] <= 8
    # every character of the prompt is at least one token in the tiny vocabulary
    assert usage["prompt_tokens"] >= len("Hello there, héllo 🙂 — how are you?")
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_max_tokens_caps_the_reply(llama_server):
    data = chat(llama_server, max_tokens=3, temperature=1.0).json()
    assert data["usage"]["completion_tokens"] <= 3


def test_fixed_seed_repeats_the_reply_exactly(llama_server):
    first = chat(llama_server, max_tokens=12, seed=7).json()["choices"][0]["message"]["content"]
    again = chat(llama_server, max_tokens=12, seed=7).json()["choices"][0]["message"]["content"]
    assert first == again


def test_streaming_sends_deltas_a_finish_reason_usage_and_done(llama_server):
    body = {
        "model": "tiny", "max_tokens": 6, "stream": True, "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "stream please"}],
    }
    events = []
    with httpx.stream("POST", f"{llama_server.base_url}/chat/completions", json=body, timeout=30) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        for line in reply.iter_lines():
            if line.startswith("data: "):
                events.append(line[len("data: "):])
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    assert finishes in (["length"], ["stop"])
    usage = [c["usage"] for c in chunks if c.get("usage")]
    assert len(usage) == 1 and 0 < usage[0]["completion_tokens"] <= 6
    pieces = [c["choices"][0]["delta"].get("content") for c in chunks if c["choices"]]
    assert sum(1 for p in pieces if p) >= 1


def test_request_without_messages_is_refused_with_400(llama_server):
    reply = httpx.post(f"{llama_server.base_url}/chat/completions", json={"model": "tiny"}, timeout=30)
    assert reply.status_code == 400


def test_four_requests_are_served_in_parallel_slots(llama_server):
    # long replies (`ignore_eos`: none ends early by chance), so all four are in the engine together
    ready = threading.Barrier(4)
    codes: list[int] = []

    def one(i):
        ready.wait(30)
        codes.append(chat(llama_server, max_tokens=1000, seed=i, ignore_eos=True).status_code)

    mark = llama_server.log_mark()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert codes == [200] * 4
    assert llama_server.busiest(mark) == 4, llama_server.engine_events(mark)


def test_any_utf8_text_tokenizes_and_comes_back_unchanged(llama_server):
    # the byte tokens <0x00>…<0xFF> cover what the printable pieces do not
    text = "Grüße, 世界 🙂 — tabs\tand\nnewlines, `code` & <tags>"
    tokens = httpx.post(f"{llama_server.url}/tokenize", json={"content": text}, timeout=30).json()["tokens"]
    assert len(text) <= len(tokens) <= len(text.encode("utf-8")) + 1  # + SentencePiece's leading "▁"
    back = httpx.post(f"{llama_server.url}/detokenize", json={"tokens": tokens}, timeout=30).json()["content"]
    assert back.strip() == text
