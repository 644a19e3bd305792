"""The one interface every model provider implements.

    provider = get_provider("ollama:llama3.2", config)
    completion = await provider.acomplete(messages, model="llama3.2", temperature=0.7,
                                          max_tokens=400, on_delta=print)

`on_delta`, when given, turns on streaming: it is called with each piece of text as it arrives.
`agent` and `purpose` are hints only the offline model uses (it has no language model to read the
prompt with); network providers ignore them. Purposes: "chat" (a room reply; `/pass` allowed),
"answer" (must answer), "summary", "rank".

Cancelling the task that awaits `acomplete` cancels the call at once (the HTTP connection is closed).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from rooms_cli.errors import ProviderError

Delta = Callable[[str], None]


@dataclass
class Message:
    """One chat message sent to a provider: role (system, user or assistant), content, optional name."""

    role: str  # system | user | assistant
    content: str
    name: str | None = None

    def to_json(self) -> dict:
        data = {"role": self.role, "content": self.content}
        if self.name:
            data["name"] = self.name
        return data


@dataclass
class Usage:
    """Tokens a completion used, as the provider reported or estimated them."""

    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Completion:
    """A provider's answer: the text, token usage, the model that produced it, time taken, finish reason."""

    text: str
    usage: Usage = field(default_factory=Usage)
    model: str = ""  # the provider:model string that produced it
    offline: bool = False
    elapsed_s: float = 0.0
    finish_reason: str | None = None

    def to_json(self) -> dict:
        return {
            "text": self.text,
            "usage": self.usage.to_json(),
            "model": self.model,
            "offline": self.offline,
            "elapsed_s": round(self.elapsed_s, 3),
            "finish_reason": self.finish_reason,
        }


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token) for providers that report none."""
    return max(1, (len(text) + 3) // 4) if text else 0


class Provider:
    """Base class: subclasses implement `_acomplete`; timing and the sync wrapper live here."""

    type = "base"
    offline = False

    def __init__(self, name: str, spec: dict | None = None):
        self.name = name
        self.spec = dict(spec or {})
        # every configured provider's spec (get_provider fills it): their keys are masked in
        # this provider's replies and errors, not only its own
        self.configured: dict[str, dict] = {name: self.spec}

    async def acomplete(
        self,
        messages: list[Message],
        *,
        model: str,
        temperature: float | None = None,
        max_tokens: int | None = None,
        on_delta: Delta | None = None,
        agent: Any = None,
        purpose: str = "answer",
    ) -> Completion:
        start = time.monotonic()  # the event loop's clock, without needing one (docs/performance.md)
        model = model or str(self.spec.get("model") or "")  # `local` alone: the provider's own default model
        masked = self._stream_mask(on_delta)
        try:
            completion = await self._acomplete(
                messages, model=model, temperature=temperature, max_tokens=max_tokens,
                on_delta=masked or on_delta, agent=agent, purpose=purpose,
            )
            if masked is not None:
                masked.close()
        except ProviderError as exc:
            if masked is not None:
                masked.close()  # what arrived before the failure, masked like a whole reply
            # the one choke point: nothing a provider says reaches a terminal or a file with a key in it
            from rooms_cli.child_env import mask_text

            exc.message = mask_text(self.mask(exc.message))  # and the configuration it names (a URL's password)
            exc.args = (exc.message,)
            raise
        completion.text = self.mask(completion.text)
        completion.elapsed_s = time.monotonic() - start
        completion.model = f"{self.name}:{model}" if model and model != self.name else self.name
        completion.offline = self.offline
        return completion

    def _stream_mask(self, on_delta):
        """Live text passes the same mask (child_env.StreamMask) when any key is configured."""
        if on_delta is None:
            return None
        from rooms_cli.child_env import StreamMask, configured_secrets

        secrets = configured_secrets(self.configured)
        return StreamMask(on_delta, secrets) if secrets else None

    def mask(self, text: str) -> str:
        """`text` with any long run copied from a configured key replaced by ****."""
        from rooms_cli.child_env import configured_secrets, mask_secrets

        return mask_secrets(text, configured_secrets(self.configured)) if text else text

    def complete(self, messages: list[Message], **kwargs) -> Completion:
        """Synchronous `acomplete` (runs its own event loop)."""
        import asyncio

        return asyncio.run(self.acomplete(messages, **kwargs))

    async def _acomplete(self, messages, *, model, temperature, max_tokens, on_delta, agent, purpose) -> Completion:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release connections (network providers)."""


class ExternalProvider(Provider):
    """An agent that is a process outside rooms: never called; it answers through the CLI."""

    type = "external"

    async def _acomplete(self, messages, **_):
        raise ProviderError(
            f"provider {self.name!r} is external: the agent answers through rooms itself, not through a model"
        )
