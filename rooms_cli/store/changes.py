"""A local journal of the logs rooms appended to: `.rooms/run/changes`, one path (relative to
`.rooms/`) a line.

It lets a polling `rooms watch` read one small file per tick instead of stat'ing every log (a board
of 10 000 tasks is 10 000 files). It is only a hint, kept out of git with the rest of run/: a write
it misses (git pull, an editor, a failed note) is found by the watcher's periodic full look. Each note
is one `O_APPEND` write of a short line, so concurrent writers never mix lines; past MAX_BYTES a
writer empties it, which a reader sees as a reset (and then looks at everything once).
"""

from __future__ import annotations

import os

from rooms_cli.store import files, known
from rooms_cli.store.names import inside_rooms

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.store.files import StrPath

MAX_BYTES = 1 << 20
# what this process wrote (paths relative to `.rooms/`): when printing the result fails afterwards, the
# error says the write happened (cli/guard.py) — a retry would duplicate a message or a claim
WRITTEN: dict[str, None] = {}  # ordered, each file once, at most 100 (a long-running server writes on)


def journal_path(rooms_dir: StrPath) -> str:
    return os.path.join(rooms_dir, "run", "changes")


_NOTES: dict[str, tuple[str, str] | None] = {}  # path -> (its journal, its path inside .rooms/), per process


def _where(path: str) -> tuple[str, str] | None:
    """(the journal, the path relative to `.rooms/`) a change to `path` is noted in; None when not followed."""
    found = inside_rooms(path)
    if found is None:
        return None
    rooms_dir, inside = found
    if inside[:1] == ["run"]:
        return None  # local state (caches, markers) is not followed
    return journal_path(rooms_dir), "/".join(inside)


def note(path: StrPath) -> None:
    """Record that the log at `path` (somewhere under a `.rooms/` directory) changed. Never raises."""
    where = known.memo(_NOTES, os.fspath(path), _where)
    if where is None:
        return
    journal, rel = where
    if len(WRITTEN) < 100:
        WRITTEN[rel] = None
    line = (rel + "\n").encode("utf-8", "surrogateescape")
    try:
        fd = files.making_folder(journal, lambda: os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))
        try:
            os.write(fd, line)
            if os.fstat(fd).st_size > MAX_BYTES:
                os.ftruncate(fd, 0)
        finally:
            os.close(fd)
    except OSError:
        pass  # a read-only or full disk: the watcher's full look still finds the change


class JournalReader:
    """Reads the journal from where it left off: the set of paths noted since, or None when that
    cannot be known (first read, the journal was emptied or replaced): then look at everything."""

    def __init__(self, rooms_dir: StrPath):
        self.rooms_dir = os.fspath(rooms_dir)
        self.path = journal_path(rooms_dir)
        self.identity: tuple[int, int] | None = None
        self.offset = 0

    def changed(self) -> set[str] | None:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            known = self.identity is None and self.offset == 0
            self.identity, self.offset = None, 0
            return set() if known else None
        try:
            st = os.fstat(fd)
            identity = (st.st_dev, st.st_ino)
            if identity != self.identity or st.st_size < self.offset:
                self.identity, self.offset = identity, st.st_size
                return None
            if st.st_size == self.offset:
                return set()
            os.lseek(fd, self.offset, os.SEEK_SET)
            data = os.read(fd, st.st_size - self.offset)
        finally:
            os.close(fd)
        end = data.rfind(b"\n") + 1  # a line still being written is read next time
        self.offset += end
        names = data[:end].decode("utf-8", "surrogateescape").splitlines()
        return {os.path.normpath(os.path.join(self.rooms_dir, name)) for name in names if name}


NO_JOURNAL = [None, 0, 0]  # the seal of a journal that does not exist


def noted_since(rooms_dir: StrPath, seal: list[Any] | None) -> tuple[set[str] | None, list[Any]]:
    """(the paths, relative to `.rooms/`, noted after the point `seal` names (store/known.seal), or None
    when that cannot be known: no seal, or the journal was emptied, replaced or rewritten since; the seal
    at the end of the whole lines now): a reader that keeps its place between processes (`rooms search`).
    A line still being written is read next time."""
    path = journal_path(rooms_dir)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return (set() if seal == NO_JOURNAL else None), NO_JOURNAL
    try:
        size = os.fstat(fd).st_size
        if seal == NO_JOURNAL:
            start = 0  # made since: every line in it is new
        elif isinstance(seal, list) and len(seal) == 3 and isinstance(seal[1], int) and known.seal_fd(fd, seal[1]) == seal:
            start = seal[1]
        else:
            data = os.pread(fd, size, 0)
            return None, known.seal_fd(fd, data.rfind(b"\n") + 1)
        data = os.pread(fd, size - start, start)
        end = data.rfind(b"\n") + 1
        names = data[:end].decode("utf-8", "surrogateescape").splitlines()
        return {name for name in names if name}, known.seal_fd(fd, start + end)
    finally:
        os.close(fd)
