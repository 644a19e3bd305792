"""Save, rehydrate, drop and halt a room.

- save: `.rooms/chat/<room>/<save-id>.md` (saved.py), one file per save so that saves in two clones
  merge; meant to be read in a pull request and committed.
- join `chat/<room>`: rebuild a live room from the saved copy (same roster and messages). No saved
  copy: a fresh room. The room is live already: switch to it, nothing replaced.
- join `<room>`: switch to a live room; create it when missing; bring back a dropped/halted one.
- drop: save, then stop. halt: stop without saving. Stopping only sets the status: the room's
  files stay, so nothing is destroyed and `join` brings it back.
When rehydrating over a stopped room whose transcript differs from the saved copy, the old
transcript is kept beside it as `transcript.<time>.jsonl`.
"""

from __future__ import annotations

import os

from rooms_cli.chat.budget import budget_for
from rooms_cli.chat.rooms import (
    RoomState,
    create_room,
    load_room,
    room_exists,
    save_room,
    transcript_path,
    update_room,
)
from rooms_cli.chat.saved import SavedTranscript, decode, encode
from rooms_cli.chat.transcript import Message, append_message, in_order, read_transcript
from rooms_cli.core.errors import InvalidData, InvalidInput
from rooms_cli.store import atomic, files, jsonl, layout
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import new_id, validate_name
from rooms_cli.store.locks import locked

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.store.paths import Project


saves_dir = layout.saved_transcripts_dir


def saved_files(project: Project, room: str) -> list[str]:
    """The saved transcripts of `room`: one file per save, in id (time) order."""
    return files.matching(saves_dir(project, room), "s-*.md")


def save(project: Project, room: str) -> dict[str, Any]:
    """Write a saved transcript of `room` (a new file per save); return where and how many messages.

    Each save is its own file `chat/<room>/<save-id>.md`, so two clones that save the same room
    merge in git; the saves this clone made before are removed (nobody edits a save, so removing
    one merges too). Only this clone's: `.rooms/run/saves/<room>.json` (git-ignored) names the saves
    made here. A save of another clone is never removed — two clones each removing it while adding
    a similar file is, to git's rename detection, a rename/delete or rename/rename conflict."""
    state = load_room(project, room)
    messages = read_transcript(project, room)
    speakers = [m.speaker for m in messages if m.kind in ("message", "pass", "flavor", "repeat") and m.speaker not in state.roster
                and m.speaker != "rooms"]
    participants = [f"[[agents/{a}]]" for a in state.roster] + [f"[[people/{p}]]" for p in dict.fromkeys(speakers)]
    doc = SavedTranscript(room=room, saved=now_iso(), roster=list(state.roster), participants=participants, messages=messages)
    from rooms_cli.store.layout import saves_made_here_file

    mine_file = saves_made_here_file(project, room)
    try:
        mine = atomic.read_json(mine_file, default=None)
    except InvalidData:  # this machine's record only: a damaged one removes nothing
        mine = None
    mine = [str(n) for n in mine] if isinstance(mine, list) else []
    older = [p for p in saved_files(project, room) if os.path.basename(p) in mine]
    path = os.path.join(saves_dir(project, room), f"{new_id('s').lower()}.md")
    atomic.write_text(path, encode(doc))
    atomic.write_json(mine_file, [os.path.basename(path)])
    for old in older:
        files.remove(old)
    return {"room": room, "path": project.relative(path), "messages": len(messages), "participants": participants}


def load_saved(project: Project, room: str) -> SavedTranscript | None:
    """The saved transcript of `room`: every save merged (messages by id, in time order; roster and
    participants from the newest save), or None when there is none. Saves made in two clones and
    merged by git give back both clones' messages."""
    docs = []
    for path in saved_files(project, room):
        try:
            # bytes, not read_text: newline translation would turn a message's "\r" into "\n"
            text = files.read_bytes(path).decode("utf-8")
        except FileNotFoundError:
            continue
        except UnicodeDecodeError:
            raise InvalidData(f"{project.relative(path)} is not UTF-8 text") from None
        docs.append((path, decode(text, project.relative(path))))
    if not docs:
        return None
    path, newest = max(docs, key=lambda d: (d[1].saved, os.path.basename(d[0])))
    records = in_order([m.to_json() for _, doc in docs for m in doc.messages])
    return SavedTranscript(room=newest.room, saved=newest.saved, roster=newest.roster, participants=newest.participants,
                           messages=[Message.from_json(r) for r in records], path=project.relative(path))


