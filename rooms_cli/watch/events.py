"""Turning records into events: `{type, ts, room|group|agent|spawn, …}`, JSON-ready dicts.

Types are `<family>.<what>`: `chat.<kind>` for transcript records (chat.message, chat.pass,
chat.budget_exhausted…), `inbox.<kind>`, `task.<what>`, `group.<what>`, `spawn.start|finish|status`.
A record of a shape this module does not know still becomes an event: its own type/kind/event field
names it, and `record` carries it whole. Nothing here raises on odd input.
"""

from __future__ import annotations

import re

from rooms_cli.store.clock import now_iso
from rooms_cli.watch.sources import Source

FINAL_SPAWN_STATUSES = ("done", "failed", "lost", "finished", "error", "killed", "cancelled")
_TAG_RE = re.compile(r"[^a-z0-9_]+")


def from_record(source: Source, record: dict) -> list[dict]:
    """The events one log record stands for (usually one)."""
    try:
        if source.family == "chat":
            return [_chat(source, record)]
        if source.family == "inbox":
            return [_inbox(source, record)]
    except (TypeError, ValueError, AttributeError):
        pass
    return [generic(source, record)]


def from_snapshot(source: Source, before: dict | None, after: dict) -> list[dict]:
    """The events between two versions of a replaced JSON document (`before` None: first seen)."""
    if source.family == "spawn":
        return _spawn(source, before, after)
    if before == after:
        return []
    return [generic(source, after)]


def _base(type_: str, source: Source, record: dict, ts_fields=("ts",)) -> dict:
    ts = next((record[f] for f in ts_fields if isinstance(record.get(f), str) and record[f]), None)
    return {"type": type_, "ts": ts or now_iso(), source.scope: source.name}


def _put(event: dict, record: dict, *fields: str) -> dict:
    for f in fields:
        value = record.get(f)
        if value not in (None, "", {}, []):
            event[f] = value
    return event


def _chat(source: Source, record: dict) -> dict:
    kind = tag(record.get("kind")) or "message"
    event = _base(f"chat.{kind}", source, record)
    event["speaker"] = str(record.get("speaker", ""))
    event["text"] = str(record.get("text", ""))
    return _put(event, record, "id", "model", "mode", "meta")


def _inbox(source: Source, record: dict) -> dict:
    kind = tag(record.get("kind")) or "direct"
    event = _base(f"inbox.{kind}", source, record)
    event["from"] = str(record.get("from", ""))
    event["text"] = str(record.get("text", ""))
    return _put(event, record, "n", "id", "tag", "reply_to", "meta")


def _spawn(source: Source, before: dict | None, after: dict) -> list[dict]:
    status = str(after.get("status", ""))
    old = None if before is None else str(before.get("status", ""))
    if old == status:
        return []
    fields = ("id", "alias", "parent", "status", "description", "profile", "pid", "exit_code")
    events = []
    if before is None:
        start = _base("spawn.start", source, after, ("started", "created", "ts"))
        events.append(_put(start, after, *fields))
    if status in FINAL_SPAWN_STATUSES:
        finish = _base("spawn.finish", source, after, ("finished", "ended", "updated", "ts"))
        _put(finish, after, *fields, "error")
        output = after.get("output")
        if isinstance(output, str) and output:
            finish["output"] = output
        events.append(finish)
    elif before is not None:
        events.append(_put(_base("spawn.status", source, after, ("updated", "ts")), after, *fields))
    return events


def generic(source: Source, record: dict) -> dict:
    """An event for a record of unknown shape: named by its own type/event/kind field, carried whole."""
    what = ""
    for key in ("type", "event", "kind", "op", "action", "status"):
        what = tag(record.get(key))
        if what:
            break
    event = _base(f"{source.family}.{what or 'record'}", source, record, ("ts", "at", "time", "created"))
    event["record"] = record
    return event


def tag(value: object) -> str:
    """A value made safe to use in an event type (`Lease Expired` → `lease_expired`)."""
    if not isinstance(value, str):
        return ""
    return _TAG_RE.sub("_", value.strip().lower()).strip("_")[:40]


def summarize(record: object, limit: int = 120) -> str:
    """A compact one-line `key=value` view of a record, for rendering what we do not know."""
    if not isinstance(record, dict):
        text = str(record)
    else:
        parts = []
        for key, value in record.items():
            if key in ("ts", "type", "event", "kind") or value in (None, "", [], {}):
                continue
            if isinstance(value, (dict, list)):
                value = "{…}" if isinstance(value, dict) else f"[{len(value)}]"
            parts.append(f"{key}={value}")
        text = " ".join(parts)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
