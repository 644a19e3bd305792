"""The full-text index behind `rooms search`: `.rooms/run/search/index.sqlite`, an SQLite FTS5 database
(the standard library's sqlite3, no other dependency), this machine's own and out of git (run/).

**Derived, never the source of truth.** Every document in it was read from a log under `.rooms/`;
deleting the file loses nothing (the next search builds it again), and what a search shows of a hit is
checked against its log first (search/engine.py). This module stores and queries; which record is a
document, and which log changed since the last search, is the search part's (search/refresh.py).

**Checked before use, never trusted.** Nothing in `.rooms/` executes, and an SQLite file is data only
once its schema is known: before any statement touches a table, `trusted_schema` is off and the file
must hold exactly the tables this version makes (its `sqlite_master`, compared with a fresh in-memory
copy of the schema: no trigger, no view, nothing else), its `application_id` and `user_version`, the
FTS5 configuration made here, and the inode the file was built in (a file copied or planted there has
another). A file that fails any of it, that is not a database, or that SQLite finds damaged while
reading it, is `Damaged`: the caller builds a fresh one. No SQLite error text reaches a user.

**Writes.** A writer holds the index's lock (store/locks.py) for its whole read-check-write, so two
searches never index the same lines twice; reads take no lock of ours (SQLite's own locks keep a reader
from a half-written transaction). A new index is built in a temporary file beside it, then renamed over
it (the rename keeps the inode recorded in it); a stale rollback journal of the replaced file is removed
first. Updates are one transaction, without fsync: a crash leaves the last committed state or, at worst,
a damaged file, which is rebuilt. On a read-only tree (the lock or the file cannot be made) the index
lives in memory for the one search, built from the logs.

**FTS5 missing.** A Python whose SQLite was built without FTS5 gets one sentence (`Unavailable`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rooms_cli.core.errors import LockBusy, RoomsError
from rooms_cli.core.records import dataclass
from rooms_cli.store import files, known, layout, locks
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

VERSION = 2  # 2: refs in the board's forms (task:, inbox:, group:, lesson:); an index of 1 is built anew
APPLICATION_ID = 0x524F4F4D  # "ROOM": the file says it is ours before anything else is read
TOKENIZER = "porter unicode61 remove_diacritics 2"  # words folded in case and accents, English stems
TITLE_WEIGHT = 4.0  # bm25 weight of a match in a title (a task's) against one in a body
SNIPPET_TOKENS = 16
MARK_START, MARK_END = "\ue000", "\ue001"  # private-use characters around each match in a snippet
BUSY_MS = 10_000  # how long SQLite waits for another process's transaction to end
BATCH = 5000  # rows a fresh index writes at once

_SCHEMA = (
    "CREATE TABLE meta(name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE folders(key TEXT PRIMARY KEY, identity TEXT, listing TEXT)",
    "CREATE TABLE logs(id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, family TEXT NOT NULL, scope TEXT NOT NULL,"
    " dev INTEGER, ino INTEGER, size INTEGER, mtime INTEGER, mark_end INTEGER, mark_tail INTEGER, mark_head INTEGER)",
    "CREATE INDEX logs_scope ON logs(family, scope)",
    "CREATE TABLE docs(id INTEGER PRIMARY KEY, log INTEGER NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL,"
    " rid TEXT NOT NULL, ref TEXT NOT NULL, who TEXT NOT NULL, ts TEXT NOT NULL, room TEXT NOT NULL,"
    " lane TEXT NOT NULL, place TEXT NOT NULL, status TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL,"
    " at INTEGER NOT NULL, length INTEGER NOT NULL)",
    "CREATE UNIQUE INDEX docs_key ON docs(log, key)",
    "CREATE TABLE gone(log INTEGER NOT NULL, key TEXT NOT NULL, PRIMARY KEY (log, key)) WITHOUT ROWID",
    f"CREATE VIRTUAL TABLE text_index USING fts5(title, body, content='docs', content_rowid='id', tokenize='{TOKENIZER}')",
)
_DOC_FIELDS = ("key", "kind", "rid", "ref", "who", "ts", "room", "lane", "place", "status", "title", "body", "at", "length")


class Unavailable(RoomsError):
    """This Python's SQLite has no FTS5: `rooms search` cannot run here (exit 1)."""

    code = "search_unavailable"


