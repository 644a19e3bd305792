"""The Anthropic Messages API (`POST {base_url}/v1/messages`) over httpx.

    anthropic: {type: anthropic, api_key_env: ANTHROPIC_API_KEY}     # built in; model e.g. anthropic:claude-sonnet-4-5

The API version goes in `anthropic-version` (`anthropic_version`, default 2023-06-01). System
messages become the top-level `system` prompt; consecutive messages of one role are merged (the
API wants user and assistant to alternate). Streaming reads the SSE events message_start,
content_block_delta (text_delta), message_delta and message_stop; a stream that ends without
message_stop is an error, never a half reply.

Where it goes and what it sends (the environment names are Claude Code's own):
- Anthropic's API (no `base_url`, no `ANTHROPIC_BASE_URL`): `ANTHROPIC_API_KEY` as `x-api-key`
  and/or `ANTHROPIC_AUTH_TOKEN` as `Authorization: Bearer`; one of them is required.
- `ANTHROPIC_BASE_URL` (a gateway or a local server such as llama.cpp's, which serves /v1/messages):
  the same two variables when they are set, and nothing when they are not — a local server needs no key.
- `base_url` in .rooms.yaml: only what the spec names (`api_key_env`/`api_key_file` as `x-api-key`,
  `auth_token_env` as Bearer); Anthropic's variables never go to a URL that did not ask for them.

Structured output (`schema`) is a forced tool call, the API's native way: the schema goes as the
`input_schema` of one tool (`reply`) with `tool_choice: {type: tool, name: reply}`, and the tool
call's input, serialised as JSON, is the reply's text (streamed from `input_json_delta` events).
`Completion.structured` is True only when the reply is that tool call: a server may take
`tool_choice` and not force it (llama.cpp's /v1/messages answers in text), and then the reply is
its text, `structured` False (`structured.ask_structured` falls back on it). A server that refuses
tools (a 400 naming them) is asked again without, and this process stops sending them there.

The context window: 200 000 tokens for `claude*` models on Anthropic's API (which tells none);
through a gateway, what llama.cpp's `/props` says at its root (and its `/tokenize` counts tokens),
else configured (`providers.NAME.context_window`, the agent's `context_window`).

`max_tokens` is required by the API: the caller's, else `limits.reply_limit` (the agent's
`max_tokens:`, else `providers.NAME.max_tokens`, else the purpose's default). Stop strings go as
`stop_sequences`; the reply's `stop_reason` (end_turn, stop_sequence, max_tokens) is normalised to
"stop" / "length" by the base class.
"""

from __future__ import annotations

import json
import os
from typing import Any

from rooms_cli.core.errors import ProviderError
from rooms_cli.models import llamacpp
from rooms_cli.models.base import Completion, Delta, Message, Provider, Usage, server_cache
from rooms_cli.models.http import (
    Call,
    HttpSettings,
    is_event_stream,
    open_response,
    post_json,
    read_json,
    read_key,
    reported_error,
    sse_events,
)
from rooms_cli.models.limits import reply_limit
from rooms_cli.models.tokens import estimate_tokens

ANTHROPIC_URL = "https://api.anthropic.com"
ANTHROPIC_VERSION = "2023-06-01"
REPLY_TOOL = "reply"  # the one tool a structured call forces
CLAUDE_WINDOW = 200_000  # tokens: the context window of Claude models on Anthropic's API

_no_tools: set[str] = server_cache(set())  # servers (base URLs) that refused a forced tool call, this process


