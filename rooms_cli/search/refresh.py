"""Keeping the index up to date: before each search, read what each log appended since the last one.

What changed is found without opening every log:

- **the change journal** (`.rooms/run/changes`, store/changes.py): every append rooms makes notes its
  log there, `rooms sync` included; the index keeps its place in it by seal (store/known.seal). A journal
  emptied, replaced or rewritten since (its seal no longer holds) means a full look at every log.
- **folder identities** (store/cache.py): a log created, removed or replaced (a `git pull`, a checkout, a
  rebase: git writes a file anew, which changes its folder) changes its folder. A changed folder is listed
  again; a board's folder whose only change is new tasks rooms made (the journal names them, and every
  other name keeps its inode: `_digest`) has those read, any other change has each of its logs stat'ed. A
  folder written within RACY_S of being looked at is looked at again next time (its mtime may not have
  moved yet).
- **the few logs that are not tasks** (transcripts, inboxes, group logs, memories: one per room, agent or
  group) are stat'ed on every search, so a log appended to by another tool is seen too.

A log whose identity changed is read from its mark (store/ftsindex.py: where the lines read end, and the
CRC-32 of the bytes before it and of its first bytes): when the file still holds the same bytes there, only
the lines after it are read — a git pull that appended lines to a transcript reads those lines, whatever
inode git gave the file — and otherwise (truncated, rewritten, rebased) its documents are dropped and it is
read whole. A task's document is the replay of its whole log, read again whole on any change.

What this does not see: a task log another program changed in place (an editor writing into the file;
rooms, `rooms sync` and git never do), which leaves no journal note and changes no folder. A change to
its board's folder that rooms did not make, an emptied journal, or a hit from that log (checked against
its log before it is shown, search/engine.py) reads it again.
"""

from __future__ import annotations

import os
import re
import time
import zlib
from collections.abc import Callable

from rooms_cli.search import documents
from rooms_cli.store import cache, changes, files, ftsindex, known, layout
from rooms_cli.store.ftsindex import Index, LogState
from rooms_cli.store.ids import is_valid_name
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

Progress = Callable[[int, int], None]  # (bytes read so far, bytes to read): a first build shows it

LINE_FOLDERS = (("messages", "inbox"), ("groups", "groups"), ("memories", "memories"))  # family, folder key
SUFFIX = ".jsonl"


def log_path(project: Project, key: str) -> str:
    """The log a key of the index names: `chat/<room>`, `tasks/<room>/<task id>`, `messages/<agent>`,
    `groups/<name>`, `memories/<agent>`."""
    family, _, scope = key.partition("/")
    if family == "tasks":
        room, _, task = scope.partition("/")
        return layout.task_file(project, room, task)
    return _FILES[family](project, scope)


_FILES: dict[str, Callable[[Project, str], str]] = {
    "chat": layout.transcript_file, "messages": layout.inbox_file, "groups": layout.group_log, "memories": layout.memories_file,
}
_FOLDERS: dict[str, Callable[[Project], str]] = {"inbox": layout.inbox_dir, "groups": layout.groups_dir, "memories": layout.memories_dir}
_FAMILY_IN = {folder: family for family, folder in LINE_FOLDERS}
_UNKNOWN: list[int] = []  # a folder the index holds no row for (None: a row, look again)


def key_of(noted: str) -> str | None:
    """The index's key for a path the journal noted (relative to `.rooms/`), or None for a log not searched."""
    parts = noted.split("/")
    if not parts[-1].endswith(SUFFIX):
        return None
    name = parts[-1][: -len(SUFFIX)]
    if len(parts) == 2 and parts[0] in _FOLDERS and is_valid_name(name):
        return f"{_FAMILY_IN[parts[0]]}/{name}"
    if len(parts) == 3 and parts[0] == "rooms" and parts[2] == "transcript.jsonl" and is_valid_name(parts[1]):
        return f"chat/{parts[1]}"
    if len(parts) == 5 and parts[0] == "rooms" and parts[2:4] == ["board", "tasks"] and is_valid_name(parts[1]) and _TASK_LOG.fullmatch(parts[4]):
        return f"tasks/{parts[1]}/{task_id(parts[4])}"
    return None


_TASK_LOG = re.compile(r"t-[0-9a-z]{1,64}\.jsonl")  # board/store.py's names (lowercased ids)


def task_id(name: str) -> str:
    """`t-01abc….jsonl` -> `t-01ABC…` (board/store.py names task logs so)."""
    stem = name[: -len(SUFFIX)]
    return stem[:2] + stem[2:].upper()