class Damaged(Exception):
    """The index file cannot be used (not a database, damaged, foreign, another version): build it anew."""


@dataclass
class Doc:
    """One searchable document: `key` is unique in its log; `at`/`length` locate its line (0/size: the
    whole log); room, lane, place and status say where it lives, as its kind reads them."""

    key: str
    kind: str
    rid: str
    ref: str
    who: str
    ts: str
    title: str
    body: str
    room: str = ""
    lane: str = ""
    place: str = ""
    status: str = ""
    at: int = 0
    length: int = 0


@dataclass
class LogState:
    """What the index knows of one log: its identity when read (store/cache.py; None: not settled then,
    look again) and its mark (`mark`: where the lines read end, and the bytes before it)."""

    key: str
    family: str
    scope: str
    identity: list[int] | None = None
    mark: list[int] | None = None
    id: int = 0  # its row, once stored


@dataclass
class Found:
    """A document the query matched: the log it came from, the document, its snippet (matches between
    MARK_START and MARK_END)."""

    log: str
    doc: Doc
    snippet: str


@dataclass
class LogRead:
    """The whole lines of a log read from `start` (0: from its beginning), its identity before the read,
    and its mark at the end of those lines."""

    identity: list[int]
    start: int
    data: bytes
    mark: list[int]


# -- the logs: what was appended since a mark -----------------------------------------------------------

def _mark_fd(fd: int, end: int) -> list[int]:
    """[end, CRC-32 of the SEAL_BYTES before it, CRC-32 of the first SEAL_BYTES]: the content a later read
    must find again to take the log as only appended to. No inode: a log git wrote anew with the same
    lines plus more (a pull, a union merge) reads on from where it was."""
    tail = os.pread(fd, min(end, known.SEAL_BYTES), max(end - known.SEAL_BYTES, 0))
    head = os.pread(fd, min(end, known.SEAL_BYTES), 0)
    return [end, zlib.crc32(tail), zlib.crc32(head)]


def read_log(path: str, after: list[int] | None = None) -> LogRead | None:
    """The whole lines of the log at `path` after the end `after` marks, when the file still holds the
    same bytes up to there; else (or with no mark) every whole line from its start. A line still being
    written is left for the next read. None when the file is missing or cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        stat = os.fstat(fd)
        start = 0
        if after is not None and len(after) == 3 and 0 < after[0] <= stat.st_size and _mark_fd(fd, after[0]) == after:
            start = after[0]
        data = _read_all(fd, start, stat.st_size)
        data = data[: data.rfind(b"\n") + 1]
        return LogRead(known.identity_of(stat), start, data, _mark_fd(fd, start + len(data)))
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_all(fd: int, start: int, size: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.pread(fd, max(size - start, 0) + 1 if not chunks else 1 << 20, start)
        if not chunk:
            break
        chunks.append(chunk)
        start += len(chunk)
    return b"".join(chunks)


def read_span(path: str, at: int, length: int) -> bytes | None:
    """`length` bytes of the file at `path` from `at` (a document's line); None when it cannot be read."""
    try:
        return files.read_from(path, at, length)
    except OSError:
        return None


# -- the index file ---------------------------------------------------------------------------------------

_EXPECTED: list[tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]] = []  # the schema as SQLite writes it, once per process


def _expected() -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """(the `sqlite_master` rows, the FTS5 configuration rows) of the schema this version makes;
    Unavailable when this SQLite has no FTS5."""
    if not _EXPECTED:
        db = sqlite3.connect(":memory:")
        try:
            for statement in _SCHEMA:
                db.execute(statement)
            _EXPECTED.append((_master(db), _config(db)))
        except sqlite3.OperationalError as exc:
            if "fts5" not in str(exc):
                raise
            raise Unavailable(f"`rooms search` needs SQLite's FTS5, which this Python's sqlite3 (SQLite {sqlite3.sqlite_version}) "
                              "lacks; run rooms with a Python whose SQLite has it (python.org's and most distributions' do)") from None
        finally:
            db.close()
    return _EXPECTED[0]


