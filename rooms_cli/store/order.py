"""The one order every replay reads a log in: the record's hybrid-logical-clock stamp, then its id.

A git union merge (and `rooms sync`) puts one clone's new lines after the other's, so file order
depends on who merged whom; every reader that replays a log (board, inbox, transcript, groups, room
state, queue, status, memories, schedule) sorts it with `ordered`, so every clone reads the same.

- A record with `hlc` (every record rooms appends, store/clock.py) sorts by it, then by its id (`eid`,
  else `id`).
- A record without one (written by hand) sorts by its time (`ts`, else `at`), then its id; a stamp
  starts with the same ISO time, and such a key sorts before a stamp of the same millisecond. Records
  without a stamp that tie on both keep their file order.
- A record that arrives twice (by sync and again by a pull) counts once: same id and stamp, or for a
  record without both, the same content.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


def record_id(record: dict[str, Any]) -> str:
    """The record's own id: `eid` (event logs), else `id`, else ''."""
    for field in ("eid", "id"):
        value = record.get(field)
        if isinstance(value, str) and value:
            return value
    return ""


def sort_key(record: dict[str, Any]) -> str:
    """The record's place in every log, as one string (`\\x1f` sorts before the `-` of a stamp)."""
    stamp = record.get("hlc")
    if isinstance(stamp, str) and stamp:
        return f"{stamp}\x1f{record_id(record)}"
    ts = record.get("ts")
    if not isinstance(ts, str):
        ts = record.get("at")
    return f"{ts if isinstance(ts, str) else ''}\x1f{record_id(record)}"


def identity(record: dict[str, Any]) -> object:
    """What makes two lines one record: its id and stamp; without both, its content."""
    stamp, rid = record.get("hlc"), record_id(record)
    if isinstance(stamp, str) and stamp and rid:
        return (rid, stamp)
    return _content(record)


def ordered(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:

    """`records` in the one order, each record once (`identity`).

    A stamped record without an id (a task event) is told apart by its content, as `identity` says;
    its content holds its stamp, so only records sharing a stamp can be one record, and the content
    is serialised only then (a copy, or a true stamp collision) instead of for every record: the
    JSON of each event was a quarter of a board replay."""
    seen: set[Any] = set()
    by_stamp: dict[str, list[dict[str, Any]]] = {}  # stamp -> the id-less records kept with it
    unique = []
    for record in records:
        stamp = record.get("hlc")
        if isinstance(stamp, str) and stamp and not record_id(record):
            kept = by_stamp.get(stamp)
            if kept is None:
                by_stamp[stamp] = [record]
            elif _content(record) in {_content(other) for other in kept}:
                continue
            else:
                kept.append(record)
        else:
            key = identity(record)
            if key in seen:
                continue
            seen.add(key)
        unique.append(record)
    unique.sort(key=sort_key)
    return unique


def _content(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False)