class Refresh:
    """One pass over the project's logs that brings `index` up to date (`run`)."""

    def __init__(self, index: Index, project: Project, progress: Progress | None = None) -> None:
        self.index, self.project, self.progress = index, project, progress
        self.now_ns = time.time_ns()
        self.folders = index.folders()
        self.pending: dict[str, tuple[LogState, str, int]] = {}  # logs to read (their size), by key
        self.gone: dict[str, LogState] = {}  # logs no longer there, by key

    def run(self, reread: tuple[str, ...] = ()) -> None:
        """Look for what changed and read it; the logs keyed in `reread` are read whole whatever they look like."""
        seal = self.index.meta("journal")
        noted, journal = changes.noted_since(self.project.dir, seal)
        full = self.index.fresh or noted is None
        keys = {key for name in noted or () if (key := key_of(name))}
        rooms = self._rooms(full)
        self._line_logs(rooms, full)
        for room in rooms:
            self._tasks(room, full, keys)
        for key, state in self.index.logs_named(list(reread)).items():
            state.mark = None
            self.pending[key] = (state, log_path(self.project, key), 0)
        for state in self.gone.values():
            if state.id:
                self.index.drop_log(state)
        self._read()
        if journal != seal:
            self.index.set_meta("journal", journal)

    # -- looking -----------------------------------------------------------------------------------

    def _settled(self, identity: list[int] | None) -> list[int] | None:
        """`identity` when it was written long enough ago to change with its next write, else None (look
        again next time)."""
        if identity is None or self.now_ns - identity[3] < cache.RACY_S * 1e9:
            return None
        return identity

    def _folder_changed(self, key: str, path: str, full: bool, listing: Callable[[], Any] | None = None) -> bool:
        """Whether the folder must be listed again; then its identity now is noted for the next search,
        with what `listing()` (run only then) keeps of it."""
        identity = cache.identity(path)
        kept = self.folders.get(key, (_UNKNOWN, None))
        if not full and identity is not None and identity == kept[0]:
            return False
        now = (self._settled(identity), listing() if listing is not None else None)
        if now != kept:  # a folder that is missing, or being written to, is looked at again without a write each time
            self.index.set_folder(key, *now)
        return True

    def _rooms(self, full: bool) -> list[str]:
        """Every room (a folder under rooms/); a room gone takes its logs out of the index."""
        known_rooms = sorted(key[len("tasks/"):] for key in self.folders if key.startswith("tasks/"))
        if not self._folder_changed("rooms", layout.rooms_dir(self.project), full):
            return known_rooms
        try:
            listed = files.entries(layout.rooms_dir(self.project))
        except (FileNotFoundError, NotADirectoryError):
            listed = []
        rooms = [entry.name for entry in listed if entry.is_dir() and is_valid_name(entry.name)]
        for room in set(known_rooms) - set(rooms):
            self.index.drop_folder(f"tasks/{room}")
            self.gone.update(self.index.logs(("chat", "tasks"), scope=room))
        return sorted(rooms)

    def _line_logs(self, rooms: list[str], full: bool) -> None:
        """Each transcript, inbox, group log and memories log: stat'ed, and queued when it changed."""
        stored = self.index.logs(("chat", "messages", "groups", "memories"))
        present = {f"chat/{room}" for room in rooms}
        for family, folder in LINE_FOLDERS:
            if self._folder_changed(folder, _FOLDERS[folder](self.project), full):
                names = [name[: -len(SUFFIX)] for name in files.names(_FOLDERS[folder](self.project))
                         if name.endswith(SUFFIX) and is_valid_name(name[: -len(SUFFIX)])]
                present.update(f"{family}/{name}" for name in names)
            else:
                present.update(key for key, state in stored.items() if state.family == family)
        for key in sorted(present):
            self._consider(key, stored.get(key), cache.identity(log_path(self.project, key)))
        self.gone.update((key, state) for key, state in stored.items() if key not in present)

    def _tasks(self, room: str, full: bool, noted: set[str]) -> None:
        """The room's task logs: those the journal noted while its tasks folder keeps its identity; when it
        changed, still only those if all that changed is new tasks rooms made (the folder's other names and
        inodes as they were: `_digest`), else every one of them, stat'ed."""
        folder = layout.tasks_dir(self.project, room)
        prefix = f"tasks/{room}/"
        named = sorted(key for key in noted if key.startswith(prefix))
        stored = self.index.logs_named(named) if named else {}
        entries: list[tuple[str, int]] = []

        def listing() -> list[int]:
            try:
                entries.extend((entry.name, entry.inode()) for entry in files.entries(folder) if _TASK_LOG.fullmatch(entry.name))
            except (FileNotFoundError, NotADirectoryError):
                pass
            return _digest(entries)

        kept_identity, kept_listing = self.folders.get(prefix[:-1], (_UNKNOWN, None))
        if self._folder_changed(prefix[:-1], folder, full, listing):
            new = {log_name(key) for key in named if key not in stored}
            # explained: the folder is as it was but for new tasks rooms made (or, looked at again because it
            # had just changed or is missing, it is as it was then)
            explained = (new or kept_identity is None) and _digest([e for e in entries if e[0] not in new]) == kept_listing
            if full or not explained:
                self._every_task(room, [name for name, _ in entries])
                return
        for key in named:
            self._consider(key, stored.get(key), cache.identity(log_path(self.project, key)))

    def _every_task(self, room: str, names: list[str]) -> None:
        """Stat every task log of the room's folder (`names`): the changed ones are read, the gone dropped."""
        prefix = f"tasks/{room}/"
        folder = layout.tasks_dir(self.project, room)
        kept = {} if self.index.fresh else self.index.identities("tasks", room)
        changed = []
        for name, identity in zip(names, _identities(folder, names), strict=True):
            key = prefix + task_id(name)
            if identity is None or tuple(identity) != kept.pop(key, None):
                changed.append((key, identity, os.path.join(folder, name)))  # the folder checked once, not each log's path
        stored = self.index.logs_named([key for key, _, _ in changed] + list(kept)) if not self.index.fresh else {}
        for key, identity, path in changed:
            self._consider(key, stored.get(key), identity, path)
        self.gone.update((key, stored[key]) for key in kept if key in stored)

    def _consider(self, key: str, state: LogState | None, identity: list[int] | None, path: str | None = None) -> None:
        """Queue the log (at `path`, else where its key says) when its identity is not the one it was read with."""
        if identity is None:
            if state is not None:
                self.gone[key] = state
        elif state is None or state.identity != identity:
            self.pending[key] = (state or _new_state(key), path or log_path(self.project, key), identity[2])

    # -- reading -----------------------------------------------------------------------------------

    def _read(self) -> None:
        todo = list(self.pending.values())
        total = sum(size for _, _, size in todo)
        done = 0
        for count, (state, path, _) in enumerate(todo, 1):
            done += self._read_log(state, path)
            if self.progress is not None and (count % 256 == 0 or count == len(todo)):
                self.progress(min(done, total), total)

    def _read_log(self, state: LogState, path: str) -> int:
        """Index what the log holds that the index lacks; the bytes read."""
        whole = state.family in documents.WHOLE
        read = ftsindex.read_log(path, None if whole else state.mark)
        if read is None:  # gone since it was stat'ed
            if state.id:
                self.index.drop_log(state)
            return 0
        if read.start == 0 and state.id:
            self.index.clear_log(state)
        state.identity, state.mark = self._settled(read.identity), read.mark
        self.index.put_log(state)
        if whole:
            doc = documents.task_doc(state.scope, state.key.rpartition("/")[2], read.data)
            self.index.add_docs(state, [doc] if doc is not None else [])
        else:
            parsed = documents.from_lines(state.family, state.scope, read.data, read.start)
            self.index.add_docs(state, parsed.docs)
            if parsed.gone:
                self.index.remove_docs(state, parsed.gone)
        return len(read.data)


