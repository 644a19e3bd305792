"""Our records as JSON, for both front ends: the CLI's `--json` (cli/output.py) and the MCP server.

A record is anything with a `to_json()` method (a task, a claim, a send result…). A leaf: imports
nothing of ours.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any


def to_jsonable(value: Any) -> Any:
    """`value` as plain JSON data (dicts, lists, text, numbers): records through their to_json."""
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def encode_record(value: Any) -> Any:
    """json's `default`: a record (anything with to_json) as its JSON; anything else is a bug."""
    if hasattr(value, "to_json"):
        return value.to_json()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def dumps(data: Any, indent: int | None = None) -> str:
    """`data` as JSON text, records through their to_json. The same text as json.dumps(to_jsonable(data)),
    but the C encoder walks the data (a board of 10 000 tasks: ~40 ms instead of ~100 ms)."""
    return json.dumps(data, ensure_ascii=False, indent=indent, default=encode_record)
