"""Which model providers are configured (`rooms models list`) and does one answer (`rooms models test`).

A test sends one short prompt, streamed, and reports the provider, the model, the latency (total
and to the first piece of text), the usage, the reply and why it ended (finish_reason); a failure is
the provider's own error with the same facts attached. It then asks for the model's context window
(learned from the server, else configured) and, where the provider type has structured output,
sends a second short prompt with a JSON schema: `structured` is True when the reply came back
under the schema in the shape asked for (checked, not assumed: llama.cpp's /v1/messages takes a
forced tool call and answers in text), False when the server refused, ignored or broke it
(`structured_note` says how; the call does not fail), None when the provider type has none;
`structured_via` names the mechanism (json_schema, forced tool call). Keys are shown only as where they come from and whether they are set.
"""

from __future__ import annotations

import asyncio
import os
import time

from rooms_cli.core.errors import NotFound, ProviderError
from rooms_cli.models import get_provider, parse_model
from rooms_cli.models.base import Message
from rooms_cli.project.config import BUILTIN_PROVIDERS, Config

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.agents.definitions import Agent
    from rooms_cli.models.base import Delta, Provider
    from rooms_cli.store.paths import Project

PING = [
    Message("system", "You are a connectivity check. Answer in at most five words."),
    Message("user", "Reply with the single word: pong"),
]
PING_MAX_TOKENS = 64
SHAPE = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": False}
SHAPE_PING = [
    Message("system", "You are a connectivity check. Answer in JSON."),
    Message("user", 'Reply with {"ok": true}'),
]


def open_config(dir: str | None) -> tuple[Config, Project | None]:
    """(config, project) of the project in reach; outside any project, the built-in defaults and None
    (a provider can be checked from anywhere; an explicit --dir or ROOMS_DIR must exist)."""
    from rooms_cli.core.errors import NotInitialized
    from rooms_cli.project.context import Context

    try:
        ctx = Context.open(dir)
    except NotInitialized:
        if dir or os.environ.get("ROOMS_DIR"):
            raise
        return Config(), None
    return ctx.config, ctx.project


def resolve_target(target: str | None, config: Config, project: Project | None = None) -> tuple[str, Agent | None]:
    """(model string, agent or None) for `target`: an agent id, provider:model, a provider name,
    or nothing (the default_model)."""
    if not target:
        return config.default_model, None
    name, _ = parse_model(target)
    if ":" in target or name in config.providers():
        return target, None
    if project is not None:
        from rooms_cli.agents.definitions import load_agent

        agent = load_agent(project, target)
        return agent.model_string(config.default_model), agent
    raise NotFound(
        f"{target!r} is neither a provider ({', '.join(sorted(config.providers()))}) nor provider:model; "
        f"agents can be tested only inside a project"
    )


def provider_info(name: str, spec: dict[str, Any], provider: Provider | None = None) -> dict[str, Any]:
    """What a provider is and where it talks to, secrets left out."""
    info: dict[str, Any] = {"name": name, "type": spec.get("type"), "builtin": name in BUILTIN_PROVIDERS}
    from rooms_cli.core.child_env import mask_argv, mask_text

    if provider is not None and hasattr(provider, "base_url"):
        info["base_url"] = mask_text(provider.base_url())  # a password in the URL's userinfo: http://alice:****@host
    if provider is not None and hasattr(provider, "key_source"):
        source = provider.key_source()
        info["key"] = source
        if source and source.startswith("$"):
            info["key_set"] = bool(os.environ.get(source[1:]))
        elif source:
            info["key_set"] = os.path.exists(os.path.expanduser(source.removeprefix("file ")))
        if source and hasattr(provider, "key_required"):
            info["key_required"] = provider.key_required()
    if spec.get("type") == "command":
        command = spec.get("command")
        info["command"] = mask_argv(command) if isinstance(command, list) else command
        info["timeout"] = spec.get("timeout")
    if spec.get("model"):
        info["model"] = spec["model"]
    for key in ("max_tokens", "context_window"):  # the limits set for this provider, when set
        if spec.get(key):
            info[key] = spec[key]
    return info


def describe_providers(config: Config) -> list[dict[str, Any]]:
    """Every provider usable in this project (built-ins included), for `rooms models list`."""
    return [provider_info(name, spec, get_provider(name, config)) for name, spec in sorted(config.providers().items())]


async def acheck_model(
    model_string: str, config: Config, agent: Agent | None = None, on_delta: Delta | None = None,
) -> dict[str, Any]:
    """Send PING through `model_string`; the report, or ProviderError with the report as data."""
    name, model = parse_model(model_string)
    provider = get_provider(name, config)
    report = {"target": model_string, "agent": getattr(agent, "id", None), **provider_info(name, provider.spec, provider),
              "model": model or provider.spec.get("model") or ""}
    report["provider"] = report.pop("name")
    first: list[float] = []
    start = time.monotonic()

    def delta(piece: str) -> None:
        if not first:
            first.append(time.monotonic() - start)
        if on_delta:
            on_delta(piece)

    try:
        completion = await provider.acomplete(
            PING, model=model, max_tokens=PING_MAX_TOKENS, temperature=0, on_delta=delta, agent=agent, purpose="answer",
        )
    except ProviderError as err:
        report.update(ok=False, latency_s=round(time.monotonic() - start, 3), error=err.message)
        raise type(err)(err.message, code=err.code, data=report) from None
    report.update(
        ok=True, latency_s=round(completion.elapsed_s, 3),
        first_token_s=round(first[0], 3) if first else None,
        usage=completion.usage.to_json(), reply=completion.text, offline=completion.offline,
        finish_reason=completion.finish_reason, cut=completion.cut,
        context_window=await provider.context_window(model, agent=agent),
    )
    report.update(await check_structured(provider, model))
    return report


async def check_structured(provider: Provider, model: str) -> dict[str, Any]:
    """{"structured": True | False | None, "structured_via", "structured_note": why not}: what the
    server really honours, checked on a reply (models/structured.py), not assumed from its type."""
    if not provider.structured:
        return {"structured": None, "structured_via": None,
                "structured_note": f"provider type {provider.type} has no structured output"}
    from rooms_cli.models.structured import shape_problem, shaped

    via = "json_schema" if provider.enforced else "forced tool call"
    try:
        completion = await provider.acomplete(SHAPE_PING, model=model, max_tokens=PING_MAX_TOKENS, temperature=0, schema=SHAPE)
    except ProviderError as err:
        return {"structured": False, "structured_via": via, "structured_note": err.message}
    if not completion.structured:
        how = "took the forced tool call and answered in text" if via == "forced tool call" else "refused the schema"
        return {"structured": False, "structured_via": via,
                "structured_note": f"the server {how}; replies are read as text (JSON in text)"}
    if shaped(completion.text, SHAPE) is None:
        import json

        try:
            why = shape_problem(json.loads(completion.text), SHAPE) or "not the shape asked for"
        except ValueError:
            why = f"the reply did not parse as JSON: {completion.text[:80]!r}"
        return {"structured": False, "structured_via": via, "structured_note": why}
    return {"structured": True, "structured_via": via, "structured_note": None}


def check_model(
    model_string: str, config: Config, agent: Agent | None = None, on_delta: Delta | None = None,
) -> dict[str, Any]:
    """Synchronous acheck_model."""
    return asyncio.run(acheck_model(model_string, config, agent=agent, on_delta=on_delta))