def _digest(entries: list[tuple[str, int]]) -> list[int]:
    """What a folder's listing comes to, whatever its order: [how many, the sum and the xor of the CRC-32
    of each `name:inode`]. A file git wrote anew has a new inode (or is a new name), so the digest of a
    folder where only rooms added files, those left out, is the digest it had."""
    total = xor = 0
    for name, inode in entries:
        crc = zlib.crc32(f"{name}:{inode}".encode())
        total += crc
        xor ^= crc
    return [len(entries), total, xor]


def log_name(key: str) -> str:
    """The file name of a task log's key (`tasks/<room>/t-01ABC` -> `t-01abc.jsonl`)."""
    return key.rpartition("/")[2].lower() + SUFFIX


def _identities(folder: str, names: list[str]) -> list[list[int] | None]:
    """The identity of each named file of `folder` (None for one gone since it was listed)."""
    try:
        return [known.identity_of(stat) for stat in files.stat_each(folder, names)]
    except OSError:
        return [cache.identity(os.path.join(folder, name)) for name in names]


def _new_state(key: str) -> LogState:
    family, _, scope = key.partition("/")
    return LogState(key, family, scope.partition("/")[0])


def refresh(index: Index, project: Project, progress: Progress | None = None, reread: tuple[str, ...] = ()) -> None:
    """Bring `index` up to date with the project's logs (module docstring); `reread`: keys of logs to read
    whole however they look (a hit that did not match its log)."""
    Refresh(index, project, progress).run(reread)