def to_anthropic(messages: list[Message]) -> tuple[str, list[dict[str, Any]]]:
    """(system prompt, alternating user/assistant messages) from our messages."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    turns: list[dict[str, str]] = []
    for m in messages:
        if m.role == "system":
            continue
        role = "assistant" if m.role == "assistant" else "user"
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += "\n\n" + m.content
        else:
            turns.append({"role": role, "content": m.content})
    return system, turns


class AnthropicProvider(Provider):
    type = "anthropic"
    structured = True

    def base_url(self) -> str:
        url = self.spec.get("base_url") or os.environ.get("ANTHROPIC_BASE_URL") or ANTHROPIC_URL
        return str(url).rstrip("/")

    def key_source(self) -> str | None:
        if self.spec.get("api_key_file"):
            return f"file {self.spec['api_key_file']}"
        if self.spec.get("base_url") and not self.spec.get("api_key_env"):
            return None  # a URL of the spec's own (often a local server): only the credentials it names
        return f"${self.spec.get('api_key_env') or 'ANTHROPIC_API_KEY'}"

    def key_required(self) -> bool:
        """Whether a call fails without the key (`rooms models list` says "missing" only then)."""
        if self.spec.get("base_url") or self.spec.get("api_key_file"):
            return bool(self.spec.get("api_key_file"))
        return not (os.environ.get("ANTHROPIC_AUTH_TOKEN", "").strip() or os.environ.get("ANTHROPIC_BASE_URL"))

    def _credentials(self) -> tuple[dict[str, str], list[str]]:
        """(auth headers, secrets to scrub from errors), by the rules in the module docstring."""
        headers: dict[str, str] = {}
        if self.spec.get("base_url"):  # a URL of the spec's own: only the credentials it names
            key = read_key(self.name, self.spec, fallback_env=None, required=False)
            token_env = self.spec.get("auth_token_env")
            token = read_key(self.name, {"api_key_env": token_env}, fallback_env=None, required=True) if token_env else None
        else:
            token = os.environ.get("ANTHROPIC_AUTH_TOKEN", "").strip() or None
            # Anthropic's own API needs a key or a token; a gateway (often local) may need neither
            optional = bool(token or os.environ.get("ANTHROPIC_BASE_URL"))
            env = self.spec.get("api_key_env") or "ANTHROPIC_API_KEY"
            if optional and not self.spec.get("api_key_file"):
                key = os.environ.get(str(env), "").strip() or None
            else:
                key = read_key(self.name, self.spec, fallback_env="ANTHROPIC_API_KEY", required=True)
        if key:
            headers["x-api-key"] = key
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers, [s for s in (key, token) if s]

    def server_key(self) -> str:
        return self.base_url()

    def _is_anthropic(self) -> bool:
        return self.base_url() == ANTHROPIC_URL

    def _probe_headers(self) -> dict[str, str]:
        try:
            return self._credentials()[0]
        except ProviderError:
            return {}

    async def _server_context_window(self, model: str) -> int | None:
        if self._is_anthropic():  # the API tells no window; every current Claude model has this one
            return CLAUDE_WINDOW if model.startswith("claude") else None
        _, n_ctx = await llamacpp.window(llamacpp.root_of(self.base_url()), self._probe_headers())
        return n_ctx

    async def system_role(self, model: str = "") -> bool:
        """A gateway that is llama.cpp applies the model's chat template to the messages (the
        top-level `system` included): what its /props says; Anthropic's API: yes."""
        if self._is_anthropic():
            return True
        return await llamacpp.system_role(llamacpp.root_of(self.base_url()), self._probe_headers(),
                                          HttpSettings.from_spec(self.spec).connect_timeout)

    async def count_tokens(self, model: str, text: str) -> int:
        if not text:
            return 0
        root = llamacpp.root_of(self.base_url())
        if not self._is_anthropic() and llamacpp.known(root) is None:
            await self.context_window(model)  # a gateway that is llama.cpp (/props) has its tokenizer
        counted = await llamacpp.count(root, text, self._probe_headers()) if llamacpp.known(root) else None
        return counted if counted is not None else estimate_tokens(text)

    def _call(
        self, messages: list[Message], model: str, temperature: float | None, max_tokens: int | None,
        stream: bool, agent: Any = None, stop: list[str] | None = None, schema: dict[str, Any] | None = None,
    ) -> Call:
        model = model or self.spec.get("model") or ""
        if not model:
            raise ProviderError(
                f"provider {self.name!r} needs a model name: write {self.name}:MODEL "
                f"(e.g. {self.name}:claude-sonnet-4-5), or set providers.{self.name}.model in .rooms.yaml"
            )
        auth, secrets = self._credentials()
        system, turns = to_anthropic(messages)
        if not turns:
            raise ProviderError(f"provider {self.name!r}: nothing to send (no user or assistant message)")
        headers = {
            "Content-Type": "application/json",
            "Accept": "text/event-stream" if stream else "application/json",
            "anthropic-version": str(self.spec.get("anthropic_version") or ANTHROPIC_VERSION),
        }
        extra = self.spec.get("headers") or {}
        headers.update({str(k): str(v) for k, v in extra.items()} if isinstance(extra, dict) else {})
        headers.update(auth)
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": int(max_tokens or reply_limit("answer", agent=agent, provider_spec=self.spec)),
            "messages": turns,
        }
        if system:
            body["system"] = system
        if temperature is not None:
            body["temperature"] = temperature
        sequences = [x for x in stop or [] if x.strip()]  # the API refuses whitespace-only ones
        if sequences:
            body["stop_sequences"] = sequences
        if schema and self.base_url() not in _no_tools:
            body["tools"] = [{"name": REPLY_TOOL, "description": "Give your reply in this structure.", "input_schema": schema}]
            body["tool_choice"] = {"type": "tool", "name": REPLY_TOOL}
        if stream:
            body["stream"] = True
        base = self.base_url()
        endpoint = f"{base}/messages" if base.endswith("/v1") else f"{base}/v1/messages"
        return Call(
            provider=self.name, url=base, endpoint=endpoint, headers=headers, body=body,
            settings=HttpSettings.from_spec(self.spec), secrets=secrets,
        )

    async def _acomplete(
        self, messages: list[Message], *, model: str, temperature: float | None, max_tokens: int,
        stop: list[str], schema: dict[str, Any] | None, on_delta: Delta | None, agent: Any, purpose: str,
    ) -> Completion:
        while True:
            call = self._call(messages, model, temperature, max_tokens, stream=on_delta is not None,
                              agent=agent, stop=stop, schema=schema)
            try:
                if on_delta is None:
                    completion = _parse(call, await post_json(call), messages)
                else:
                    completion = await _stream(call, messages, on_delta)
            except ProviderError as err:
                status = err.data.get("status") if isinstance(err.data, dict) else None
                if "tools" not in call.body or status not in (400, 422) or "tool" not in err.message.lower():
                    raise
                _no_tools.add(self.base_url())  # a 4xx streamed nothing: ask again without the tool
                continue
            # structured only when the reply IS the forced tool call: llama.cpp's /v1/messages takes
            # tool_choice and answers in text all the same
            completion.structured = "tools" in call.body and completion.structured
            if completion.structured and completion.finish_reason == "tool_use":
                completion.finish_reason = "stop"  # the forced tool call is the whole reply
            return completion


