"""Which files a watch follows: the sources a Selection names, found again on every wake-up.

    transcripts   .rooms/rooms/<room>/transcript.jsonl        (family chat,  scope room)
    boards        .rooms/rooms/<room>/board/**/*.jsonl        (family task,  scope room)
    groups        .rooms/groups/<name>.jsonl                  (family group, scope group)
    inboxes       .rooms/inbox/<agent>.jsonl                  (family inbox, scope agent)
    spawns        .rooms/spawns/<id>.json, replaced whole     (family spawn, scope spawn)
    reservations  .rooms/reservations/log.jsonl              (family files, scope files; with --all)

Directory listings are cached by mtime, but a listing younger than RACY_S is always re-read: a file
created within the same timestamp tick as the last listing would otherwise stay unseen (git's
"racy clean" problem).
"""

from __future__ import annotations

import os
import time
from functools import cached_property

from rooms_cli.core.errors import NotFound
from rooms_cli.core.records import dataclass  # dataclasses without inspect (records.py)
from rooms_cli.store import files, layout
from rooms_cli.store.follow import RACY_S
from rooms_cli.store.ids import is_valid_name, validate_name
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Iterable


@dataclass(frozen=True)
class Source:
    """One followed file."""

    family: str  # chat | task | group | inbox | spawn | files
    path: str
    scope: str  # room | group | agent | spawn: the key the events carry
    name: str
    snapshot: bool = False  # a JSON document replaced whole (spawn records), not an append-only log

    @property
    def id_field(self) -> str | None:
        """The field unique to each record of this log (group and board events share or lack ids)."""
        return "id" if self.family in ("chat", "inbox") else None

    @cached_property
    def key(self) -> str:
        """The path as a normalized string: how notifications name the file too."""
        return os.path.normpath(self.path)


@dataclass(frozen=True)
class Selection:
    """What to follow. `all` also picks up rooms, groups, inboxes and spawns created while watching."""

    rooms: tuple[str, ...] = ()  # transcripts of these rooms
    boards: tuple[str, ...] = ()  # boards of these rooms
    inboxes: tuple[str, ...] = ()
    groups: bool = False
    all: bool = False

    @classmethod
    def from_flags(
        cls, *, rooms: Iterable[str] = (), all: bool = False, inboxes: Iterable[str] = (), board: bool = False,
        groups: bool = False,
        current_room: str = "default",
    ) -> Selection:
        """The command-line rules: no source flag at all means the current room's transcript;
        `--board` follows the boards of the `--room`s given (else of the current room)."""
        rooms = tuple(dict.fromkeys(validate_name(r, "room id") for r in rooms or ()))
        inboxes = tuple(dict.fromkeys(validate_name(a, "agent id") for a in inboxes or ()))
        transcripts = rooms
        if not (rooms or all or inboxes or board or groups):
            transcripts = (current_room,)
        boards = (rooms or (current_room,)) if board else ()
        return cls(rooms=transcripts, boards=boards, inboxes=inboxes, groups=groups, all=all)

    def describe(self) -> str:
        """What is followed, in a few words (`#api, the board of #api, bob's inbox`)."""
        if self.all:
            return "every room, board, group, inbox, spawn and file reservation"
        parts = [f"#{r}" for r in self.rooms] + [f"the board of #{r}" for r in self.boards]
        parts += ["every group"] if self.groups else []
        parts += [f"{a}'s inbox" for a in self.inboxes]
        return ", ".join(parts)

    def check(self, project: Project) -> None:
        """Refuse a named room that does not exist (a typo would otherwise watch nothing forever)."""
        for room in dict.fromkeys(self.rooms + self.boards):
            if not layout.room_exists(project, room):
                raise NotFound(f"no room {room!r}; see `rooms room list`, or watch with --all to pick up new rooms")


class Discovery:
    """Lists the sources of a selection; cheap to call on every wake-up."""

    def __init__(self, project: Project, selection: Selection) -> None:
        self.project = project
        self.selection = selection
        self._listings: dict[str, tuple[int, list[tuple[str, bool]]]] = {}
        self._last: tuple[list[tuple[str, int]], list[Source]] | None = None
        self._visited: list[tuple[str, int]] = []  # the directories (and mtimes) the last answer came from

    def sources(self) -> list[Source]:
        """Every source now; the last answer again when no directory it came from changed."""
        if self._last and all(_mtime(d) == m and time.time_ns() - m > RACY_S * 1e9 for d, m in self._last[0]):
            return self._last[1]
        self._visited = []
        found = self._find()
        self._last = (self._visited, found)
        return found

    def _find(self) -> list[Source]:
        sel, project = self.selection, self.project
        found: dict[str, Source] = {}

        def add(source: Source) -> None:
            found.setdefault(source.key, source)

        rooms = list(sel.rooms)
        boards = list(sel.boards)
        if sel.all:
            every = [name for name, is_dir in self._entries(layout.rooms_dir(project)) if is_dir and is_valid_name(name)]
            rooms += every
            boards += every
        for room in dict.fromkeys(rooms):
            add(Source("chat", layout.transcript_file(project, room), "room", room))
        for room in dict.fromkeys(boards):
            for path in self._walk(layout.board_dir(project, room)):
                if path.endswith(".jsonl"):
                    add(Source("task", path, "room", room))
        if sel.groups or sel.all:
            for name, path in self._files(layout.groups_dir(project), ".jsonl"):
                add(Source("group", path, "group", name))
        inboxes = list(sel.inboxes)
        if sel.all:
            inboxes += [name for name, _ in self._files(layout.inbox_dir(project), ".jsonl")]
        for agent in dict.fromkeys(inboxes):
            add(Source("inbox", layout.inbox_file(project, agent), "agent", agent))
        if sel.all:
            for name, path in self._files(layout.spawns_dir(project), ".json"):
                add(Source("spawn", path, "spawn", name, snapshot=True))
            add(Source("files", layout.reservations_log(project), "files", "reservations"))
        return list(found.values())

    def _files(self, directory: str, suffix: str) -> list[tuple[str, str]]:
        out = []
        for name, is_dir in self._entries(directory):
            stem = name[: -len(suffix)]
            if not is_dir and name.endswith(suffix) and is_valid_name(stem):
                out.append((stem, os.path.join(directory, name)))
        return out

    def _walk(self, directory: str) -> list[str]:
        out = []
        for name, is_dir in self._entries(directory):
            if name.startswith("."):
                continue
            if is_dir:
                out += self._walk(os.path.join(directory, name))
            else:
                out.append(os.path.join(directory, name))
        return out

    def _entries(self, directory: str) -> list[tuple[str, bool]]:
        mtime = _mtime(directory)
        self._visited.append((directory, mtime))
        if mtime < 0:
            self._listings.pop(directory, None)
            return []
        cached = self._listings.get(directory)
        if cached and cached[0] == mtime and time.time_ns() - mtime > RACY_S * 1e9:
            return cached[1]
        try:
            entries = sorted((e.name, e.is_dir()) for e in files.entries(directory) if not e.name.endswith((".lock", ".tmp")))
        except OSError:
            return []
        self._listings[directory] = (mtime, entries)
        return entries


def _mtime(directory: str) -> int:
    """The directory's mtime in ns, or -1 when it does not exist (yet)."""
    try:
        return os.stat(directory).st_mtime_ns
    except OSError:
        return -1
