"""The one interface every model provider implements.

    provider = get_provider("ollama", config)
    completion = await provider.acomplete(messages, model="llama3.2", temperature=0.7,
                                          max_tokens=400, stop=["\nops:"], on_delta=print)
    completion.text, completion.finish_reason, completion.cut

- `on_delta`, when given, turns on streaming: it is called with each piece of text as it arrives.
- `max_tokens` bounds the reply. Every provider type honours it (the servers natively; `command`
  and `offline` cut the text); a call without one gets `limits.reply_limit(purpose, ...)`, so no
  call is unbounded. A reply stopped by the limit has `finish_reason == "length"` and `cut` True.
- `stop`: strings that end the reply. Sent to the server where the protocol has them, and
  enforced here for every provider: the text (and the stream) ends before the first one.
- `messages` are sent in the one shape every chat template accepts (models/prompt.py): system
  first (folded into the first user message where the server's template has no system role), then
  strictly alternating user and assistant, ending with user.
- `schema`: a JSON Schema for structured output. Sent only where `Provider.structured` is True
  (and then `Completion.structured` says whether this reply was produced under it: a server may
  refuse it, or take a forced tool call and not make it); elsewhere it is ignored and the caller
  parses the text. Callers go through `structured.ask_structured`, which checks the reply's shape
  and falls back to JSON in text.
- `finish_reason` is normalised: "stop" (the model ended, or a stop string), "length" (the
  max_tokens limit), else the server's own value ("tool_use", "content_filter"…).
- `agent` and `purpose` pick the default limit; the offline model also reads them (it has no
  language model to read the prompt with). Purposes: the keys of `limits.DEFAULT_MAX_TOKENS`
  ("chat": a room reply, `/pass` allowed; "answer": must answer; "summary", "rank", "vote"…).
- `await provider.context_window(model)`: the model's context window in tokens, learned from the
  server where it says (llama.cpp, Ollama), else configured; None when nobody knows.
- `await provider.count_tokens(model, text)`: the server's tokenizer where it has one, else
  `tokens.estimate_tokens` (conservative).

Cancelling the task that awaits `acomplete` cancels the call at once (the HTTP connection is closed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from rooms_cli.core.errors import ProviderError
from rooms_cli.core.records import asdict, dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.models.limits import reply_limit
from rooms_cli.models.prompt import Message as Message  # re-exported: its home before prompt.py
from rooms_cli.models.prompt import for_server
from rooms_cli.models.tokens import estimate_tokens

if TYPE_CHECKING:
    from rooms_cli.core.child_env import StreamMask

Delta = Callable[[str], None]

# Every protocol's word for "why the reply ended", as ours
FINISH_REASONS = {
    "stop": "stop", "end_turn": "stop", "stop_sequence": "stop", "eos": "stop", "eos_token": "stop",
    "length": "length", "max_tokens": "length", "limit": "length", "max_output_tokens": "length",
}


def normalise_finish_reason(raw: object) -> str | None:
    """"stop" | "length" | the server's own word (lower case); None when the server gave none."""
    if raw is None or raw == "":
        return None
    word = str(raw).strip().lower()
    return FINISH_REASONS.get(word, word)


