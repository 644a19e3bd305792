"""Which records are searchable documents, and what each one holds.

    family    log                                   a document                     ref (what cites it)
    chat      rooms/<room>/transcript.jsonl         a message said in the room     msg:<id>
                                                    (kinds message, handoff,
                                                    roundtable; not a /pass)
    messages  inbox/<agent>.jsonl                   a message in the inbox (not    inbox:<id>
                                                    a group's broadcast delivered
                                                    there: that is its group's)
    tasks     rooms/<room>/board/tasks/<id>.jsonl   the task as replayed: title,   task:<id>
                                                    detail, definition of done,
                                                    its result's summary and next
    groups    groups/<name>.jsonl                   a broadcast (its objective as  group:<broadcast id>,
                                                    title, its other fields) or    group:<reply's event id>
                                                    a member's reply
    memories  memories/<agent>.jsonl                a lesson not forgotten         lesson:<id>

A ref is what `rooms task done --artifact` and `--result-ref` take (board/references.py checks each).

A record its reader would skip (`schema.problem`, not strict, as every reader checks), one without an id,
or one without text is no document; a line that does not parse is skipped here too (`rooms doctor`
names it). Every document of a line-read log records where its line is (`at`, `length`), so a hit can be
read back from the log and compared (`same`); a task is the replay of its whole log (board/replay.py),
read again whole whenever the log changes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from rooms_cli.core.records import dataclass, field
from rooms_cli.store import order, schema
from rooms_cli.store.ftsindex import Doc

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

KIND = {"chat": "chat", "messages": "message", "tasks": "task", "groups": "group", "memories": "memory"}
WHOLE = ("tasks",)  # families whose document is the fold of the whole log
SAID = ("message", "handoff", "roundtable")  # transcript kinds someone said (not a /pass, a join, a budget note)
ENVELOPES = ("group", "group_cancel")  # inbox copies of a group log's events: found once, in the group's log


@dataclass
class Parsed:
    """What some lines of a log give: documents to add, and keys of documents they remove (a forgotten lesson)."""

    docs: list[Doc] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)


def lines(data: bytes, start: int) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(offset, length, record) of each line of `data` (whole lines read at byte `start`) holding a JSON
    object; other lines are skipped."""
    pos, size = 0, len(data)
    while pos < size:
        end = data.find(b"\n", pos)
        if end < 0:
            end = size
        raw = data[pos:end]
        if raw.strip():
            try:
                record = json.loads(raw)
            except ValueError:  # not JSON, not UTF-8, a conflict marker: doctor names it
                record = None
            if isinstance(record, dict):
                yield start + pos, end - pos, record
        pos = end + 1


def from_lines(family: str, scope: str, data: bytes, start: int) -> Parsed:
    """The documents of the whole lines `data` of a `family` log (`scope`: its room, agent or group),
    read at byte `start`."""
    make = _MAKERS[family]
    parsed = Parsed()
    for at, length, record in lines(data, start):
        made = make(scope, record)
        if isinstance(made, Doc):
            made.at, made.length = at, length
            parsed.docs.append(made)
        elif made:
            parsed.gone += made
    return parsed


def task_doc(room: str, task_id: str, data: bytes) -> Doc | None:
    """The document of a task: its log's records (`data`, the whole log) replayed in the one order."""
    from rooms_cli.board.replay import replay_log

    task = replay_log(task_id, room, order.ordered([record for _, _, record in lines(data, 0)]))
    record = task.record if isinstance(task.record, dict) else {}
    body = "\n".join(text for text in (task.detail, task.definition_of_done, record.get("summary"), record.get("next"))
                     if isinstance(text, str) and text.strip())
    if not (task.title.strip() or body):
        return None
    status = f"{task.status}, archived" if task.archived else task.status
    return Doc(key=task.id, kind="task", rid=task.id, ref=f"task:{task.id}", who=task.created_by, ts=task.updated_at or task.created_at,
               title=task.title, body=body, room=room, lane=task.lane, status=status, at=0, length=len(data))


def _text(record: dict[str, Any], name: str) -> str:
    value = record.get(name)
    return value if isinstance(value, str) else ""


def _chat(room: str, record: dict[str, Any]) -> Doc | None:
    if schema.problem("transcript", record, strict=False) is not None or record.get("kind", "message") not in SAID:
        return None
    rid, text = _text(record, "id"), _text(record, "text")
    if not rid or not text.strip():
        return None
    return Doc(key=rid, kind="chat", rid=rid, ref=f"msg:{rid}", who=_text(record, "speaker"), ts=_text(record, "ts"),
               title="", body=text, room=room)


def _message(agent: str, record: dict[str, Any]) -> Doc | None:
    if schema.problem("inbox", record, strict=False) is not None or record.get("kind") in ENVELOPES:
        return None
    rid, text = _text(record, "id"), _text(record, "text")
    if not rid or not text.strip():
        return None
    return Doc(key=rid, kind="message", rid=rid, ref=f"inbox:{rid}", who=_text(record, "from"), ts=_text(record, "ts"), title="",
               body=text, place=agent, status=_text(record, "kind"))


def _group(name: str, record: dict[str, Any]) -> Doc | None:
    if schema.problem("group-event", record, strict=False) is not None:
        return None
    event, broadcast = record.get("ev"), _text(record, "id")
    if not broadcast:
        return None
    if event == "broadcast":
        fields = record["fields"] if isinstance(record.get("fields"), dict) else {}
        title = str(fields.get("objective") or "")
        body = "\n".join(str(value) for key, value in fields.items() if key != "objective" and isinstance(value, str) and value.strip())
        who = _text(record, "sender")
        key = cited = broadcast
    elif event == "reply":
        title, body, who = "", _text(record, "text"), _text(record, "handle")
        # a reply is cited by its event id; a hand-written one without it, by the broadcast it answers
        cited = _text(record, "eid") or broadcast
        key = _text(record, "eid") or f"{broadcast}/{who}"
    else:
        return None
    if not (title.strip() or body.strip()):
        return None
    return Doc(key=key, kind="group", rid=key, ref=f"group:{cited}", who=who, ts=_text(record, "ts"), title=title, body=body,
               place=name, status=str(event))


def _memory(agent: str, record: dict[str, Any]) -> Doc | list[str] | None:
    if schema.problem("memory", record, strict=False) is not None:
        return None
    if "forget" in record:
        return [key for key in record["forget"] if isinstance(key, str)]
    rid, lesson = _text(record, "id"), _text(record, "lesson")
    if not rid or not lesson.strip():
        return None
    return Doc(key=rid, kind="memory", rid=rid, ref=f"lesson:{rid}", who=_text(record, "agent") or agent, ts=_text(record, "ts"),
               title="", body=lesson, place=agent)


_MAKERS: dict[str, Any] = {"chat": _chat, "messages": _message, "groups": _group, "memories": _memory}
