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

What a request carries, and why (docs/providers.md has the table):
- the reply limit as `max_tokens`, which llama.cpp, Ollama, vLLM, LM Studio and OpenRouter all
  read; to api.openai.com as `max_completion_tokens` (OpenAI's current name; its reasoning models
  refuse `max_tokens`). A server that refuses one name and names the other gets the other, once,
  and this process remembers it.
- `stop`: the first 4 stop strings (OpenAI's limit); all of them are enforced on the text anyway.
  A server that refuses `stop` or `temperature` (OpenAI's reasoning models) is asked again
  without it, and this process stops sending it there.
- `schema`: `response_format: {type: json_schema, json_schema: {name, schema, strict: true}}`,
  which OpenAI, llama.cpp's server, vLLM and Ollama (0.5+) honour. A server that refuses it (a
  400 naming response_format or the schema) is asked again without it, and this process stops
  sending it there; the reply then has `structured` False and the caller parses the text.
- The context window: llama.cpp `GET /props` (`default_generation_settings.n_ctx`, the per-slot
  window), else `GET /v1/models` (vLLM's `max_model_len`, OpenRouter's `context_length`), else
  Ollama `POST /api/show`
  (`num_ctx`, else the model's `context_length` capped at Ollama's default 4096, since Ollama cuts
  prompts to num_ctx silently). Nothing is asked of api.openai.com.
- Token counts: llama.cpp `POST /tokenize` when the server is llama.cpp, else the estimate.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import urlsplit

from rooms_cli.core.errors import ContextOverflow, ProviderError
from rooms_cli.models import llamacpp
from rooms_cli.models.base import Completion, Delta, Message, Provider, Usage, server_cache
from rooms_cli.models.http import (
    Call,
    HttpSettings,
    is_event_stream,
    open_response,
    post_json,
    probe_json,
    read_json,
    read_key,
    reported_error,
    sse_events,
)
from rooms_cli.models.tokens import estimate_tokens

OPENAI_URL = "https://api.openai.com/v1"
OLLAMA_URL = "http://localhost:11434/v1"
OLLAMA_DEFAULT_NUM_CTX = 4096  # what Ollama gives a model whose parameters set no num_ctx
MAX_STOP = 4  # OpenAI refuses more stop strings than this

# Per process, per server (base URL): request fields the server refused, and what it is
_refused: dict[str, set[str]] = server_cache({})


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


def wire_message(message: Message) -> dict[str, Any]:
    """A message as OpenAI wants it: `name` only of [A-Za-z0-9_-], at most 64 (ids may hold dots)."""
    data = message.to_json()
    if data.get("name"):
        data["name"] = re.sub(r"[^A-Za-z0-9_-]", "_", data["name"])[:64]
    return data


def prompt_tokens(messages: list[Message]) -> int:
    """The estimated tokens of a prompt, for a server that reports no usage."""
    return sum(estimate_tokens(m.content) + 4 for m in messages)


def refused_field(err: ProviderError, body: dict[str, Any]) -> str | None:
    """The request field a 400/422 answer refused (one we can do without), else None."""
    status = (err.data or {}).get("status") if isinstance(err.data, dict) else None
    if status not in (400, 422) or isinstance(err, ContextOverflow):  # a prompt too long stays too long
        return None
    text = err.message.lower()
    if "max_tokens" in body and "max_completion_tokens" in text:
        return "max_tokens"
    if "max_completion_tokens" in body and "max_completion_tokens" in text and "unrecognized" in text:
        return "max_completion_tokens"
    unsupported = "unsupported" in text or "not supported" in text or "does not support" in text
    if "stop" in body and re.search(r"\bstop\b", text) and unsupported:
        return "stop"
    if "temperature" in body and "temperature" in text and unsupported:
        return "temperature"  # OpenAI's reasoning models take only their default
    if "response_format" in body:
        # named ("response_format", "json_schema"), or not: llama.cpp answers a grammar its sampler
        # cannot build with "Failed to initialize samplers"; the retry without it tells which
        return "response_format"
    return None


def names_schema(err: ProviderError) -> bool:
    text = err.message.lower()
    return "response_format" in text or "schema" in text


class OpenAIProvider(Provider):
    type = "openai"
    structured = True
    enforced = True  # response_format: a grammar on llama.cpp, strict on OpenAI (checked all the same)

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

    def server_key(self) -> str:
        return self.base_url()

    def root_url(self) -> str:
        """The server's root (the base URL without its /v1): where llama.cpp and Ollama keep their own endpoints."""
        return llamacpp.root_of(self.base_url())

    def _is_openai(self) -> bool:
        return urlsplit(self.base_url()).hostname == "api.openai.com"

    def _call(
        self, messages: list[Message], model: str, temperature: float | None, max_tokens: int | None,
        stream: bool, stop: list[str] | None = None, schema: dict[str, Any] | None = None,
    ) -> Call:
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
        body: dict[str, Any] = {"model": model, "messages": [wire_message(m) for m in messages], "stream": stream}
        refused = _refused.get(self.base_url(), set())
        if temperature is not None and "temperature" not in refused:
            body["temperature"] = temperature
        if max_tokens:
            field = "max_completion_tokens" if self._is_openai() else "max_tokens"
            if field in refused:
                field = "max_tokens" if field == "max_completion_tokens" else "max_completion_tokens"
            body[field] = int(max_tokens)
        if stop and "stop" not in refused:
            body["stop"] = list(stop[:MAX_STOP])
        if schema and "response_format" not in refused:
            name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "reply"))[:64]
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
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

    async def _acomplete(
        self, messages: list[Message], *, model: str, temperature: float | None, max_tokens: int,
        stop: list[str], schema: dict[str, Any] | None, on_delta: Delta | None, agent: Any, purpose: str,
    ) -> Completion:
        refused_here = _refused.setdefault(self.base_url(), set())
        guessed: str | None = None  # a field dropped on a 400 that did not name it
        for _ in range(4):  # at most one retry for each field a server may refuse
            call = self._call(messages, model, temperature, max_tokens, stream=on_delta is not None, stop=stop, schema=schema)
            try:
                if on_delta is None:
                    completion = self._parse(call, await post_json(call), messages)
                else:
                    completion = await self._stream(call, messages, on_delta)
            except ProviderError as err:
                refused = refused_field(err, call.body)
                if refused is None:
                    if guessed:  # it failed without the field too: the field was not the cause
                        refused_here.discard(guessed)
                    raise
                refused_here.add(refused)  # nothing was streamed: a 4xx has no text
                guessed = refused if refused == "response_format" and not names_schema(err) else None
                continue
            completion.structured = "response_format" in call.body
            return completion
        raise call.error("the server refused every form of the request")

    def _auth_headers(self) -> dict[str, str]:
        headers = self.spec_headers()
        try:
            key = self._key()
        except ProviderError:
            key = None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    async def system_role(self, model: str = "") -> bool:
        if self._is_openai() or self.spec.get("ollama"):
            return True
        return await llamacpp.system_role(self.root_url(), self._auth_headers(), HttpSettings.from_spec(self.spec).connect_timeout)

    async def _server_context_window(self, model: str) -> int | None:
        if self._is_openai():
            return None
        root, headers = self.root_url(), self._auth_headers()
        if not self.spec.get("ollama"):
            status, n_ctx = await llamacpp.window(root, headers)
            if status == 0:
                return None  # unreachable: asking the other endpoints would only wait longer
            if n_ctx:
                return n_ctx
            window = models_window(await probe_json(f"{self.base_url()}/models", headers=headers), model)
            if window:
                return window
        return ollama_window(await probe_json(f"{root}/api/show", body={"model": model}, headers=headers))

    async def count_tokens(self, model: str, text: str) -> int:
        if not text:
            return 0
        root = self.root_url()
        if llamacpp.known(root) is None:
            await self.context_window(model)  # learns whether the server is llama.cpp (/props)
        counted = await llamacpp.count(root, text, self._auth_headers()) if llamacpp.known(root) else None
        return counted if counted is not None else estimate_tokens(text)

    def _parse(self, call: Call, data: dict[str, Any], messages: list[Message]) -> Completion:
        if "error" in data and not data.get("choices"):
            raise reported_error(call, "the server answered with an error", data["error"])
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

    async def _stream(self, call: Call, messages: list[Message], on_delta: Delta) -> Completion:
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
                    raise reported_error(call, "the server reported an error mid-stream", chunk["error"])
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