def _parse(call: Call, data: dict[str, Any], messages: list[Message]) -> Completion:
    if data.get("type") == "error":
        raise reported_error(call, "the server answered with an error", data.get("error") or {})
    content = data.get("content")
    if not isinstance(content, list):
        raise call.error("the reply has no content (not an Anthropic messages answer?)")
    blocks = [b for b in content if isinstance(b, dict)]
    tools = [b for b in blocks if b.get("type") == "tool_use" and b.get("name") == REPLY_TOOL]
    text = _block_text(tools[0]) if tools else "".join(_block_text(b) for b in blocks)
    return Completion(text=text, usage=_usage(data.get("usage"), messages, text), finish_reason=data.get("stop_reason"),
                      structured=bool(tools))


def _block_text(block: dict[str, Any]) -> str:
    """A content block's text: a text block's, or a tool call's input as JSON."""
    if block.get("type") == "text":
        return str(block.get("text") or "")
    if block.get("type") == "tool_use":
        return json.dumps(block.get("input") or {}, ensure_ascii=False)
    return ""


async def _stream(call: Call, messages: list[Message], on_delta: Delta) -> Completion:
    parts: list[str] = []
    progress = [0]
    usage: dict[str, Any] = {}
    stop_reason = None
    finished = False
    tool_used = False
    async with open_response(call) as response:
        if not is_event_stream(response):
            completion = _parse(call, await read_json(call, response), messages)
            if completion.text:
                on_delta(completion.text)
            return completion
        async for event in sse_events(call, response, progress):
            data = event.json(call)
            if not isinstance(data, dict):
                raise call.error(f"unexpected event in the stream: {event.data[:120]!r}")
            kind = data.get("type") or event.event
            if kind == "message_start":
                usage.update((data.get("message") or {}).get("usage") or {})
            elif kind == "content_block_start":
                block = data.get("content_block") or {}
                tool_used = tool_used or (block.get("type") == "tool_use" and block.get("name") == REPLY_TOOL)
            elif kind == "content_block_delta":
                delta = data.get("delta") or {}
                piece = delta.get("text") if delta.get("type") == "text_delta" else (
                    delta.get("partial_json") if delta.get("type") == "input_json_delta" else None)
                if piece:
                    parts.append(piece)
                    progress[0] += len(piece)
                    on_delta(piece)
            elif kind == "message_delta":
                stop_reason = (data.get("delta") or {}).get("stop_reason") or stop_reason
                usage.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
            elif kind == "message_stop":
                finished = True
                break
            elif kind == "error":
                raise reported_error(call, "the server reported an error mid-stream", data.get("error") or {})
            # ping, content_block_start/stop and event types added later: nothing to do
    if not finished:
        raise call.error(
            f"the stream ended before message_stop after {progress[0]} characters; the partial reply was dropped"
        )
    text = "".join(parts)
    return Completion(text=text, usage=_usage(usage, messages, text), finish_reason=stop_reason, structured=tool_used)


def _usage(data: object, messages: list[Message], text: str) -> Usage:
    """Usage from an Anthropic `usage` object (cache reads and writes count as input), else an estimate."""
    data = data if isinstance(data, dict) else {}
    given = [data.get(k) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")]
    inputs = [v for v in given if isinstance(v, int)]
    output = data.get("output_tokens")
    return Usage(
        input_tokens=sum(inputs) if inputs else sum(estimate_tokens(m.content) + 4 for m in messages),
        output_tokens=output if isinstance(output, int) else estimate_tokens(text),
    )
