"""The JSON shape of each record kind a program reads (docs/json.md), as JSON Schema.

One schema per record: a message, a task, a lease, a claim, a result record, a group member, a
reservation. `rooms mcp` declares them as its tools' outputSchema, docs/json.md prints them, and
tests/test_json_shapes.py checks them against the real output of the CLI (`--json`) and of MCP.
Lists come in one envelope everywhere (`page`): an object holding the records under the plural of
their kind ("messages", "tasks", "reservations"…) with "count", "remaining" and "next_cursor".
A leaf module: plain data, no imports of ours.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms): `rooms inbox` imports this module
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

STR = {"type": "string"}
INT = {"type": "integer"}
BOOL = {"type": "boolean"}
TIME = {"type": "string", "description": "UTC, ISO 8601 with Z"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def record(required: dict[str, Any], optional: dict[str, Any] | None = None, *, title: str = "") -> dict[str, Any]:
    """An object schema: these keys always present, those maybe; other keys allowed (additions are not breaking)."""
    schema: dict[str, Any] = {"type": "object", "properties": {**required, **(optional or {})}, "required": list(required)}
    if title:
        schema["title"] = title
    return schema


LEASE = record({"lease_id": STR, "holder": STR, "claimed_at": TIME, "expires_at": TIME, "fence": INT},
               {"plate": STR}, title="lease")

RESULT = record({"task_id": STR, "status": STR, "summary": STR, "artifacts": {"type": "array", "items": STR},
                 "next": nullable(STR), "result_ref": nullable(STR)}, {"plate": STR}, title="result record")

TASK = record({"id": STR, "room": STR, "lane": STR, "title": STR, "status": STR, "definition_of_done": STR,
               "detail": STR, "order": {"type": "number"}, "created_by": STR, "created_at": TIME, "updated_at": TIME,
               "lease": nullable(LEASE), "record": nullable(RESULT), "archived": BOOL,
               "depends_on": {"type": "array", "items": STR}, "blocked_by": {"type": "array", "items": STR}},
              {"fence": INT, "pending": {}, "conflicts": {"type": "array"}, "lapsed_lease": {}, "history": {"type": "array"}},
              title="task")

CLAIM = record({"task": nullable(TASK), "lease": nullable(LEASE), "lease_id": nullable(STR)},
               {"expires_at": nullable(TIME)}, title="claim")

MESSAGE = record({"n": INT, "id": STR, "ts": TIME, "from": STR, "to": STR, "kind": STR, "text": STR, "ref": STR, "read": BOOL},
                 {"tag": STR, "reply_to": INT, "meta": {"type": "object"}}, title="message")

SENT = record({"from": STR, "kind": STR, "to": {"type": "array", "items": STR},
               "delivered": {"type": "array", "items": record({"to": STR, "n": INT, "ref": STR, "id": STR})},
               "reply_to": nullable(INT), "reply_to_id": nullable(STR)},
              {"unknown": {"type": "array", "items": STR}, "woken": {"type": "array"}}, title="sent message")

MEMBER = record({"handle": STR, "profile": STR}, {"state": STR}, title="group member")

RESERVATION = record({"id": STR, "agent": STR, "patterns": {"type": "array", "items": STR}, "exclusive": BOOL,
                      "reason": STR, "created_at": TIME, "expires_at": TIME, "expired": BOOL},
                     title="reservation")

_LIST = {"type": "array"}
OVERVIEW = record({"agent": STR, "room": STR, "at": TIME, "status": STR,
                   "unread": {"type": "array", "items": record({"n": INT, "ref": STR, "from": STR, "text": STR, "ts": TIME, "kind": STR})},
                   "claims": {"type": "array", "items": record({"task": STR, "short": STR, "title": STR, "room": STR, "lane": STR,
                                                               "expires_at": TIME, "seconds_left": INT})},
                   "lanes": {"type": "array", "items": record({"lane": STR, "open": INT, "doing": INT, "blocked": INT})},
                   "groups": _LIST, "rooms": {"type": "array", "items": record({"room": STR, "last_at": TIME, "last_speaker": STR})},
                   "agents": {"type": "array", "items": record({"agent": STR, "status": STR, "updated": nullable(TIME)})}},
                  title="overview")

HIT = record({"kind": {"type": "string", "enum": ["chat", "message", "task", "group", "memory"]}, "id": STR, "ref": STR,
              "who": STR, "ts": TIME, "snippet": STR},
             {"room": STR, "lane": STR, "status": STR, "title": STR, "inbox": STR, "group": STR, "event": STR, "agent": STR},
             title="search hit")

RECORDS: dict[str, dict[str, Any]] = {"message": MESSAGE, "task": TASK, "lease": LEASE, "claim": CLAIM, "result": RESULT,
                            "sent": SENT, "member": MEMBER, "reservation": RESERVATION, "overview": OVERVIEW, "hit": HIT}


def envelope(key: str, item: dict[str, Any], **context: Any) -> dict[str, Any]:
    """The schema of a list of `item` records under `key` in the one list envelope (plus context keys)."""
    return record({key: {"type": "array", "items": item}, "count": INT, "remaining": INT,
                   "next_cursor": nullable(STR), **context}, title=f"list of {item.get('title', 'records')}")


def page(
    name: str, items: list[Any], *, limit: int | None, after: str | None = None,
    key: Callable[[Any], object] | None = None, **context: Any,
) -> dict[str, Any]:
    """`items` (oldest first) in the list envelope, under `name`: those after the one whose `key` is the cursor `after`,
    at most `limit`; `remaining` counts the rest and `next_cursor` (the key of the last shown) fetches them.

    A cursor no item has (say it was archived) is compared as a string: record ids sort by time.
    """
    key = key or (lambda item: item["id"])
    if after is not None:
        keys = [str(key(item)) for item in items]
        items = items[keys.index(after) + 1:] if after in keys else [i for i, k in zip(items, keys, strict=True) if k > after]
    shown = items if limit is None else items[:limit]
    rest = len(items) - len(shown)
    next_cursor = str(key(shown[-1])) if rest and shown else None
    return {**context, name: shown, "count": len(shown), "remaining": rest, "next_cursor": next_cursor}