def models_window(models: object, model: str) -> int | None:
    """The window of `model` in a `GET /v1/models` answer: vLLM's `max_model_len`, OpenRouter's
    `context_length`."""
    entries = models.get("data") if isinstance(models, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("id") == model:
            for key in ("max_model_len", "context_length"):
                value = entry.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                    return value
    return None


def ollama_window(show: object) -> int | None:
    """The window Ollama runs a model with, from its /api/show answer: `num_ctx` in its parameters,
    else the model's trained `<arch>.context_length` capped at Ollama's default num_ctx."""
    if not isinstance(show, dict):
        return None
    match = re.search(r"(?m)^\s*num_ctx\s+(\d+)", str(show.get("parameters") or ""))
    if match:
        return int(match.group(1))
    info = show.get("model_info")
    if isinstance(info, dict):
        lengths = [v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int) and v > 0]
        if lengths:
            return min(lengths[0], OLLAMA_DEFAULT_NUM_CTX)
    return None


def _usage(data: object, messages: list[Message], text: str) -> Usage:
    """Usage from an OpenAI `usage` object, estimated (tokens.estimate_tokens) where it is missing."""
    data = data if isinstance(data, dict) else {}
    prompt, completion = data.get("prompt_tokens"), data.get("completion_tokens")
    return Usage(
        input_tokens=int(prompt) if isinstance(prompt, int) else prompt_tokens(messages),
        output_tokens=int(completion) if isinstance(completion, int) else estimate_tokens(text),
    )
