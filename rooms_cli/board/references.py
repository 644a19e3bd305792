"""What a task's record may cite: one reference form per record, each checked to exist before it is written.

    form            cites                                             looked up in
    file:<path>     a file inside the project                        the project root (never outside it)
    msg:<id>        a message said in a room (`m-…`)                 the task's room's transcript, then every other room's
    task:<id>       a task (`t-…`)                                   the task's room's board, then every other room's
    inbox:<id>      a message in an inbox (`i-…`)                    every agent's inbox
    group:<id>      a broadcast (`b-…`) or a member's reply to one   every group's log (a reply by its event id, `e-…`)
    lesson:<id>     a lesson an agent learned, not forgotten (`l-…`) every agent's memories

`rooms search` prints each hit's reference in these forms (search/documents.py). The ids are the records'
own, unique across clones (never an inbox's small numbers). Any unique prefix of an id is taken, like git
(the kind letters may be left out, case does not count), and the full id is stored. `msg:` and `task:` look
in the task's own room first, so a prefix that was unique there stays unique whatever other rooms hold; only
what is not there is looked for in the other rooms. Anything else is refused in one sentence listing the forms.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from rooms_cli.core.errors import InvalidInput, NotFound
from rooms_cli.store import files, layout
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

FORMS = ("file:<path in the project>, msg:<chat message id>, task:<task id>, inbox:<inbox message id>, "
         "group:<broadcast or reply id>, lesson:<lesson id>")
_BARE_ID = re.compile(r"(?P<kind>[a-z]{1,2})-[0-9A-Za-z]{4,}")  # an id given without its form: `t-01KV…`
_FORM_OF_ID = {"m": "msg", "t": "task", "i": "inbox", "b": "group", "l": "lesson"}  # what new_id's prefixes cite


def validate_ref(project: Project, room: str, ref: str, what: str = "reference") -> str:
    """The reference `ref` of a task in `room`, normalized (`file:` relative to the project root, an id in
    full); InvalidInput for what is not a reference, NotFound for what it names that is not there."""
    text = (ref or "").strip()
    form, sep, target = text.partition(":")
    target = target.strip()
    lookup = _LOOKUPS.get(form) if sep else None
    if lookup is None or not target:
        raise InvalidInput(f"{what} {ref!r} is not a reference{_hint(text)}: use {FORMS}")
    return f"{form}:{lookup(project, room, target, what)}"


def _hint(text: str) -> str:
    """For a bare id of a kind that is cited (`t-01KV…`), the form that cites it."""
    bare = _BARE_ID.fullmatch(text)
    form = _FORM_OF_ID.get(bare["kind"]) if bare else None
    return f" (an id alone: cite it as {form}:{text})" if form else ""


def _project_file(project: Project, room: str, target: str, what: str) -> str:
    root = Path(project.root).resolve()
    candidate = Path(target)
    full = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if root not in full.parents:
        raise InvalidInput(f"{what} file:{target} is outside the project ({root}); refusing it")
    if not full.exists():
        raise NotFound(f"{what} file:{target} does not exist (paths are relative to {root})")
    return Path(os.path.relpath(full, root)).as_posix()


def _chat_message(project: Project, room: str, target: str, what: str) -> str:
    from rooms_cli.chat.transcript import read_transcript
    from rooms_cli.store.ids import is_valid_name

    others = [name for name in files.names(layout.rooms_dir(project)) if name != room and is_valid_name(name)]
    return _find(target, ([room], others), lambda name: [m.id for m in read_transcript(project, name)],
                 f"{what} message id", f"{what} msg:{target} is not a message in the transcript of room {room!r} "
                 "nor of any other room", lambda name: layout.transcript_file(project, name))


def _task(project: Project, room: str, target: str, what: str) -> str:
    from rooms_cli.board.store import list_board_rooms, list_task_ids

    others = [name for name in list_board_rooms(project) if name != room]
    return _find(target, ([room], others), lambda name: list_task_ids(project, name), f"{what} task id",
                 f"{what} task:{target} is not a task on the board of room {room!r} nor of any other room")


def _inbox_message(project: Project, room: str, target: str, what: str) -> str:
    from rooms_cli.messaging.inbox import inbox_owners, read_inbox

    return _find(target, (inbox_owners(project),), lambda agent: [m.id for m in read_inbox(project, agent)],
                 f"{what} inbox message id", f"{what} inbox:{target} is not a message in any inbox",
                 lambda agent: layout.inbox_file(project, agent))


def _group_record(project: Project, room: str, target: str, what: str) -> str:
    from rooms_cli.groups.log import log_names, read_events
    from rooms_cli.store import schema

    def ids(name: str) -> list[object]:
        """The broadcasts' ids and the replies' event ids of the log (a log renamed keeps them: one record)."""
        return [ev.get("id") if ev.get("ev") == "broadcast" else ev.get("eid") for ev in read_events(project, name)
                if ev.get("ev") in ("broadcast", "reply") and schema.problem("group-event", ev, strict=False) is None]

    return _find(target, (log_names(project),), ids, f"{what} broadcast or reply id",
                 f"{what} group:{target} is not a broadcast or a reply in any group", lambda name: layout.group_log(project, name))


def _lesson(project: Project, room: str, target: str, what: str) -> str:
    from rooms_cli.agents.memories import agents_with_lessons, list_lessons

    return _find(target, (agents_with_lessons(project),), lambda agent: [r.get("id") for r in list_lessons(project, agent)],
                 f"{what} lesson id", f"{what} lesson:{target} is not a lesson of any agent (a forgotten one no longer is)",
                 lambda agent: layout.memories_file(project, agent))


def _find(target: str, scopes: tuple[list[str], ...], ids_of: Callable[[str], Iterable[object]], what_id: str,
          missing: str, path_of: Callable[[str], str] | None = None) -> str:
    """The full id `target` names among the ids of each log of the first scope that has one matching it
    (a unique prefix, store/ids.py); an id given whole is taken from the first log that holds it, without
    reading the rest. NotFound(`missing`) when no scope has it; an ambiguous prefix is InvalidInput.
    `path_of(log)`: the log's file, read (`ids_of`) only when its bytes may hold the id (`_may_hold`)."""
    from rooms_cli.store.ids import resolve_prefix

    for scope in scopes:
        candidates: list[str] = []
        for log in scope:
            if path_of is not None and not _may_hold(path_of(log), target):
                continue
            held = [rid for rid in ids_of(log) if isinstance(rid, str) and rid]
            if target in held:
                return target
            candidates += held
        try:
            return resolve_prefix(target, candidates, what_id)
        except NotFound:
            continue
    raise NotFound(missing)


def _may_hold(path: str, target: str) -> bool:
    """Whether the log at `path` may hold an id that `target` names: its bytes hold the id's body, in any case.
    One search in C instead of the parse of every record: 100 000 inbox messages in 20 inboxes are parsed in
    about 1.7 s, searched in a few hundredths. An id of other characters (JSON may escape them) is not ruled out."""
    body = target.partition("-")[2] if "-" in target else target
    if not _ID_CHARACTERS.fullmatch(body):
        return True
    try:
        return body.upper().encode() in files.read_bytes(path).upper()
    except (FileNotFoundError, NotADirectoryError):
        return False


_ID_CHARACTERS = re.compile(r"[0-9A-Za-z]+")
_LOOKUPS: dict[str, Callable[[Project, str, str, str], str]] = {
    "file": _project_file, "msg": _chat_message, "task": _task, "inbox": _inbox_message, "group": _group_record,
    "lesson": _lesson,
}
