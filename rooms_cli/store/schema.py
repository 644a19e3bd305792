"""What each kind of state record must hold: one table, and one check that the readers, the writers and
`rooms doctor` all call, so doctor can never disagree with a reader.

`SCHEMAS[kind]` maps a field to `(predicate, what it must be)`. A field that is absent is not
checked (readers default it); a field that is present must satisfy its predicate. `RECORDS[kind]`
adds what one field cannot say (the fields an event of each kind needs, the value a room event
sets). `problem(kind, record)` names the first thing wrong, as the end of one sentence ("field
'queued' must be a list of mappings with id, agents, speaker and text"); `validate(kind, record,
where)` raises it as `InvalidData` ("<file>: field … must be …", exit 1) — so a hand edit or a bad
merge that gives a field the wrong type is one sentence naming file and field, never an internal
error, and doctor reports the same sentence. A reader passes `strict=False`: a record of a kind,
op or field this version does not know (a newer version's) passes, and the reader ignores it;
doctor (strict) names it. A writer validates what it appends, so nothing it writes is refused by
its reader. Only the standard library: readers on every command path import this.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from rooms_cli.core.errors import InvalidData
from rooms_cli.store.ids import is_valid_name

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms a process); mypy reads the name

if TYPE_CHECKING:  # board reads check their records here
    from typing import Any

    from rooms_cli.store.files import StrPath


    Check = tuple[Callable[[Any], bool], str]


def is_text(value: Any) -> bool:
    return isinstance(value, str)


def is_count(value: Any) -> bool:
    """A whole number from 0 (a budget, a sequence number)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_word(value: Any) -> bool:
    """Text that is not empty (a member's handle, a profile)."""
    return isinstance(value, str) and value != ""


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_name(value: Any) -> bool:
    """An id usable as a file name: no slash, no `..`, no control characters (store/ids.py)."""
    return isinstance(value, str) and is_valid_name(value)


_TASK_ID = re.compile(r"t-[0-9A-Za-z]{1,64}")


def is_task_id(value: Any) -> bool:
    # a cold read of a 10 000-task board checks 10 000 create events: the pattern is compiled once
    return isinstance(value, str) and _TASK_ID.fullmatch(value) is not None


