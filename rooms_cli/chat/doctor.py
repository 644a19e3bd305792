"""Chat's checks for `rooms doctor`: what merging two clones' rooms did that a person should know.

Room state, transcripts, sessions and saves merge on their own (see rooms.py, transcript.py,
sessions.py, lifecycle.py); these findings name what merged in a way nobody chose, with the fix:
a room created in two clones (one room, both rosters), and an agent kicked in one clone that spoke
in the room in another (its words stay in the transcript; its session may hold those turns).
And every room's state (its `state.jsonl` events) replays, each field of the type
`store/schema.py` says (a list of mappings for `queued`, a budget from 0…).
"""

from __future__ import annotations

import os

from rooms_cli.chat.rooms import list_room_states, state_log_path, transcript_path
from rooms_cli.chat.transcript import read_transcript
from rooms_cli.core.errors import RoomsError
from rooms_cli.core.text import count
from rooms_cli.store import jsonl

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project

SPOKEN = ("message", "pass")


def check(project: Project, config: Config) -> list[Any]:
    from rooms_cli.core.findings import Finding

    findings = _schema_findings(project)
    for state in list_room_states(project, quiet=True):
        room = state.id
        log = state_log_path(project, room)
        created = [e for e in jsonl.read(log) if e.get("op") == "created"]
        if len(created) > 1:
            findings.append(Finding(
                "warning", "room-merge", f"room {room!r} was created in {len(created)} clones; it is one room with both rosters",
                f"nothing to do if one room was meant; else kick who should not be there (rooms room kick AGENT --room {room})",
                project.relative(log)))
        try:
            messages = read_transcript(project, room)
        except RoomsError:
            continue  # a broken transcript: check_files names it
        last_kick: dict[str, str] = {}
        spoke_after: dict[str, list[str]] = {}
        for m in messages:
            agent = (m.meta or {}).get("agent")
            if m.kind == "kick" and isinstance(agent, str):
                last_kick[agent] = m.ts
                spoke_after.pop(agent, None)
            elif m.kind == "join" and isinstance(agent, str):
                last_kick.pop(agent, None)
                spoke_after.pop(agent, None)
            elif m.kind in SPOKEN and m.speaker in last_kick:
                spoke_after.setdefault(m.speaker, []).append(m.id)
        for agent, ids in spoke_after.items():
            if agent in state.roster:
                continue
            findings.append(Finding(
                "warning", "room-merge",
                f"{agent} was kicked from room {room!r} in one clone but spoke there in another ({count(len(ids), 'message')}, "
                f"first {ids[0]}); its words stay in the transcript",
                f"to keep it out there is nothing to do; to take it back: rooms room invite {agent} --room {room}",
                project.relative(transcript_path(project, room))))
    return findings


def _schema_findings(project: Project) -> list[Any]:
    """Each line of every room's logs against store/schema.py — transcript messages (a kind no reader
    knows, `text` that is not text, one id on two different messages), state events (an unknown op,
    `set` of an unknown field, a negative budget) and session turns — and rooms whose state cannot be
    replayed (the sentence names file and field)."""
    from rooms_cli.chat.rooms import load_room, room_ids
    from rooms_cli.core.findings import typed_findings, unreadable_findings
    from rooms_cli.store import layout

    rooms = room_ids(project)
    findings = []
    for room in rooms:
        findings += typed_findings(project, "transcript", "transcript", [transcript_path(project, room)], key="id")
        findings += typed_findings(project, "room", "room-event", [state_log_path(project, room)], key="eid")
        sessions = os.path.join(layout.room_dir(project, room), "sessions")
        findings += typed_findings(project, "session", "session",
                                   [os.path.join(sessions, f"{a}.jsonl") for a in layout.record_names(project, sessions, ".jsonl", "agent id")],
                                   key="eid")
    named = {f.file for f in findings if f.severity == "error"}
    return findings + [f for f in unreadable_findings(
        "room", rooms, lambda room: load_room(project, room),
        lambda room, err: f"room {room}: {err.message}",
        lambda rel: f"fix the field named in {rel} (or restore it from git); commands on other rooms are unaffected")
        if f.file not in named]
