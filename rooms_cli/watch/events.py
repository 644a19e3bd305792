"""Turning records into events: `{type, ts, room|group|agent|spawn, …}`, JSON-ready dicts.

Types are `<family>.<what>`: `chat.<kind>` for transcript records (chat.message, chat.pass,
chat.budget_exhausted…), `inbox.<kind>`, `task.<what>`, `group.<what>`, `spawn.start|finish|status`,
`files.reserve|renew|release|expire` (file reservations).
A record of a shape this module does not know still becomes an event: its own type/kind/event field
names it, and `record` carries it whole. Nothing here raises on odd input.
"""

from __future__ import annotations

import os
import re

from rooms_cli.store.clock import now_iso
from rooms_cli.watch.sources import Source

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

ACTIVE_SPAWN_STATUSES = ("starting", "running")
_TAG_RE = re.compile(r"[^a-z0-9_]+")


class EventMaker:
    """Maps records to events; remembers task titles (they are only in a task's `create` event)."""

    def __init__(self) -> None:
        self.titles: dict[str, str] = {}

    def from_record(self, source: Source, record: dict[str, Any]) -> list[dict[str, Any]]:
        """The events one log record stands for (usually one)."""
        try:
            if source.family == "chat":
                return [_chat(source, record)]
            if source.family == "inbox":
                return [_inbox(source, record)]
            if source.family == "task" and isinstance(record.get("ev"), str):
                return [self._task(source, record)]
            if source.family == "group" and isinstance(record.get("ev"), str):
                return [_group(source, record)]
            if source.family == "files" and isinstance(record.get("ev"), str):
                return [_files(source, record)]
        except (TypeError, ValueError, AttributeError, KeyError):
            pass
        return [generic(source, record)]

    def remember(self, source: Source, records: list[dict[str, Any]]) -> dict[str, str]:
        """Take note of records without making events (task titles, for the events to come); returns
        the titles noted (task -> title), which a kept baseline stores (watch/baseline.py)."""
        noted: dict[str, str] = {}
        if source.family == "task":
            for record in records:
                task = str(record.get("task") or task_id_of(source))
                title = self._note_title(task, record)
                if title:
                    noted[task] = title
        return noted

    def _note_title(self, task: str, record: dict[str, Any]) -> str | None:
        changes = record.get("changes") if record.get("ev") == "update" else record
        title = changes.get("title") if isinstance(changes, dict) and record.get("ev") in ("create", "update") else None
        if isinstance(title, str) and title:
            self.titles[task] = title
            return title
        return None

    def from_snapshot(self, source: Source, before: dict[str, Any] | None, after: dict[str, Any]) -> list[dict[str, Any]]:
        """The events between two versions of a replaced JSON document (`before` None: first seen)."""
        if source.family == "spawn":
            return _spawn(source, before, after)
        if before == after:
            return []
        return [generic(source, after)]

    def _task(self, source: Source, record: dict[str, Any]) -> dict[str, Any]:
        what = record["ev"]
        task = str(record.get("task") or task_id_of(source))
        self._note_title(task, record)
        event = _base(f"task.{TASK_EVENTS.get(what) or tag(what) or 'record'}", source, record, ("at", "ts"))
        event["task"] = task
        if task in self.titles:
            event["title"] = self.titles[task]
        _put(event, record, "by", "lane", "status", "lease_id", "from", "to", "pending", "changes", "reason")
        if what == "create":
            _put(event, record, "definition_of_done")
        if what in ("claim", "expire"):
            event["agent"] = record.get("holder") or record.get("by") or ""
            _put(event, record, "plate")
        if what in ("claim", "renew") and record.get("expires_at"):
            event["lease_until"] = record["expires_at"]
        result = record.get("record")
        if isinstance(result, dict):
            _put(event, result, "summary", "next", "artifacts", "result_ref")
            if what == "status" and not event.get("status"):
                _put(event, result, "status")
        if what not in TASK_EVENTS:
            event["record"] = record
        return event


# board log `ev` -> event type
TASK_EVENTS = {
    "create": "created", "claim": "claimed", "renew": "renewed", "release": "released", "expire": "lease_expired",
    "done": "done", "status": "status", "update": "updated", "assign": "assigned", "accept": "accepted",
    "reject": "rejected", "archive": "archived", "resolve": "resolved", "withdraw": "claim_withdrawn",
    "void": "write_voided",
}
# group log `ev` -> event type
GROUP_EVENTS = {
    "created": "created", "member_added": "member_added", "member_removed": "member_removed", "broadcast": "broadcast",
    "reply": "reply", "dropped": "dropped", "gathered": "result", "cancelled": "cancel", "renamed": "renamed",
}