@dataclass
class Usage:
    """Tokens a completion used, as the provider reported or estimated them."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_json(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class Completion:
    """A provider's answer: the text, token usage, the model that produced it, time taken, why it ended.

    `structured` is True when the reply was produced under the caller's `schema` (the server
    honoured it); `cut` when the max_tokens limit stopped it."""

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""  # the provider:model string that produced it
    offline: bool = False
    elapsed_s: float = 0.0
    finish_reason: str | None = None
    structured: bool = False

    @property
    def cut(self) -> bool:
        """True when the reply was stopped by the token limit (not by the model or a stop string)."""
        return self.finish_reason == "length"

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "usage": self.usage.to_json(),
            "model": self.model,
            "offline": self.offline,
            "elapsed_s": round(self.elapsed_s, 3),
            "finish_reason": self.finish_reason,
            "cut": self.cut,
            "structured": self.structured,
        }


def clean_stop(stop: list[str] | None) -> list[str]:
    """The non-empty stop strings, once each, in order."""
    if not stop:
        return []
    if isinstance(stop, str):
        stop = [stop]
    return list(dict.fromkeys(s for s in stop if isinstance(s, str) and s))


def first_stop(text: str, stop: list[str]) -> int | None:
    """Where the reply ends in `text`: the start of the stop string that is complete first (as a
    server stops generating the moment one appears; of two ending together, the longer), or None."""
    best: tuple[int, int] | None = None  # (end, -length)
    for s in stop:
        at = text.find(s)
        if at >= 0 and (best is None or (at + len(s), -len(s)) < best):
            best = (at + len(s), -len(s))
    return best[0] + best[1] if best else None


class StopFilter:
    """Streams text on to `emit` until a stop string appears, holding back just enough characters
    that a stop string split across pieces is still caught; nothing from the stop string on is sent."""

    def __init__(self, emit: Delta, stop: list[str]) -> None:
        self.emit = emit
        self.stop = stop
        self.hold = max(len(s) for s in stop) - 1
        self.buffer = ""
        self.stopped = False

    def __call__(self, piece: str) -> None:
        if self.stopped:
            return
        self.buffer += piece
        at = first_stop(self.buffer, self.stop)
        if at is not None:
            self.stopped = True
            if at:
                self.emit(self.buffer[:at])
            self.buffer = ""
            return
        ready = len(self.buffer) - self.hold
        if ready > 0:
            out, self.buffer = self.buffer[:ready], self.buffer[ready:]
            self.emit(out)

    def close(self) -> None:
        if not self.stopped and self.buffer:
            self.emit(self.buffer)
        self.buffer = ""


_server_caches: list[dict[str, Any] | set[Any]] = []
_Cache = TypeVar("_Cache", dict[Any, Any], set[Any])


def server_cache(cache: _Cache) -> _Cache:
    """Register `cache` (a dict or set of what this process learned about servers) with forget_servers."""
    _server_caches.append(cache)
    return cache


def forget_servers() -> None:
    """Forget what this process learned about servers: windows, tokenizers, refused request fields.
    For a long-lived process whose server changed at the same address (and for tests, where a port
    is reused by the next test's server)."""
    for cache in _server_caches:
        cache.clear()


# The context windows learned from servers in this process: (type, server, model) -> tokens or None
_windows: dict[tuple[str, str, str], int | None] = server_cache({})


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class Provider:
    """Base class: subclasses implement `_acomplete`; timing and the sync wrapper live here."""

    type = "base"
    offline = False
    structured = False  # True: `schema` is sent to the model (see the module docstring)
    enforced = False  # True: the schema holds the decoding (a grammar); False: the model may ignore it

    def __init__(self, name: str, spec: dict[str, Any] | None = None) -> None:
        self.name = name
        self.spec = dict(spec or {})
        # every configured provider's spec (get_provider fills it): their keys are masked in
        # this provider's replies and errors, not only its own
        self.configured: dict[str, dict[str, Any]] = {name: self.spec}

    async def acomplete(
        self,
        messages: list[Message],
        *,
        model: str,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stop: list[str] | None = None,
        schema: dict[str, Any] | None = None,
        on_delta: Delta | None = None,
        agent: Any = None,
        purpose: str = "answer",
    ) -> Completion:
        """The model's reply to `messages` (see the module docstring for every argument)."""
        start = time.monotonic()  # the event loop's clock, without needing one (docs/performance.md)
        model = model or str(self.spec.get("model") or "")  # `local` alone: the provider's own default model
        max_tokens = _positive(max_tokens) or reply_limit(purpose, agent=agent, provider_spec=self.spec)
        stop = clean_stop(stop)
        system_role = await self.system_role(model) if any(m.role == "system" for m in messages) else True
        messages = for_server(messages, system_role=system_role)
        masked = self._stream_mask(on_delta)
        sink = masked or on_delta
        stopper = StopFilter(sink, stop) if sink is not None and stop else None
        try:
            completion = await self._acomplete(
                messages, model=model, temperature=temperature, max_tokens=max_tokens, stop=stop,
                schema=schema if self.structured and isinstance(schema, dict) else None,
                on_delta=stopper or sink, agent=agent, purpose=purpose,
            )
            if stopper is not None:
                stopper.close()
            if masked is not None:
                masked.close()
        except ProviderError as exc:
            if stopper is not None:
                stopper.close()
            if masked is not None:
                masked.close()  # what arrived before the failure, masked like a whole reply
            # the one choke point: nothing a provider says reaches a terminal or a file with a key in it
            from rooms_cli.core.child_env import mask_text

            exc.message = mask_text(self.mask(exc.message))  # and the configuration it names (a URL's password)
            exc.args = (exc.message,)
            raise
        completion.finish_reason = normalise_finish_reason(completion.finish_reason)
        at = first_stop(completion.text, stop) if stop else None
        if at is not None:  # a server without `stop` (or with fewer than we asked for): cut here
            completion.text = completion.text[:at]
            completion.finish_reason = "stop"
        completion.text = self.mask(completion.text)
        completion.elapsed_s = time.monotonic() - start
        completion.model = f"{self.name}:{model}" if model and model != self.name else self.name
        completion.offline = self.offline
        return completion

    def _stream_mask(self, on_delta: Delta | None) -> StreamMask | None:
        """Live text passes the same mask (child_env.StreamMask) when any key is configured."""
        if on_delta is None:
            return None
        from rooms_cli.core.child_env import StreamMask, configured_secrets

        secrets = configured_secrets(self.configured)
        return StreamMask(on_delta, secrets) if secrets else None

    def mask(self, text: str) -> str:
        """`text` with any long run copied from a configured key replaced by ****."""
        from rooms_cli.core.child_env import configured_secrets, mask_secrets

        return mask_secrets(text, configured_secrets(self.configured)) if text else text

    def complete(self, messages: list[Message], **kwargs: Any) -> Completion:
        """Synchronous `acomplete` (runs its own event loop)."""
        import asyncio

        return asyncio.run(self.acomplete(messages, **kwargs))

    async def _acomplete(
        self, messages: list[Message], *, model: str, temperature: float | None, max_tokens: int,
        stop: list[str], schema: dict[str, Any] | None, on_delta: Delta | None, agent: Any, purpose: str,
    ) -> Completion:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release connections (network providers); never raises (callers close every provider in turn)."""


    async def context_window(self, model: str = "", *, agent: Any = None) -> int | None:
        """The model's context window in tokens; never raises.

        The server's own figure when it tells one (learned once per process), lowered to
        `providers.NAME.context_window` when that is smaller; else that setting; else the agent's
        `context_window`; else None."""
        model = model or str(self.spec.get("model") or "")
        key = (self.type, self.server_key(), model)
        if key not in _windows:
            try:
                _windows[key] = _positive(await self._server_context_window(model))
            except (ProviderError, OSError, ValueError):
                _windows[key] = None
        learned, configured = _windows[key], _positive(self.spec.get("context_window"))
        if learned and configured:
            return min(learned, configured)
        return learned or configured or _positive(getattr(agent, "context_window", None))

    async def count_tokens(self, model: str, text: str) -> int:
        """Tokens in `text` for `model`: the server's tokenizer where it has one, else the
        conservative `estimate_tokens`; never raises."""
        return estimate_tokens(text)

    def server_key(self) -> str:
        """What identifies the server behind this provider, for per-process caches."""
        return self.name

    async def system_role(self, model: str = "") -> bool:
        """Whether the model's chat template takes a system message; never raises (True when unknown).
        Network providers that can ask the server (llama.cpp's /props) override this."""
        return True

    async def _server_context_window(self, model: str) -> int | None:
        """The window the server reports for `model` (network providers that can ask override this)."""
        return None


class ExternalProvider(Provider):
    """An agent that is a process outside rooms: never called; it answers through the CLI."""

    type = "external"

    async def _acomplete(self, messages: list[Message], **_: Any) -> Completion:
        raise ProviderError(
            f"provider {self.name!r} is external: the agent answers through rooms itself, not through a model"
        )