def _master(db: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return sorted(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall(), key=repr)


def _config(db: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return sorted(db.execute("SELECT k, v FROM text_index_config").fetchall(), key=repr)


def available() -> None:
    """Unavailable (one sentence, exit 1) when this Python's SQLite cannot hold the index."""
    _expected()


@contextmanager
def _sqlite_errors() -> Iterator[None]:
    """Any SQLite failure inside is Damaged: the caller builds the index anew (its text never reaches a user)."""
    try:
        yield
    except sqlite3.Error as exc:
        raise Damaged(str(exc)) from None


def _connect(target: str, *, uri: bool = False) -> sqlite3.Connection:
    db = sqlite3.connect(target, uri=uri, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA trusted_schema = OFF")  # nothing the file's schema names runs with side effects
    db.execute("PRAGMA synchronous = OFF")  # derived data: a crash costs at most a rebuild
    return db


def _open_checked(path: Path) -> sqlite3.Connection | None:
    """The index file at `path` opened, once it proved to be ours; None when there is none or it is not
    ours (not a plain file, not a database, damaged, another version or schema, another file's copy)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    schema, config = _expected()
    try:
        db = _connect(Path(path).absolute().as_uri() + "?mode=rw", uri=True)
    except sqlite3.Error:
        return None
    try:
        ours = (db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
                and db.execute("PRAGMA user_version").fetchone()[0] == VERSION
                and _master(db) == schema and _config(db) == config
                and _meta(db, "file") == [st.st_dev, st.st_ino])
    except sqlite3.Error:
        ours = False
    if not ours:
        db.close()
        return None
    return db


def _meta(db: sqlite3.Connection, name: str) -> Any:
    row = db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
    return None if row is None else json.loads(row[0])


def _create(db: sqlite3.Connection, file: list[int] | None) -> None:
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute(f"PRAGMA user_version = {VERSION}")
    for statement in _SCHEMA:
        db.execute(statement)
    db.execute("INSERT INTO meta VALUES ('file', ?)", (json.dumps(file),))


_LOG_COLUMNS = "id, key, family, scope, dev, ino, size, mtime, mark_end, mark_tail, mark_head"


def _log_state(row: tuple[Any, ...]) -> LogState:
    rowid, key, family, scope, dev, ino, size, mtime, end, tail, head = row
    return LogState(key, family, scope, None if dev is None else [dev, ino, size, mtime],
                    None if end is None else [end, tail, head], rowid)


class Index:
    """An open index: the state of each log it read, its documents, the queries."""

    def __init__(self, db: sqlite3.Connection, fresh: bool) -> None:
        self.db = db
        self.fresh = fresh  # built from nothing in this transaction: every log is read whole, the text index made at the end
        self._next: dict[str, int] = {}  # table -> the next row id this transaction gives
        self._new_logs: list[tuple[Any, ...]] = []  # a fresh index's rows, written BATCH at a time (`_flush`)
        self._new_docs: list[tuple[Any, ...]] = []

    def _new_id(self, table: str) -> int:
        if table not in self._next:
            self._next[table] = int(self.db.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {table}").fetchone()[0])
        self._next[table] += 1
        return self._next[table] - 1

    def _flush(self) -> None:
        """Write what a fresh index holds back (one statement per BATCH rows, not a few per log)."""
        if self._new_logs:
            self.db.executemany(f"INSERT INTO logs ({_LOG_COLUMNS}) VALUES ({_marks(self._new_logs[0])})", self._new_logs)
            self._new_logs.clear()
        if self._new_docs:
            self.db.executemany(f"INSERT INTO docs (id, log, {', '.join(_DOC_FIELDS)}) VALUES ({_marks(self._new_docs[0])})",
                                self._new_docs)
            self._new_docs.clear()

    # -- what the index knows of the logs --------------------------------------------------------

    def meta(self, name: str) -> Any:
        """A value stored with `set_meta` (JSON), or None."""
        with _sqlite_errors():
            return _meta(self.db, name)

    def set_meta(self, name: str, value: Any) -> None:
        with _sqlite_errors():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (name, json.dumps(value)))

    def folders(self) -> dict[str, tuple[list[int] | None, Any]]:
        """Each followed folder's identity when it was last listed (None: list it again) and what the
        caller kept of its listing then (`set_folder`)."""
        with _sqlite_errors():
            rows = self.db.execute("SELECT key, identity, listing FROM folders").fetchall()
        return {key: (json.loads(identity), json.loads(listing)) for key, identity, listing in rows}

    def set_folder(self, key: str, identity: list[int] | None, listing: Any = None) -> None:
        with _sqlite_errors():
            self.db.execute("INSERT OR REPLACE INTO folders VALUES (?, ?, ?)", (key, json.dumps(identity), json.dumps(listing)))

    def drop_folder(self, key: str) -> None:
        with _sqlite_errors():
            self.db.execute("DELETE FROM folders WHERE key = ?", (key,))

    def logs(self, families: tuple[str, ...], scope: str | None = None) -> dict[str, LogState]:
        """The logs known of these families (in this scope)."""
        sql = f"SELECT {_LOG_COLUMNS} FROM logs WHERE family IN ({_marks(families)})"
        args: tuple[Any, ...] = families
        if scope is not None:
            sql, args = sql + " AND scope = ?", (*args, scope)
        with _sqlite_errors():
            self._flush()
            return {row[1]: _log_state(row) for row in self.db.execute(sql, args)}

    def identities(self, family: str, scope: str) -> dict[str, tuple[int | None, ...]]:
        """The identity each known log of this family and scope was read with, as a tuple (all None: look
        again): what a look compares (50 000 task logs: no LogState built for each)."""
        with _sqlite_errors():
            self._flush()
            rows = self.db.execute("SELECT key, dev, ino, size, mtime FROM logs WHERE family = ? AND scope = ?", (family, scope))
            return {row[0]: row[1:] for row in rows}

    def logs_named(self, keys: list[str]) -> dict[str, LogState]:
        """The logs known with these keys."""
        found: dict[str, LogState] = {}
        with _sqlite_errors():
            self._flush()
            for chunk in _chunks(keys):
                found.update((row[1], _log_state(row)) for row in self.db.execute(
                    f"SELECT {_LOG_COLUMNS} FROM logs WHERE key IN ({_marks(chunk)})", chunk))
        return found

    def put_log(self, state: LogState) -> None:
        """Store what is known of the log now (a new one gets its `id`)."""
        identity: list[int | None] = [*state.identity] if state.identity else [None] * 4
        mark: list[int | None] = [*state.mark] if state.mark else [None] * 3
        with _sqlite_errors():
            if not state.id:
                state.id = self._new_id("logs")
                self._new_logs.append((state.id, state.key, state.family, state.scope, *identity, *mark))
                if not self.fresh or len(self._new_logs) >= BATCH:
                    self._flush()
                return
            self._flush()
            self.db.execute("UPDATE logs SET family = ?, scope = ?, dev = ?, ino = ?, size = ?, mtime = ?, mark_end = ?,"
                            " mark_tail = ?, mark_head = ? WHERE id = ?", (state.family, state.scope, *identity, *mark, state.id))

    def drop_log(self, state: LogState) -> None:
        """Forget the log and every document read from it."""
        self.clear_log(state)
        with _sqlite_errors():
            self.db.execute("DELETE FROM logs WHERE id = ?", (state.id,))

    def clear_log(self, state: LogState) -> None:
        """Remove every document read from the log, and what it removed (`gone`): it is read again whole."""
        with _sqlite_errors():
            self._flush()
            self._delete_docs("log = ?", (state.id,))
            self.db.execute("DELETE FROM gone WHERE log = ?", (state.id,))

    def add_docs(self, state: LogState, docs: list[Doc]) -> None:
        """Index `docs` of the log (stored first: `put_log`), each key once: a key it already holds, or
        one removed (`remove_docs`), is left out."""
        if not docs:
            return
        with _sqlite_errors():
            if not self.fresh:
                self._flush()
            taken = set() if self.fresh else self._taken(state, [doc.key for doc in docs])  # a fresh index reads each log once
            rows: list[tuple[Any, ...]] = []
            for doc in docs:
                if doc.key not in taken:
                    taken.add(doc.key)
                    rows.append((self._new_id("docs"), state.id, doc.key, doc.kind, doc.rid, doc.ref, doc.who, doc.ts, doc.room,
                                 doc.lane, doc.place, doc.status, doc.title, doc.body, doc.at, doc.length))  # _DOC_FIELDS
            if self.fresh:  # its text index is built at once when it is finished
                self._new_docs += rows
                if len(self._new_docs) >= BATCH:
                    self._flush()
                return
            self.db.executemany(f"INSERT INTO docs (id, log, {', '.join(_DOC_FIELDS)}) VALUES ({_marks(rows[0])})", rows)
            self.db.executemany("INSERT INTO text_index (rowid, title, body) VALUES (?, ?, ?)", [(row[0], row[-4], row[-3]) for row in rows])

    def _taken(self, state: LogState, keys: list[str]) -> set[str]:
        taken: set[str] = set()
        for chunk in _chunks(keys):
            taken.update(row[0] for row in self.db.execute(
                f"SELECT key FROM docs WHERE log = ? AND key IN ({_marks(chunk)}) UNION ALL "
                f"SELECT key FROM gone WHERE log = ? AND key IN ({_marks(chunk)})", (state.id, *chunk, state.id, *chunk)))
        return taken

    def remove_docs(self, state: LogState, keys: list[str]) -> None:
        """Remove these documents of the log, and keep them out should their lines come again."""
        with _sqlite_errors():
            self._flush()
            for chunk in _chunks(keys):
                self._delete_docs(f"log = ? AND key IN ({_marks(chunk)})", (state.id, *chunk))
            self.db.executemany("INSERT OR IGNORE INTO gone VALUES (?, ?)", [(state.id, key) for key in keys])

    def _delete_docs(self, where: str, args: tuple[Any, ...]) -> None:
        if not self.fresh:
            self.db.execute("INSERT INTO text_index (text_index, rowid, title, body) "
                            f"SELECT 'delete', id, title, body FROM docs WHERE {where}", args)
        self.db.execute(f"DELETE FROM docs WHERE {where}", args)

    # -- queries ---------------------------------------------------------------------------------

    def search(self, match: str, *, kinds: tuple[str, ...] = (), room: str | None = None, who: str | None = None,
               since: str | None = None, limit: int = 20) -> tuple[list[Found], int]:
        """(the best `limit` documents matching the FTS5 expression `match` that pass the filters, best
        first; how many match in all). Ranked by bm25 (a title match weighs TITLE_WEIGHT), then the later
        indexed (logs are read oldest first)."""
        where, args = [], [match]
        if kinds:
            where.append(f"d.kind IN ({_marks(kinds)})")
            args += kinds
        for column, value in (("d.room", room), ("d.who", who)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        if since is not None:
            where.append("d.ts >= ?")
            args.append(since)
        # without a filter the text index answers alone: joining each match to its document costs 2-10x
        joined = ("FROM text_index JOIN docs d ON d.id = text_index.rowid WHERE text_index MATCH ? AND " + " AND ".join(where)
                  if where else "FROM text_index WHERE text_index MATCH ?")
        with _sqlite_errors():  # ranked first, then the snippets of only those shown (a snippet tokenizes its text again)
            self._flush()
            best = [row[0] for row in self.db.execute(
                f"SELECT text_index.rowid {joined} ORDER BY bm25(text_index, {TITLE_WEIGHT}, 1.0), text_index.rowid DESC LIMIT ?",
                (*args, limit))]
            if not best:
                return [], 0
            total = self.db.execute(f"SELECT count(*) {joined}", args).fetchone()[0]
            rows = {row[0]: row[1:] for row in self.db.execute(
                f"SELECT d.id, l.key, {', '.join('d.' + name for name in _DOC_FIELDS)}, "
                f"snippet(text_index, -1, '{MARK_START}', '{MARK_END}', '…', {SNIPPET_TOKENS}) "
                "FROM text_index JOIN docs d ON d.id = text_index.rowid JOIN logs l ON l.id = d.log "
                f"WHERE text_index MATCH ? AND text_index.rowid IN ({_marks(best)})", (match, *best))}
        found = [Found(row[0], Doc(**dict(zip(_DOC_FIELDS, row[1:-1], strict=True))), row[-1]) for rowid in best if (row := rows.get(rowid))]
        return found, int(total)

    def close(self) -> None:
        self.db.close()


def _marks(values: Any) -> str:
    return ", ".join("?" * len(values))


def _chunks(values: list[str], size: int = 400) -> Iterator[list[str]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


# -- opening for an update -----------------------------------------------------------------------------

@contextmanager
def updating(project: Project, *, rebuild: bool = False, memory: bool = False) -> Iterator[Index]:
    """The project's index under its lock, in one write transaction committed when the block ends (rolled
    back when it raises). A missing index, one that is not ours, or `rebuild`: a fresh, empty one in a
    temporary file that takes the old one's place when the block ends. Where the lock or the file cannot
    be written (a read-only tree), or with `memory` (the last resort of a search whose index file keeps
    failing): an empty index in memory, for this process only. A lock another process holds past
    ROOMS_LOCK_TIMEOUT is LockBusy (exit 3). The Index stays open for queries after the block: close it."""
    available()
    path = Path(layout.search_index_file(project))
    lock = None
    if not memory:
        try:
            lock = locks.acquire(path, locks.default_timeout())
        except OSError:  # no lock file can be made: a read-only tree
            pass
        else:
            if lock is None:
                raise LockBusy(f"the search index is being updated by another rooms process (waited {locks.default_timeout():g}s); "
                               "try again")
    try:
        index = _open_or_new(path, rebuild) if lock is not None else None
        stored = index is not None
        if index is None:
            index = Index(_connect(":memory:"), fresh=True)
            _create(index.db, None)
            index.db.execute("BEGIN")
        try:
            yield index
            _finish(index, path if stored else None)
        except BaseException:
            _abandon(index, path if stored else None)
            raise
    finally:
        if lock is not None:
            lock.release()


def _temporary(path: Path) -> Path:
    return path.with_name(f"{path.name}.{os.getpid()}.tmp")


def _open_or_new(path: Path, rebuild: bool) -> Index | None:
    """The index at `path` in a write transaction, or a fresh one in a temporary file; None when no file
    can be written there."""
    for planted in (path, path.with_name(path.name + "-journal")):
        _clear_unless_file(planted)
    db = None if rebuild else _open_checked(path)
    if db is not None:
        try:
            db.execute("BEGIN IMMEDIATE")
            return Index(db, fresh=False)
        except sqlite3.Error:
            db.close()
    for name in files.names(path.parent):  # what a killed build left (the lock is held: no build runs now)
        if name.startswith(path.name + ".") and name.endswith(".tmp"):
            files.remove(path.parent / name)
    temporary = _temporary(path)
    try:
        db = files.making_folder(temporary, lambda: _connect(str(temporary)))
        db.execute("PRAGMA journal_mode = OFF")  # a new file: nothing to roll back to
        st = os.stat(temporary)
        _create(db, [st.st_dev, st.st_ino])
        db.execute("BEGIN")
    except (sqlite3.Error, OSError):
        files.remove(temporary)
        return None
    return Index(db, fresh=True)


def _clear_unless_file(path: Path) -> None:
    """Remove what is at `path` when it is not a plain file (a symlink, never followed; a folder): nothing
    of the index is ever read or written through it."""
    try:
        st = os.lstat(path)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode):
        files.remove_tree(path)
    elif not stat.S_ISREG(st.st_mode):
        files.remove(path)


def _finish(index: Index, path: Path | None) -> None:
    """Commit what the block did; a fresh index gets its text index built at once and takes the place of
    the old file (whose stale rollback journal, if any, goes first: it is never rolled into the new one)."""
    with _sqlite_errors():
        index._flush()
        if index.fresh:
            index.db.execute("INSERT INTO text_index (text_index) VALUES ('rebuild')")
        index.db.execute("COMMIT")
    if index.fresh and path is not None:
        try:
            files.remove(path.with_name(path.name + "-journal"))
            os.replace(_temporary(path), path)
        except OSError as exc:
            raise Damaged(f"cannot put the new index in place: {exc}") from None
    index.fresh = False


def _abandon(index: Index, path: Path | None) -> None:
    try:
        index.db.execute("ROLLBACK")
    except sqlite3.Error:
        pass
    if index.fresh and path is not None:
        index.close()
        files.remove(_temporary(path))
