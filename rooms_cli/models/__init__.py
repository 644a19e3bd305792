"""Model providers behind one interface (see base.py).

Model strings are `provider:model` (`ollama:llama3.2`, `claude:default`), or a bare provider name
(`offline`, `external`). A provider's name is its key under `providers:` in .rooms.yaml; `offline`,
`external`, `openai`, `ollama` and `anthropic` exist without configuration.
"""

from __future__ import annotations

from rooms_cli.core.errors import InvalidInput
from rooms_cli.models.base import Completion, Message, Provider, Usage

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing; mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config

__all__ = ["Completion", "Message", "Provider", "Usage", "get_provider", "parse_model", "provider_for"]


def parse_model(model_string: str) -> tuple[str, str]:
    """`ollama:llama3.2:3b` -> ("ollama", "llama3.2:3b"); `offline` -> ("offline", "")."""
    if not isinstance(model_string, str) or not model_string.strip():
        raise InvalidInput("empty model string: expected provider:model such as ollama:llama3.2, or offline")
    name, _, model = model_string.strip().partition(":")
    return name, model


def get_provider(name: str, config: Config) -> Provider:
    """The provider called `name` in `config` (built-ins included)."""
    providers = config.providers()
    if name not in providers:
        raise InvalidInput(
            f"unknown provider {name!r}; known providers: {', '.join(sorted(providers))} "
            f"(add it under providers: in .rooms.yaml)"
        )
    provider = _build(name, providers[name])
    provider.configured = providers
    return provider


def _build(name: str, spec: dict[str, Any]) -> Provider:
    ptype = spec.get("type")
    if ptype == "offline":
        from rooms_cli.models.offline import OfflineProvider

        return OfflineProvider(name, spec)
    if ptype == "openai":
        from rooms_cli.models.openai import OpenAIProvider

        return OpenAIProvider(name, spec)
    if ptype == "anthropic":
        from rooms_cli.models.anthropic import AnthropicProvider

        return AnthropicProvider(name, spec)
    if ptype == "command":
        from rooms_cli.models.command import CommandProvider

        return CommandProvider(name, spec)
    from rooms_cli.models.base import ExternalProvider

    return ExternalProvider(name, spec)


def provider_for(model_string: str, config: Config) -> tuple[Provider, str]:
    """(provider, model) for a model string."""
    name, model = parse_model(model_string)
    return get_provider(name, config), model
