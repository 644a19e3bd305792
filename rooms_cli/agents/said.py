"""What agents have said lately, anywhere: the lines a new reply is held against so that an agent does
not say its own line again in another room.

    lately = recent_lines(project, {"analyst", "boss"})   # {"analyst": [Said, …] newest first, …}

A small model says its line again and again, and not only in one room: Gemma 3 270M said "You are a
modeler…" in chat, then as its debate turn, then to a hex dump. Each part checks a reply against the
conversation it is in (the room's tail, the roundtable's turns); this adds what the same agent said
elsewhere: its messages in every room (chat rooms and roundtables, which write into rooms) and its
replies as a woken agent (inbox messages it sent, `meta.auto: wake`).

Bounded whatever the project's size: the transcripts of the `ROOMS_READ` rooms written to most
recently and the inboxes likewise, each read from its end (`TAIL` records, store/jsonl.tail), and at
most `limit` lines an agent, newest first. A record that is not a spoken message (a pass, a `repeat`,
a system line) is not something the agent said. Read-only; nothing here raises for a damaged line
(jsonl.tail skips it) or a missing folder.
"""

from __future__ import annotations

from rooms_cli.core.records import dataclass
from rooms_cli.store import cache, files, jsonl, layout
from rooms_cli.store.ids import is_valid_name

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from rooms_cli.store.paths import Project

RECENT = 20  # lines an agent, newest first
TAIL = 200  # records read from the end of each transcript or inbox
ROOMS_READ = 16  # the rooms (and inboxes) written to most recently


@dataclass
class Said:
    """One line an agent said: its record id, the speaker, the text, where (a room, or `inbox:<to>`) and when."""

    id: str
    speaker: str
    text: str
    where: str
    ts: str


def recent_lines(project: Project, agents: Iterable[str], limit: int = RECENT) -> dict[str, list[Said]]:
    """{agent: its last `limit` lines anywhere, newest first} for each of `agents` (see the module docstring)."""
    wanted = set(agents)
    found: dict[str, list[Said]] = {a: [] for a in wanted}
    if not wanted:
        return found
    rooms = [n for n in files.names(layout.rooms_dir(project)) if is_valid_name(n)]
    for room, path in _latest([(n, layout.transcript_file(project, n)) for n in rooms]):
        for record in jsonl.tail(path, TAIL):
            speaker = record.get("speaker")
            if speaker in wanted and record.get("kind") == "message":
                _add(found, record, str(speaker), room)
    owners = [n.removesuffix(".jsonl") for n in files.names(layout.inbox_dir(project)) if n.endswith(".jsonl")]
    for owner, path in _latest([(o, layout.inbox_file(project, o)) for o in owners if is_valid_name(o)]):
        for record in jsonl.tail(path, TAIL):
            meta = record.get("meta")
            sender = record.get("from")
            if sender in wanted and isinstance(meta, dict) and meta.get("auto") == "wake":
                _add(found, record, str(sender), f"inbox:{owner}")
    for lines in found.values():
        lines.sort(key=lambda s: (s.ts, s.id), reverse=True)
        del lines[limit:]
    return found


def _latest(named: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The `ROOMS_READ` files of `named` written to most recently (missing ones left out)."""
    stamped = [(key[3], name, path) for name, path in named if (key := cache.identity(path)) is not None]
    stamped.sort(reverse=True)
    return [(name, path) for _, name, path in stamped[:ROOMS_READ]]


def _add(found: dict[str, list[Said]], record: dict[str, Any], speaker: str, where: str) -> None:
    text = record.get("text")
    if isinstance(text, str) and text.strip():
        found[speaker].append(Said(str(record.get("id") or ""), speaker, text, where, str(record.get("ts") or "")))