def parse_target(target: str) -> tuple[str, bool]:
    """`chat/<room>` -> (room, True); `<room>` -> (room, False)."""
    target = target.strip()
    if target.startswith("chat/"):
        return validate_name(target[5:], "room id in chat/<room>"), True
    if "/" in target:
        raise InvalidInput(f"cannot join {target!r}: give a room id, or chat/<room> for a saved transcript")
    return validate_name(target, "room id"), False


def join(project: Project, target: str) -> dict[str, Any]:
    """Switch to a room or rehydrate a saved transcript; the room becomes the current one."""
    from rooms_cli.project.context import DEFAULT_ROOM, read_current_room, write_current_room

    room, from_saved = parse_target(target)
    before = read_current_room(project) or DEFAULT_ROOM
    left_out: list[str] = []
    if from_saved:
        outcome = _rehydrate(project, room, left_out)
    elif not room_exists(project, room):
        create_room(project, room)
        outcome = "created"
    else:
        outcome = "switched" if load_room(project, room).live else "revived"
        if outcome == "revived":
            update_room(project, room, lambda s: setattr(s, "status", "live"))
    write_current_room(project, room)
    state = load_room(project, room)
    saved = load_saved(project, room) if from_saved else None
    return {"room": room, "outcome": outcome, "roster": state.roster, "messages": _count(project, room),
            "left_out": left_out, "from_saved": from_saved, "saved_transcript": saved.path if saved else None,
            "current_before": before}


def _count(project: Project, room: str) -> int:
    return files.count_lines(transcript_path(project, room))


def _rehydrate(project: Project, room: str, left_out: list[str]) -> str:
    from rooms_cli.agents.definitions import agent_ids

    saved = load_saved(project, room)
    exists = room_exists(project, room)
    if exists and load_room(project, room).live:
        return "switched"
    if saved is None:
        if exists:
            update_room(project, room, lambda s: setattr(s, "status", "live"))
            return "revived"
        create_room(project, room)
        return "created"
    known = set(agent_ids(project))
    roster = [a for a in saved.roster if a in known]
    left_out.extend(a for a in saved.roster if a not in known)
    path = transcript_path(project, room)
    with locked(path):
        records = [m.to_json() for m in saved.messages]
        if os.path.exists(path):
            current = jsonl.read(path)
            if current != records:
                keep = os.path.join(os.path.dirname(path), f"transcript.{now_iso().replace(':', '').replace('.', '')}.jsonl".lower())
                files.move_aside(path, keep)
        data = "".join(jsonl.dumps(r) + "\n" for r in records)
        atomic.write_text(path, data)
    total = budget_for(len(roster))
    if exists:
        def revive(state: RoomState) -> None:
            state.status, state.roster, state.muted, state.handoff = "live", roster, [], []
            state.budget_total = state.budget_remaining = total
            state.rehydrated_from = f"chat/{room}"
        update_room(project, room, revive)
    else:
        state = RoomState(id=room, created=now_iso(), roster=roster, budget_total=total, budget_remaining=total,
                          rehydrated_from=f"chat/{room}")
        save_room(project, state)
    return "rehydrated"


def stop(project: Project, room: str, status: str, by: str, *, save_first: bool) -> dict[str, Any]:
    """Drop (save_first) or halt the room: it is no longer live; its files stay."""
    state = load_room(project, room)
    if not state.live:
        return {"room": room, "status": state.status, "saved": None, "changed": False}
    # the line goes in before the save, so the saved copy and the transcript stay identical
    append_message(project, room, by, f"{'dropped' if status == 'dropped' else 'halted'} the room", kind="system",
                   meta={"status": status})
    saved = save(project, room) if save_first else None
    update_room(project, room, lambda s: setattr(s, "status", status))
    return {"room": room, "status": status, "saved": saved, "changed": True}
