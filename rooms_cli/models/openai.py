"""Any OpenAI-compatible chat-completions server: Ollama, llama.cpp, vLLM, LM Studio, OpenAI, OpenRouter.

Configured as data in .rooms.yaml (`providers:`):

    ollama:     {type: openai, ollama: true}            # OLLAMA_HOST, else http://localhost:11434/v1; no key
    local:      {type: openai, base_url: "http://127.0.0.1:8080/v1"}
    openrouter: {type: openai, base_url: "https://openrouter.ai/api/v1", api_key_env: OPENROUTER_API_KEY,
                 headers: {X-Title: rooms}}

Without `base_url` the server is OPENAI_BASE_URL, else https://api.openai.com/v1, and the key is
OPENAI_API_KEY. A key named by `api_key_env`/`api_key_file` is sent as `Authorization: Bearer`;
OPENAI_API_KEY is never sent to a `base_url` other than OpenAI's own (keys go only to their
provider). Streaming uses SSE with `stream_options.include_usage`; usage falls back to an estimate
when the server reports none.
"""

from __future__ import annotations

import os
import re
from urllib.parse import urlsplit

from rooms_cli.errors import ProviderError
from rooms_cli.models.base import Completion, Provider, Usage, estimate_tokens
from rooms_cli.models.http import (
    Call,
    HttpSettings,
    is_event_stream,
    open_response,
    post_json,
    read_json,
    read_key,
    sse_events,
)

OPENAI_URL = "https://api.openai.com/v1"
OLLAMA_URL = "http://localhost:11434/v1"


def ollama_base_url(host: str | None) -> str:
    """OLLAMA_HOST (`host`, `host:port` or a URL) -> the OpenAI-compatible base URL of that server."""
    host = (host or "").strip()
    if not host:
        return OLLAMA_URL
    if "://" not in host:
        host = "http://" + host
    parts = urlsplit(host)
    netloc = parts.netloc or "localhost"
    if parts.port is None and not netloc.endswith("]"):
        netloc += ":11434"
    elif netloc.endswith("]"):  # bare IPv6 literal
        netloc += ":11434"
    path = parts.path.rstrip("/")
    if not path.endswith("/v1"):
        path += "/v1"
    return f"{parts.scheme}://{netloc}{path}"


def wire_message(message) -> dict:
    """A message as OpenAI wants it: `name` only of [A-Za-z0-9_-], at most 64 (ids may hold dots)."""
    data = message.to_json()
    if data.get("name"):
        data["name"] = re.sub(r"[^A-Za-z0-9_-]", "_", data["name"])[:64]
    return data


def prompt_chars(messages) -> int:
    return sum(len(m.content) for m in messages)