def _list_of(predicate: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and all(predicate(item) for item in value)


def _optional(predicate: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: value is None or predicate(value)


def _queued_entry(value: Any) -> bool:
    return (isinstance(value, dict) and is_text(value.get("id")) and is_text(value.get("speaker", ""))
            and is_text(value.get("text", "")) and _list_of(is_text)(value.get("agents", [])))


def is_mapping(value: Any) -> bool:
    return isinstance(value, dict)


def is_gathered_result(value: Any) -> bool:
    """A group's gathered result: a mapping whose `by_member` maps handles to mappings and whose
    `metadata` is a mapping (both may be absent)."""
    if not isinstance(value, dict):
        return False
    by_member, metadata = value.get("by_member", {}), value.get("metadata", {})
    return isinstance(by_member, dict) and isinstance(metadata, dict) and all(isinstance(r, dict) for r in by_member.values())


def _one_of(*values: str) -> Check:
    return (lambda value: isinstance(value, str) and value in values, "one of " + ", ".join(values))


# the kinds of record each log knows; a line of another kind is dropped (or ignored) by its reader
TRANSCRIPT_KINDS = ("message", "pass", "flavor", "repeat", "system", "budget_exhausted", "handoff_suggested",
                    "join", "kick", "mute", "unmute", "handoff", "continue", "roundtable")
GROUP_EVENTS = ("created", "member_added", "member_removed", "broadcast", "reply", "dropped", "gathered", "cancelled",
                "renamed", "dissolved")
INBOX_KINDS = ("direct", "broadcast", "group", "group_cancel", "spawn_output", "spawn_error")
QUEUE_OPS = ("enqueue", "claim", "heartbeat", "requeue", "done", "failed")
ROOM_OPS = ("created", "set", "spend", "add", "remove")
ROOM_SCALARS = ("status", "budget_total", "budget_remaining", "rehydrated_from", "created")
ROOM_LISTS = ("roster", "muted", "handoff", "kicked", "queued")

TEXT: Check = (is_text, "text")
TEXT_OR_NULL: Check = (_optional(is_text), "text or null")
COUNT_OR_NULL: Check = (_optional(is_count), "a whole number from 0 or null")
MAPPING: Check = (is_mapping, "a mapping")
NAME: Check = (is_name, "a name (letters, digits, '-', '_', '.'; no '/' or '..')")
COUNT: Check = (is_count, "a whole number from 0")
NAMES: Check = (_list_of(is_text), "a list of names")

OPTIONAL_MAPPING: Check = (_optional(is_mapping), "a mapping or null")
TASK_IDS: Check = (_list_of(is_task_id), "a list of task ids")
WORD: Check = (is_word, "non-empty text")

SCHEMAS: dict[str, dict[str, Check]] = {
    # each line of rooms/<room>/transcript.jsonl (chat/transcript.py)
    "transcript": {"id": TEXT, "ts": TEXT, "room": TEXT, "speaker": TEXT, "kind": _one_of(*TRANSCRIPT_KINDS), "text": TEXT,
                   "model": TEXT_OR_NULL, "usage": OPTIONAL_MAPPING, "meta": OPTIONAL_MAPPING},
    # each line of rooms/<room>/state.jsonl (chat/rooms.py); `value` is checked by `_room_event`
    "room-event": {"op": _one_of(*ROOM_OPS), "eid": TEXT, "ts": TEXT, "field": TEXT, "state": MAPPING},
    # each line of rooms/<room>/sessions/<agent>.jsonl (chat/sessions.py)
    "session": {"eid": TEXT, "ts": TEXT, "kind": TEXT, "input_tokens": COUNT, "output_tokens": COUNT,
                "answered": TEXT, "reply": TEXT},
    # the `state` of a `created` event in rooms/<room>/state.jsonl
    "room": {
        "id": NAME,
        "status": (lambda v: v in ("live", "dropped", "halted"), "one of live, dropped, halted"),
        "created": TEXT,
        "roster": NAMES, "muted": NAMES, "handoff": NAMES, "kicked": NAMES,
        "budget_total": COUNT,
        "budget_remaining": COUNT,
        "queued": (_list_of(_queued_entry), "a list of mappings with id, agents, speaker and text"),
        "rehydrated_from": (_optional(is_text), "text or null"),
    },
    # each line of status/<agent>.jsonl (messaging/status.py)
    "status": {"id": TEXT, "ts": TEXT, "status": TEXT, "announced": TEXT},
    # each event of a task log rooms/<room>/board/tasks/<task>.jsonl (board/replay.py; its kinds are the
    # replay's, and an unknown one is a conflict there)
    "task-event": {"ev": TEXT, **{key: TEXT for key in ("at", "by", "lease_id", "expires_at", "holder", "plate", "status", "to",
                                                         "from", "lane", "title", "detail", "definition_of_done", "of",
                                                         "reason")},
                   "sync": (lambda value: value is True, "true (a write that counts once the git remote holds it)"),
                   "changes": OPTIONAL_MAPPING, "pending": OPTIONAL_MAPPING, "record": OPTIONAL_MAPPING,
                   "fence": (is_int, "a whole number"), "order": (is_number, "a number"), "depends_on": TASK_IDS},
    # the create event of a task log, on top of "task-event"
    "task-create": {"task": (is_task_id, "a task id (t- and letters or digits)"), "lane": NAME, "title": TEXT, "detail": TEXT, "definition_of_done": TEXT,
                    "by": TEXT, "at": TEXT},
    # each line of groups/<name>.jsonl (groups/log.py)
    "group-event": {"ev": _one_of(*GROUP_EVENTS), "ts": TEXT, "fields": (_optional(is_mapping), "a mapping of the broadcast's fields"), "eid": TEXT,
                    "id": TEXT, "handle": WORD, "profile": WORD,
                    "result": (_optional(is_gathered_result), "a mapping (by_member: mappings, metadata) or null")},
    # each line of inbox/<agent>.jsonl (messaging/inbox.py)
    "inbox": {"n": COUNT, "id": TEXT, "ts": TEXT, "from": TEXT, "to": TEXT, "kind": _one_of(*INBOX_KINDS), "text": TEXT,
              "tag": TEXT_OR_NULL, "reply_to": COUNT_OR_NULL, "meta": (_optional(is_mapping), "a mapping or null")},
    # each line of inbox/read/<agent>.jsonl: {"id", "ts", "read": [ids]}
    "inbox-read": {"id": TEXT, "ts": TEXT, "read": (_list_of(is_text), "a list of message ids")},
    # spawns/<id>.json (messaging/spawn.py)
    "spawn": {"id": NAME, "parent": TEXT, "alias": TEXT, "prompt": TEXT, "description": TEXT, "status": TEXT,
              "created": TEXT, "depth": COUNT, "pid": COUNT_OR_NULL, "runner_pid": COUNT_OR_NULL,
              "delivered": COUNT_OR_NULL, "runner": (_optional(_list_of(is_text)), "a list of arguments or null"),
              "host": TEXT_OR_NULL, "output": TEXT_OR_NULL, "error": TEXT_OR_NULL,
              "profile": TEXT_OR_NULL, "model": TEXT_OR_NULL, "started": TEXT_OR_NULL, "finished": TEXT_OR_NULL,
              "exit_code": (_optional(is_int), "a whole number or null"),
              "duration_s": (_optional(is_number), "a number or null")},
    # each line of memories/<agent>.jsonl: a lesson, or {"id", "ts", "forget": [ids]}
    "memory": {"id": TEXT, "ts": TEXT, "agent": TEXT, "lesson": TEXT, "source": TEXT_OR_NULL,
               "forget": (_list_of(is_text), "a list of lesson ids")},
    # each line of schedule/fired.jsonl (roundtable/schedule.py)
    "schedule-fired": {"id": TEXT, "ts": TEXT, "slot": TEXT, "key": TEXT},
    # each line of roundtables/queue.jsonl (roundtable/queue.py)
    "roundtable-queue": {"op": _one_of(*QUEUE_OPS), "id": TEXT, "ts": TEXT, "request": MAPPING, "by": TEXT,
                         "attempt": COUNT, "reason": TEXT, "error": TEXT},
}


def problem(kind: str, record: Any, *, strict: bool = True) -> str | None:
    """What is wrong with `record` as a `kind` record (the end of a sentence), or None: each field
    `SCHEMAS[kind]` names, then what `RECORDS[kind]` checks of the whole. `strict=False` (a reader):
    a record whose kind, op or field this version does not know passes (the reader ignores it)."""
    if not isinstance(record, dict):
        return f"expected a mapping (it is {type(record).__name__} {_shown(record)})"
    fields = SCHEMAS[kind]
    if not strict:
        for key in _KIND_FIELDS:
            if key in record and _field(fields, key, record[key]) is not None:
                return None
    texts = _TEXT_FIELDS[kind]
    for key, value in record.items():
        # a replay checks every event: text fields (most of them) without a call per field
        if (not isinstance(value, str) if key in texts else key in fields and not fields[key][0](value)):
            if not strict and key == "kind" and isinstance(value, str):
                continue  # a kind of message this version does not know (a newer version's): its reader shows it
            return _field(fields, key, value)
    whole = RECORDS.get(kind)
    return whole(record, strict) if whole is not None else None


def _field(fields: dict[str, Check], key: str, value: Any) -> str | None:
    """What is wrong with `value` for the field `key` of `fields`, or None (a field not named passes)."""
    check = fields.get(key)
    if check is None or check[0](value):
        return None
    return f"field {key!r} must be {check[1]} (it is {_shown(value)})"


def _missing(record: dict[str, Any], needed: tuple[str, ...]) -> str | None:
    for key in needed:  # every event of a replay: no list built when nothing is missing
        if key not in record:
            return "missing " + ", ".join(k for k in needed if k not in record)
    return None


# the field naming a record's kind: a value this version does not know is a newer version's record
_KIND_FIELDS = ("op", "ev")

_GROUP_NEEDS = {"member_added": ("handle", "profile"), "member_removed": ("handle",), "broadcast": ("id",),
                "reply": ("id", "handle"), "dropped": ("id", "handle"), "gathered": ("id",), "cancelled": ("id",)}
_TASK_NEEDS = {"claim": ("lease_id", "fence", "expires_at"), "status": ("status",), "assign": ("to",), "withdraw": ("lease_id",),
               "void": ("lease_id", "of"),
               **{kind: ("lease_id",) for kind in ("renew", "release", "done", "expire")}}


def _group_event(ev: dict[str, Any], strict: bool) -> str | None:
    """The fields an event of each kind of a group log needs (`_Replay` reads them)."""
    return _missing(ev, _GROUP_NEEDS.get(ev.get("ev", ""), ()))


def _task_event(ev: dict[str, Any], strict: bool) -> str | None:
    """A task event names its kind; a create holds a valid task ("task-create"), a proposal its three
    ends, and each kind the fields its replay reads (`board/replay.py`)."""
    kind = ev.get("ev")
    if not isinstance(kind, str):
        return "field 'ev' must be text (it is missing)"
    if kind == "create":
        return problem("task-create", ev)
    if kind == "update":
        changed = (ev.get("changes") or {}).get("depends_on")
        if changed is not None and not (isinstance(changed, dict) and all(
                TASK_IDS[0](changed.get(end, [])) for end in ("add", "remove"))):
            return "field 'changes.depends_on' must be a mapping of add and remove, each a list of task ids"
    pending = ev.get("pending")
    if pending and not (isinstance(pending.get("from"), str) and isinstance(pending.get("to"), str)
                        and isinstance(pending.get("owner"), str)):
        return "field 'pending' lacks from, to or owner"
    return _missing(ev, _TASK_NEEDS.get(kind, ()))


def _room_event(ev: dict[str, Any], strict: bool) -> str | None:
    """What a room state event sets: a value of the wrong type, a budget below 0 and, when `strict`,
    an op missing or a field this version does not know."""
    check = _ROOM_VALUES.get(ev.get("op", ""))
    if check is None:
        return "field 'op' must be one of " + ", ".join(ROOM_OPS) + " (it is missing)" if strict else None
    return check(ev, strict)


def _room_created(ev: dict[str, Any], strict: bool) -> str | None:
    return problem("room", ev.get("state"))


def _room_spend(ev: dict[str, Any], strict: bool) -> str | None:
    value = ev.get("value")
    return None if is_int(value) else f"field 'value' must be a whole number (it is {_shown(value)})"


def _room_set(ev: dict[str, Any], strict: bool) -> str | None:
    name, value = ev.get("field"), ev.get("value")
    if name not in ROOM_SCALARS:
        return f"'set' of an unknown field {_shown(name)} (one of {', '.join(ROOM_SCALARS)})" if strict else None
    wrong = _field(SCHEMAS["room"], str(name), value)
    return None if wrong is None else wrong.replace(f"field {name!r}", f"field {name!r} (value)")


def _room_list(ev: dict[str, Any], strict: bool) -> str | None:
    op, name, value = ev.get("op"), ev.get("field"), ev.get("value")
    if name not in ROOM_LISTS:
        return f"{op!r} of an unknown list {_shown(name)} (one of {', '.join(ROOM_LISTS)})" if strict else None
    if name == "queued":
        ok = isinstance(value, dict) and isinstance(value.get("id"), str) and isinstance(value.get("agent"), str)
        return None if ok else "field 'value' must be a mapping with id and agent"
    return None if isinstance(value, str) else f"field 'value' must be a name (it is {_shown(value)})"


def _spawn(record: dict[str, Any], strict: bool) -> str | None:
    """A spawn record names itself, its parent and its alias, and holds its prompt (messaging/spawn.py)."""
    if not all(record.get(key) for key in ("id", "parent", "alias")) or not isinstance(record.get("prompt"), str):
        return "fields 'id', 'parent', 'alias' and 'prompt' are required"
    return None


_ROOM_VALUES = {"created": _room_created, "spend": _room_spend, "set": _room_set, "add": _room_list, "remove": _room_list}

# what a record of a kind must hold beyond its fields' types
def _inbox(record: dict[str, Any], strict: bool) -> str | None:
    """An inbox line without its id or number: its reader shows it, but it can never be marked read or
    replied to (doctor only: `strict`)."""
    if not strict:
        return None
    gone = [key for key in ("id", "n") if key not in record]
    return f"has no {' and no '.join(map(repr, gone))}: it can never be marked read or replied to" if gone else None


RECORDS: dict[str, Callable[[dict[str, Any], bool], str | None]] = {
    "group-event": _group_event, "task-event": _task_event, "room-event": _room_event, "spawn": _spawn,
    "inbox": _inbox,
}


# each kind's fields that must be text: checked inline by `problem`
_TEXT_FIELDS = {kind: frozenset(key for key, check in fields.items() if check is TEXT) for kind, fields in SCHEMAS.items()}


def validate(kind: str, record: Any, where: str, *, strict: bool = True) -> None:
    """Raise InvalidData("<where>: field … must be …") when `record` breaks the `kind` schema."""
    found = problem(kind, record, strict=strict)
    if found is not None:
        raise InvalidData(f"{where}: {found}")


def checked(kind: str, records: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
    """`records`, each first checked as its reader will read it (`validate`): a writer's last step, so
    what this version appends is never what its own readers skip and doctor reports."""
    for record in records:
        validate(kind, record, where)
    return records


def usable(kind: str, records: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
    """The records of the log `where` a reader uses: those `problem(kind, record, strict=False)` passes.

    A record it refuses (`"text": 5`, `"n": "x"`, `"lesson": null`: a hand edit, a bad merge) is read
    like a line that does not parse (store/jsonl.py): skipped, with one warning per process naming the
    log, the record's id and the field in doctor's words, and every other record kept — never a
    traceback, never garbage shown, never a good record lost."""
    kept = []
    for record in records:
        wrong = problem(kind, record, strict=False)
        if wrong is None:
            kept.append(record)
        else:
            _skip(where, record, wrong)
    return kept


_skipped: set[str] = set()


def _skip(where: str, record: dict[str, Any], wrong: str) -> None:
    ident = next((f"{key} {record[key]}" for key in ("id", "eid") if isinstance(record.get(key), str) and record[key]), "")
    text = f"{where}{f' ({ident})' if ident else ''}: {wrong}; skipped, the other lines are kept (rooms doctor names its line)"
    if text not in _skipped:
        _skipped.add(text)
        from rooms_cli.core import terminal

        terminal.warn(text)


def records(path: StrPath) -> list[tuple[int | None, Any]]:
    """`(line, record)` for each record of `path` that parses: each line of a `.jsonl` log (numbered from
    1), or the one record of a `.json` file (line None). What does not parse is left out (doctor's
    file checks name it); a file that cannot be read gives nothing."""
    import json

    from rooms_cli.store import files

    try:
        text = files.read_text(path)
    except (OSError, UnicodeDecodeError):

        return []
    if not os.fspath(path).endswith(".jsonl"):
        try:
            return [(None, json.loads(text))]
        except ValueError:
            return []
    out: list[tuple[int | None, Any]] = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            out.append((number, json.loads(line)))
        except ValueError:
            continue
    return out


def file_problems(kind: str, path: StrPath) -> list[tuple[int | None, str]]:

    """`(line, problem)` for each record of `path` (`records`) that breaks the `kind` schema."""
    found = ((line, problem(kind, record)) for line, record in records(path))
    return [(line, wrong) for line, wrong in found if wrong is not None]


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
