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

Where no schema holds the reply (the text path, and the fallback) and the provider `prefills` (the
Anthropic protocol: llama.cpp's `/v1/messages` takes no grammar and no forced tool, but continues a
reply it is given the start of), the call is sent with the object's opening as a prefill
(`opening`: `{"vote": "`, `{"ranking": [`): a small model asked in words for `{"vote": …}` wrote
"Ship the vote on Friday." four times out of four; given the opening it names an option.
A fallback whose reply holds no value in the shape is asked once more that way, at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator

from rooms_cli.core.records import dataclass
from rooms_cli.models.base import server_cache

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.models.base import Completion, Provider
    from rooms_cli.models.prompt import Message

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


def not_honoured(provider: Provider) -> None:
    """Remember (this process) that `provider`'s server does not honour schemas: none is sent again."""
    _unhonoured.add((provider.type, provider.server_key()))


def verify(provider: Provider, completion: Completion, schema: dict[str, Any]) -> object | None:
    """The value of a reply asked for under `schema`, in its shape, or None; a server whose reply to
    the schema was not in the shape (and not only cut by the limit) is remembered as not honouring it."""
    value = shaped(completion.text, schema) if completion.structured else None
    if value is None and not completion.cut and completion.finish_reason != "repetition":
        _unhonoured.add((provider.type, provider.server_key()))
    return value


def opening(schema: dict[str, Any]) -> str:
    """The start of a reply in the shape of an object `schema`: its first required key and the opening
    of that key's value (`"` for a string, `["` for a list of strings, `[` for another list; no trailing
    space: the Messages API refuses one); '' for another schema."""
    required = schema.get("required") or []
    if schema.get("type") != "object" or not required:
        return ""
    key = str(required[0])
    value: dict[str, Any] = schema.get("properties", {}).get(key) or {}
    items: dict[str, Any] = value.get("items") or {}
    start = {"string": '"', "array": '["' if items.get("type") == "string" else "["}.get(str(value.get("type")), "")
    return f'{{"{key}": {start}' if start else f'{{"{key}":'


def in_text(provider: Provider, messages: Callable[[bool], list[Message]], schema: dict[str, Any]) -> list[Message]:
    """The messages of a call that no schema holds: where the provider continues a reply
    (`Provider.prefills`), the prompt as for a schema (`messages(True)`) prefilled with the reply's
    `opening`, which holds the start of the shape as a grammar would; else `messages(False)`, the shape in words."""
    from rooms_cli.models.prompt import prefilled

    start = opening(schema) if provider.prefills else ""
    return prefilled(messages(True), start) if start else messages(False)


async def ask_structured(provider: Provider, messages: Callable[[bool], list[Message]], schema: dict[str, Any],
                         **kwargs: Any) -> StructuredReply:
    """One structured call, verified (see the module docstring). `messages(structured)` builds the
    prompt: with the schema (True) it need not describe JSON, without it (False) it must. `kwargs`
    go to `acomplete` (model, temperature, max_tokens, agent, purpose, on_delta…)."""
    if not honours_schemas(provider):
        completion = await provider.acomplete(in_text(provider, messages, schema), **_closing(provider, schema, kwargs))
        return StructuredReply(completion, shaped(completion.text, schema), TEXT)
    completion = await provider.acomplete(messages(provider.enforced), schema=schema, **kwargs)
    value = shaped(completion.text, schema) if completion.structured else None
    if value is not None:
        return StructuredReply(completion, value, SCHEMA)
    if completion.structured and completion.cut:  # honoured, but the limit cut the JSON: the caller says so
        return StructuredReply(completion, None, SCHEMA, "the reply was cut at the token limit before its JSON closed")
    _unhonoured.add((provider.type, provider.server_key()))
    problem = _not_honoured(completion.text, schema) if completion.structured else "the server refused the schema"
    value = shaped(completion.text, schema)
    if value is None and provider.prefills:  # asked again at once the way that holds a shape there
        completion = await provider.acomplete(in_text(provider, messages, schema), **_closing(provider, schema, kwargs))
        value = shaped(completion.text, schema)
    return StructuredReply(completion, value, FALLBACK, problem)


def _closing(provider: Provider, schema: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` with "]" as a stop sequence where the prefilled opening is a list's (a ballot): a small
    model otherwise names its labels again and again until the limit (a reader takes each label once)."""
    if provider.prefills and opening(schema).endswith(("[", '["')):
        return {**kwargs, "stop": [*(kwargs.get("stop") or []), "]"]}
    return kwargs


def _not_honoured(text: str, schema: dict[str, Any]) -> str:
    for value in json_values(text, "{["):
        return f"the schema was not honoured: {shape_problem(value, schema)}"
    return "the schema was not honoured: the reply held no JSON"
