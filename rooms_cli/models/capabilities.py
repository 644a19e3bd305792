"""What a provider's server really honours, probed once and kept: the facts `rooms models list` shows
and that every later process starts from.

    found = await capabilities.learn(project, provider, model)   # the kept facts, else probed and kept
    capabilities.known(project, provider, model)                 # the kept facts only (no call), or None
    capabilities.adopt(project, provider, model)                 # this process starts from them

The facts (each checked on a reply, not assumed from the provider's type):
- `system_role`: the chat template takes a system message (llama.cpp's `/props`); where it does not,
  the system text opens the first user message (models/prompt.py);
- `stop`: the server ended a reply at a stop sequence itself (`Count from 1 to 9` stopped at "5"),
  True / False, None when the probe could not tell (the reply never reached it); where it does not,
  rooms still cuts the text (base.py), but the model goes on generating until its limit;
- `structured`, `structured_via`, `structured_note`: a reply asked for under a JSON schema came back
  in that shape (`check_structured`): `json_schema` (a grammar on llama.cpp), `forced
  tool call` (llama.cpp's `/v1/messages` takes it and answers in text: False there);
- `prefill`: the protocol continues a reply it is given the start of (the Messages API): where the
  schema is not honoured, votes and ballots are asked with their JSON's opening (models/structured.py).

Kept in `.rooms/run/providers.json` (this machine's, out of git): JSON data, version-checked and
shape-checked before use (a field of the wrong type and the entry is probed again), never executed
or unpickled. An entry is keyed by provider type, server (its URL) and model (or no model: the
server's default, which stands for any model of a server that has no entry of its own), so a provider
pointed at another server is probed afresh; `rooms models list --probe` and `rooms models test`
probe again and replace the entry. Offline, command and external providers have nothing to probe.
"""

from __future__ import annotations

import time

from rooms_cli.core.errors import ProviderError
from rooms_cli.models.base import Message

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.models.base import Provider
    from rooms_cli.store.paths import Project

VERSION = 1
PROBED_TYPES = ("openai", "anthropic")  # the provider types with a server to ask
STOP_PING = [Message("user", "Count from 1 to 9, separated by commas, and nothing else.")]
STOP_AT = "5"
SHAPE = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"], "additionalProperties": False}
SHAPE_PING = [
    Message("system", "You are a connectivity check. Answer in JSON."),
    Message("user", 'Reply with {"ok": true}'),
]
PING_MAX_TOKENS = 64
_FACTS: dict[str, tuple[type, ...]] = {
    "system_role": (bool,), "stop": (bool, type(None)), "structured": (bool, type(None)),
    "structured_via": (str, type(None)), "structured_note": (str, type(None)), "prefill": (bool,), "probed_at": (str,),
}


def entry_key(provider: Provider, model: str) -> str:
    """What an entry is kept under: the provider's type, its server and the model."""
    return f"{provider.type} {provider.server_key()} {model}"


def _valid(entry: object) -> bool:
    """Whether a kept entry has every fact, each of its type (anything else is probed again)."""
    return isinstance(entry, dict) and all(isinstance(entry.get(k, ...), types) for k, types in _FACTS.items())


def _load(project: Project) -> dict[str, Any]:
    from rooms_cli.store import cache, layout

    doc = cache.load(layout.capabilities_file(project), VERSION)
    entries = doc.get("entries") if doc else None
    return {k: v for k, v in entries.items() if isinstance(k, str) and _valid(v)} if isinstance(entries, dict) else {}


def known(project: Project | None, provider: Provider, model: str) -> dict[str, Any] | None:
    """The kept facts of `provider` and `model` (see the module docstring), else those of its server
    probed with no model named (`rooms models list --probe` of a provider with no `model:`: the
    server's own default); asked with no model (`rooms models list` of such a provider), the latest
    probe of any model on its server. None: never probed, or the entry was damaged."""
    if project is None or provider.type not in PROBED_TYPES:
        return None
    entries = _load(project)
    entry = entries.get(entry_key(provider, model)) or entries.get(entry_key(provider, ""))
    if entry is None and not model:
        server = entry_key(provider, "")
        entry = max((e for k, e in entries.items() if k.startswith(server)), key=lambda e: e["probed_at"], default=None)
    return dict(entry) if entry is not None else None


def keep(project: Project, provider: Provider, model: str, facts: dict[str, Any]) -> None:
    """Replace the kept entry of `provider` and `model` with `facts` (never fails: a cache)."""
    from rooms_cli.store import cache, layout

    entries = _load(project)
    entries[entry_key(provider, model)] = {k: facts.get(k) for k in _FACTS}
    cache.save(layout.capabilities_file(project), {"version": VERSION, "entries": entries})


async def stops_itself(provider: Provider, model: str) -> bool | None:
    """Whether the server ends a reply at a stop sequence: the reply before rooms' own cut (base.py)
    is asked for directly; None when the model never said the stop string, so nothing can be told."""
    messages = STOP_PING
    try:
        completion = await provider._acomplete(messages, model=model, temperature=0, max_tokens=48, stop=[STOP_AT], schema=None,
                                               on_delta=None, agent=None, purpose="answer")
    except ProviderError:
        return None
    if STOP_AT in completion.text:
        return False
    return True if "4" in completion.text else None


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


async def probe(provider: Provider, model: str) -> dict[str, Any]:
    """The facts of `provider` and `model`, asked of the server now (three short calls)."""
    facts = await check_structured(provider, model)
    facts.update(system_role=await provider.system_role(model), stop=await stops_itself(provider, model),
                 prefill=bool(provider.prefills))
    facts["probed_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return facts


async def learn(project: Project | None, provider: Provider, model: str, *, again: bool = False) -> dict[str, Any] | None:
    """The kept facts, else (or `again`) probed now and kept; None for a provider with no server."""
    if provider.type not in PROBED_TYPES:
        return None
    facts = None if again else known(project, provider, model)
    if facts is None:
        facts = await probe(provider, model)
        if project is not None:
            keep(project, provider, model, facts)
    adopt_facts(provider, facts)
    return facts


def adopt(project: Project | None, provider: Provider, model: str) -> None:
    """Start this process from what was kept about `provider` (no call): a server found not to honour
    schemas is not sent one (models/structured.py), so votes and ballots go the prefilled way at once."""
    facts = known(project, provider, model)
    if facts is not None:
        adopt_facts(provider, facts)


def adopt_facts(provider: Provider, facts: dict[str, Any]) -> None:
    """What this process takes from `facts`: a schema found not honoured is not sent again."""
    if facts.get("structured") is False:
        from rooms_cli.models.structured import not_honoured

        not_honoured(provider)
