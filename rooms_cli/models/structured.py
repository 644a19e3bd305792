"""Structured output, verified rather than assumed: what a reply holds, whether it has the shape asked
for, and the one call that falls back to JSON in text when a server did not honour the schema.

    got = await ask_structured(provider, lambda structured: messages(structured), schema, model=model, …)
    got.value            # the JSON value in the schema's shape, or None (then the caller reads the text)
    got.path             # "schema" | "text" | "fallback": how the reply was asked for and read
    got.completion.text  # what the model said, for the caller's tolerant reader

A provider type that has structured output (`Provider.structured`) sends the schema (OpenAI's
`response_format`, Anthropic's forced tool call). A server may accept it and not honour it:
llama.cpp's `/v1/messages` takes `tool_choice: {type: tool, name: reply}` and answers in free text,
and a cloud endpoint may take `response_format` without enforcing it. So the reply is checked
(`shape_problem`). `messages(structured)` builds the prompt: `structured` True when the schema holds
the decoding (`Provider.enforced`: a grammar), so the prompt need not (and should not: a small model
copies an example) spell the JSON out; False when it must say the shape in words (no schema, or a
forced tool call, which the model may or may not make). A reply that is not the shape asked for is
the caller's to read with its tolerant reader (a vote in words, a numbered ballot), and the server
is remembered (per process) as one that does not honour schemas: later calls go to text at once.
When the tolerant reader finds nothing either, the caller asks once more with `messages(False)`:
the fallback to JSON in text. Path: "schema" (honoured and verified), "fallback" (sent, not
honoured, read as text), "text" (no schema sent: the provider type has none, or this server was
found not to honour it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from rooms_cli.core.records import dataclass
from rooms_cli.models.base import server_cache

if TYPE_CHECKING:
    from rooms_cli.models.base import Completion, Message, Provider

SCHEMA, TEXT, FALLBACK = "schema", "text", "fallback"

# (provider type, server) whose replies to a schema did not have the shape asked for, this process
_unhonoured: set[tuple[str, str]] = server_cache(set())


def json_values(text: str, opening: str = "{[") -> Iterator[object]:
    """Every JSON value that starts at one of the `opening` characters of `text`, in order (code fences
    dropped first): a small model often wraps its object in prose or in a ```json fence."""
    decoder = json.JSONDecoder()
    cleaned = re.sub(r"```(?:json)?", "", text)
    for match in re.finditer("[" + re.escape(opening) + "]", cleaned):
        try:
            value, _ = decoder.raw_decode(cleaned, match.start())
        except json.JSONDecodeError:
            continue
        yield value


_TYPES: dict[str, Callable[[object], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def shape_problem(value: object, schema: dict[str, Any], where: str = "the reply") -> str | None:
    """Why `value` is not in the shape of `schema` (the subset rooms' schemas use: type, properties,
    required, additionalProperties false, enum, items, minItems, maxItems), or None when it is.
    Lengths of strings are not checked: a grammar cuts at maxLength, a caller reads what came."""
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _TYPES and not _TYPES[kind](value):
        return f"{where} is not a JSON {kind}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where} is {json.dumps(value)[:40]}, not one of {', '.join(map(str, schema['enum']))}"
    if isinstance(value, dict):
        missing = [k for k in schema.get("required", []) if k not in value]
        if missing:
            return f"{where} lacks {', '.join(missing)}"
        properties = schema.get("properties", {})
        extra = [k for k in value if k not in properties]
        if schema.get("additionalProperties") is False and extra:
            return f"{where} has keys it was not asked for ({', '.join(map(str, extra[:3]))})"
        for key, sub in properties.items():
            if key in value and isinstance(sub, dict):
                wrong = shape_problem(value[key], sub, f"{key!r}")
                if wrong:
                    return wrong
    if isinstance(value, list):
        if len(value) < int(schema.get("minItems", 0)):
            return f"{where} has fewer than {schema['minItems']} items"
        if "maxItems" in schema and len(value) > int(schema["maxItems"]):
            return f"{where} has more than {schema['maxItems']} items"
        items = schema.get("items")
        if isinstance(items, dict):
            for n, item in enumerate(value):
                wrong = shape_problem(item, items, f"item {n + 1} of {where}")
                if wrong:
                    return wrong
    return None


def shaped(text: str, schema: dict[str, Any]) -> object | None:
    """The JSON value of `text` in the shape of `schema`: the whole text, else the first value in it
    that has the shape; None when there is none."""
    try:
        whole: object = json.loads(text)
    except ValueError:
        whole = None
    else:
        if shape_problem(whole, schema) is None:
            return whole
    for value in json_values(text, "{["):
        if shape_problem(value, schema) is None:
            return value
    return None


@dataclass
class StructuredReply:
    """A reply asked for in a shape: the completion, the value read in that shape (or None), and the path."""

    completion: Completion
    value: object | None
    path: str  # SCHEMA | FALLBACK | TEXT
    problem: str = ""  # why the schema's reply was refused (the fallback's reason)


def honours_schemas(provider: Provider) -> bool:
    """Whether a schema is sent to this provider: its type has structured output and its server was
    not found (this process) to answer a schema in another shape."""
    return bool(provider.structured) and (provider.type, provider.server_key()) not in _unhonoured


def verify(provider: Provider, completion: Completion, schema: dict[str, Any]) -> object | None:
    """The value of a reply asked for under `schema`, in its shape, or None; a server whose reply to
    the schema was not in the shape (and not only cut by the limit) is remembered as not honouring it."""
    value = shaped(completion.text, schema) if completion.structured else None
    if value is None and not completion.cut and completion.finish_reason != "repetition":
        _unhonoured.add((provider.type, provider.server_key()))
    return value


async def ask_structured(provider: Provider, messages: Callable[[bool], list[Message]], schema: dict[str, Any],
                         **kwargs: Any) -> StructuredReply:
    """One structured call, verified (see the module docstring). `messages(structured)` builds the
    prompt: with the schema (True) it need not describe JSON, without it (False) it must. `kwargs`
    go to `acomplete` (model, temperature, max_tokens, agent, purpose, on_delta…)."""
    if not honours_schemas(provider):
        completion = await provider.acomplete(messages(False), **kwargs)
        return StructuredReply(completion, shaped(completion.text, schema), TEXT)
    completion = await provider.acomplete(messages(provider.enforced), schema=schema, **kwargs)
    value = shaped(completion.text, schema) if completion.structured else None
    if value is not None:
        return StructuredReply(completion, value, SCHEMA)
    if completion.structured and completion.cut:  # honoured, but the limit cut the JSON: the caller says so
        return StructuredReply(completion, None, SCHEMA, "the reply was cut at the token limit before its JSON closed")
    _unhonoured.add((provider.type, provider.server_key()))
    problem = _not_honoured(completion.text, schema) if completion.structured else "the server refused the schema"
    return StructuredReply(completion, shaped(completion.text, schema), FALLBACK, problem)


def _not_honoured(text: str, schema: dict[str, Any]) -> str:
    for value in json_values(text, "{["):
        return f"the schema was not honoured: {shape_problem(value, schema)}"
    return "the schema was not honoured: the reply held no JSON"