class OpenAIProvider(Provider):
    type = "openai"

    def base_url(self) -> str:
        """The server this provider talks to (resolved from the spec and the environment)."""
        if self.spec.get("base_url"):
            return str(self.spec["base_url"]).rstrip("/")
        if self.spec.get("ollama"):
            return ollama_base_url(os.environ.get("OLLAMA_HOST"))
        return (os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")

    def key_source(self) -> str | None:
        """Where the key comes from (an env var name or a file path), for display; never the key."""
        if self.spec.get("api_key_file"):
            return f"file {self.spec['api_key_file']}"
        if self.spec.get("api_key_env"):
            return f"${self.spec['api_key_env']}"
        if not self.spec.get("base_url") and not self.spec.get("ollama"):
            return "$OPENAI_API_KEY"
        return None

    def _key(self) -> str | None:
        uses_openai = not self.spec.get("base_url") and not self.spec.get("ollama")
        # OPENAI_API_KEY goes only to OpenAI (or OPENAI_BASE_URL): never leak it to another server
        fallback = "OPENAI_API_KEY" if uses_openai else None
        required = uses_openai and urlsplit(self.base_url()).hostname == "api.openai.com"
        spec = self.spec
        if uses_openai and not required and spec.get("api_key_env") == "OPENAI_API_KEY":
            # OPENAI_BASE_URL points at another server (often a local one): its key is optional
            spec = {k: v for k, v in spec.items() if k != "api_key_env"}
        return read_key(self.name, spec, fallback_env=fallback, required=required)

    def _call(self, messages, model, temperature, max_tokens, stream: bool) -> Call:
        model = model or self.spec.get("model") or ""
        if not model:
            raise ProviderError(
                f"provider {self.name!r} needs a model name: write {self.name}:MODEL (e.g. {self.name}:llama3.2), "
                f"or set providers.{self.name}.model in .rooms.yaml"
            )
        key = self._key()
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream" if stream else "application/json"}
        headers.update(self.spec_headers())
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body: dict = {"model": model, "messages": [wire_message(m) for m in messages], "stream": stream}
        if temperature is not None:
            body["temperature"] = temperature
        if max_tokens:
            body["max_tokens"] = int(max_tokens)
        if stream:
            body["stream_options"] = {"include_usage": True}
        base = self.base_url()
        return Call(
            provider=self.name, url=base, endpoint=f"{base}/chat/completions", headers=headers, body=body,
            settings=HttpSettings.from_spec(self.spec), secrets=[key] if key else [],
        )

    def spec_headers(self) -> dict[str, str]:
        headers = self.spec.get("headers") or {}
        return {str(k): str(v) for k, v in headers.items()} if isinstance(headers, dict) else {}

    async def _acomplete(self, messages, *, model, temperature, max_tokens, on_delta, agent, purpose) -> Completion:
        call = self._call(messages, model, temperature, max_tokens, stream=on_delta is not None)
        if on_delta is None:
            return self._parse(call, await post_json(call), messages)
        return await self._stream(call, messages, on_delta)

    def _parse(self, call: Call, data: dict, messages) -> Completion:
        if "error" in data and not data.get("choices"):
            err = data["error"]
            raise call.error(f"the server answered with an error: {err.get('message') if isinstance(err, dict) else err}")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise call.error("the reply has no choices (not an OpenAI chat-completions answer?)")
        message = choices[0].get("message") or {}
        text = message.get("content") or ""
        if not isinstance(text, str):
            raise call.error("the reply's message content is not text")
        return Completion(
            text=text, usage=_usage(data.get("usage"), messages, text), finish_reason=choices[0].get("finish_reason"),
        )

    async def _stream(self, call: Call, messages, on_delta) -> Completion:
        parts: list[str] = []
        progress = [0]
        finish_reason = None
        usage_data = None
        done = False
        async with open_response(call) as response:
            if not is_event_stream(response):  # a server that ignores `stream`: take the whole reply
                completion = self._parse(call, await read_json(call, response), messages)
                if completion.text:
                    on_delta(completion.text)
                return completion
            async for event in sse_events(call, response, progress):
                if event.data.strip() == "[DONE]":
                    done = True
                    break
                chunk = event.json(call)
                if not isinstance(chunk, dict):
                    raise call.error(f"unexpected event in the stream: {event.data[:120]!r}")
                if chunk.get("error"):
                    err = chunk["error"]
                    raise call.error(
                        f"the server reported an error mid-stream: {err.get('message') if isinstance(err, dict) else err}"
                    )
                if chunk.get("usage"):
                    usage_data = chunk["usage"]
                for choice in chunk.get("choices") or []:
                    if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                        continue
                    piece = (choice.get("delta") or {}).get("content")
                    if piece:
                        parts.append(piece)
                        progress[0] += len(piece)
                        on_delta(piece)
                    if choice.get("finish_reason"):
                        finish_reason = choice["finish_reason"]
        if not done and finish_reason is None:
            raise call.error(
                f"the stream ended before the reply was complete (no finish_reason, no [DONE]) after "
                f"{progress[0]} characters; the partial reply was dropped"
            )
        text = "".join(parts)
        return Completion(text=text, usage=_usage(usage_data, messages, text), finish_reason=finish_reason)


def _usage(data, messages, text: str) -> Usage:
    """Usage from an OpenAI `usage` object, estimated (4 characters a token) where it is missing."""
    data = data if isinstance(data, dict) else {}
    prompt, completion = data.get("prompt_tokens"), data.get("completion_tokens")
    return Usage(
        input_tokens=int(prompt) if isinstance(prompt, int) else estimate_tokens("x" * prompt_chars(messages)),
        output_tokens=int(completion) if isinstance(completion, int) else estimate_tokens(text),
    )