def task_id_of(source: Source) -> str:
    """The task a board log belongs to, from its file name (`t-01abc….jsonl` -> `t-01ABC…`)."""
    stem = os.path.basename(source.path).rsplit(".", 1)[0]

    return stem[:2] + stem[2:].upper() if stem.startswith("t-") else stem


def _base(type_: str, source: Source, record: dict[str, Any], ts_fields: tuple[str, ...] = ("ts",)) -> dict[str, Any]:
    ts = next((record[f] for f in ts_fields if isinstance(record.get(f), str) and record[f]), None)
    return {"type": type_, "ts": ts or now_iso(), source.scope: source.name}


def _put(event: dict[str, Any], record: dict[str, Any], *fields: str) -> dict[str, Any]:
    for f in fields:
        value = record.get(f)
        if value not in (None, "", {}, []):
            event[f] = value
    return event


def _chat(source: Source, record: dict[str, Any]) -> dict[str, Any]:
    kind = tag(record.get("kind")) or "message"
    event = _base(f"chat.{kind}", source, record)
    event["speaker"] = str(record.get("speaker", ""))
    event["text"] = str(record.get("text", ""))
    return _put(event, record, "id", "model", "usage", "meta")


def _inbox(source: Source, record: dict[str, Any]) -> dict[str, Any]:
    kind = tag(record.get("kind")) or "direct"
    event = _base(f"inbox.{kind}", source, record)
    event["from"] = str(record.get("from", ""))
    event["text"] = str(record.get("text", ""))
    return _put(event, record, "n", "id", "tag", "reply_to", "meta")


def _group(source: Source, record: dict[str, Any]) -> dict[str, Any]:
    what = record["ev"]
    event = _base(f"group.{GROUP_EVENTS.get(what) or tag(what) or 'record'}", source, record)
    if record.get("id"):
        event["broadcast"] = record["id"]
    _put(event, record, "handle", "profile", "sender", "by", "text", "status", "elapsed_s", "source", "reason",
         "from", "to", "gid")
    fields = record.get("fields")
    if what == "broadcast" and isinstance(fields, dict):
        event["objective"] = str(fields.get("objective", ""))
        event["fields"] = fields
        event["members"] = [m.get("handle") for m in record.get("members") or [] if isinstance(m, dict)]
    result = record.get("result")
    if what == "gathered" and isinstance(result, dict):
        meta = result.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        event["reduced"] = result.get("reduced")
        _put(event, meta, "reducer", "replied", "members", "winner_handle", "timed_out", "elapsed_s")
        event["result"] = result
    if what not in GROUP_EVENTS:
        event["record"] = record
    return event


def _files(source: Source, record: dict[str, Any]) -> dict[str, Any]:
    event = _base(f"files.{tag(record['ev']) or 'record'}", source, record)
    event.pop("files", None)
    return _put(event, record, "id", "agent", "patterns", "exclusive", "reason", "expires_at", "by", "expired_at")


def _spawn(source: Source, before: dict[str, Any] | None, after: dict[str, Any]) -> list[dict[str, Any]]:
    status = str(after.get("status", ""))
    old = None if before is None else str(before.get("status", ""))
    if old == status:
        return []
    # here, not at the top: the spawn records' module (~3 ms with its schema) only once a spawn changed
    from rooms_cli.messaging.spawn import FINAL

    fields = ("parent", "status", "description", "profile", "model", "pid", "exit_code", "duration_s")
    events = []

    def make(type_: str, ts_fields: tuple[str, ...]) -> dict[str, Any]:
        event = _base(type_, source, after, ts_fields)
        event["agent"] = str(after.get("alias") or source.name)
        return _put(event, after, *fields)

    if before is None:
        events.append(make("spawn.start", ("started", "created", "ts")))
    if status in FINAL:
        events.append(_put(make("spawn.finish", ("finished", "updated", "ts")), after, "output", "error"))
    elif before is not None and status not in ACTIVE_SPAWN_STATUSES:
        events.append(make("spawn.status", ("updated", "ts")))
    return events


def generic(source: Source, record: dict[str, Any]) -> dict[str, Any]:
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
