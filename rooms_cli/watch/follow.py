"""The follower: per-file byte offsets, whole lines only, replaced and truncated files re-read safely.

A log (JSONL) is read from the byte offset just after the last whole line already read; a line
without its newline yet is held back and read again, complete, next time. The file is read again
from the start when it was replaced (new inode: rehydrate, compaction via os.replace), truncated
(smaller than the offset), or rewritten in place (the bytes just before the offset changed). On such
a re-read a record already emitted is recognised and skipped, so nothing is printed twice and nothing
is lost: by its `id` in logs whose records each have one (transcripts, inboxes), else by its content
and how many identical records came before it (board and group events; a group's broadcast id is
shared by its replies). A renamed group's new log inherits what was seen in the old one.

A snapshot (a spawn's JSON record, replaced whole) is read again when its inode, size or mtime
changes, and the two versions are compared to make events.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from rooms_cli import terminal
from rooms_cli.errors import InvalidInput
from rooms_cli.store import jsonl
from rooms_cli.store.clock import parse_time
from rooms_cli.store.ids import is_valid_name
from rooms_cli.store.paths import Project
from rooms_cli.watch import events as ev
from rooms_cli.watch.sources import RACY_S, Discovery, Selection, Source
from rooms_cli.watch.wake import StopFlag, Waker

CHUNK = 1 << 20
ANCHOR = 4096  # bytes before the offset (the last lines read) that must be unchanged for an append-only read


class LogFile:
    """One append-only JSONL file, followed by byte offset."""

    def __init__(self, path: Path, id_field: str | None = "id"):
        self.path = Path(path)
        self.id_field = id_field  # a field unique to each record, when the log has one
        self.identity: tuple[int, int] | None = None
        self.offset = 0
        self.anchor = b""
        self.lineno = 1  # line number at `offset`, for warnings about bad lines
        self.seen_ids: set[str] = set()
        self.seen_content: set[tuple[bytes, int]] = set()
        self.occurrences: Counter[bytes] = Counter()
        self._warned_unreadable = False
        self._stat: tuple[int, ...] | None = None

    def unchanged(self) -> bool:
        """True when a stat shows the file exactly as last read (cheap: no open). A file changed
        within RACY_S of its last read is never taken as unchanged: its mtime may not have moved."""
        try:
            st = os.stat(self.path)
        except OSError:
            return self._stat is None
        stat = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        return stat == self._stat and time.time_ns() - st.st_mtime_ns > RACY_S * 1e9

    def read_new(self) -> list[dict]:
        """The records that are whole now and were never returned before, in file order."""
        return [record for chunk in self.read_chunks() for record in chunk]

    def read_chunks(self) -> Iterator[list[dict]]:
        """`read_new` a megabyte at a time, so a large file never sits in memory whole."""
        if self.unchanged():
            return
        try:
            handle = open(self.path, "rb")
        except FileNotFoundError:
            return
        except OSError as exc:
            self._unreadable(exc)
            return
        with handle:
            stat = os.fstat(handle.fileno())
            self._stat = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
            identity = (stat.st_dev, stat.st_ino)
            if identity != self.identity or stat.st_size < self.offset or not self._anchored(handle):
                self.identity, self.offset, self.lineno, self.anchor = identity, 0, 1, b""
                self.occurrences = Counter()
            if stat.st_size == self.offset:
                return
            handle.seek(self.offset)
            carry = b""
            while True:
                try:
                    block = handle.read(CHUNK)
                except OSError as exc:
                    self._unreadable(exc)
                    return
                if not block:
                    return  # what is left in `carry` is a line still being written: held back
                data = carry + block
                cut = data.rfind(b"\n") + 1
                lines, carry = data[:cut], data[cut:]
                if lines:
                    yield self._take(lines)

    def _take(self, lines: bytes) -> list[dict]:
        """Parse whole lines just read at `offset`; move past them; return the records never seen."""
        scan = jsonl.parse_bytes(lines, first_lineno=self.lineno)
        for lineno, reason in scan.bad:
            jsonl.warn(self.path, lineno, reason)
        self.offset += len(lines)
        self.lineno += lines.count(b"\n")
        self.anchor = (self.anchor + lines[-ANCHOR:])[-ANCHOR:]
        return [record for record in scan.records if self._first_time(record)]

    def _anchored(self, handle) -> bool:
        if not self.anchor:
            return True
        handle.seek(self.offset - len(self.anchor))
        return handle.read(len(self.anchor)) == self.anchor

    def _first_time(self, record: dict) -> bool:
        rid = record.get(self.id_field) if self.id_field else None
        if isinstance(rid, str) and rid:
            if rid in self.seen_ids:
                return False
            self.seen_ids.add(rid)
            return True
        digest = hashlib.blake2b(json.dumps(record, sort_keys=True).encode(), digest_size=12).digest()
        key = (digest, self.occurrences[digest])
        self.occurrences[digest] += 1
        if key in self.seen_content:
            return False
        self.seen_content.add(key)
        return True

    def _unreadable(self, exc: OSError) -> None:
        if not self._warned_unreadable:
            self._warned_unreadable = True
            terminal.warn(f"{self.path} cannot be read ({exc.strerror}); still watching it")


class SnapshotFile:
    """One JSON document replaced whole (os.replace); remembers the last version read."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.signature: tuple[int, ...] | None = None
        self.data: dict | None = None

    def read_changed(self) -> tuple[dict | None, dict] | None:
        """(previous version, new version) when the document changed, else None."""
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        signature = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
        if signature == self.signature:
            return None
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return None  # being written by a non-atomic writer: read it again next time
        self.signature = signature
        if not isinstance(data, dict) or data == self.data:
            return None
        before, self.data = self.data, data
        return before, data


class Follower:
    """Follows every source of a selection; `start()` takes the baseline, `poll()` returns what is new."""

    def __init__(self, project: Project, selection: Selection):
        self.project = project
        self.discovery = Discovery(project, selection)
        self.files: dict[str, tuple[Source, LogFile | SnapshotFile]] = {}
        self.position: dict[str, int] = {}  # discovery order, kept when only some files are read
        self._sources: list[Source] | None = None
        self.maker = ev.EventMaker()

    def start(self, since: datetime | None = None, last: int | None = None) -> list[dict]:
        """Count everything already written as seen; return the past events `since`/`last` ask for.

        Files are read a chunk at a time and only the events asked for are kept, so a large
        transcript costs its ids in memory, not its records."""
        tail = since is None and bool(last)
        streams = []
        order = itertools.count()
        self._discover()
        for source, state in list(self.files.values()):
            # the newest `last` by time, not by place in the file: a git merge puts one clone's
            # lines after the other's
            newest: list[tuple[str, int, dict]] = []
            kept: list[dict] = []
            for events in self._chunks(source, state, since is not None or tail):
                for event in events:
                    if tail and last:
                        item = (_ts(event), next(order), event)
                        (heapq.heappush if len(newest) < last else heapq.heappushpop)(newest, item)
                    elif since is None or _after(event, since):
                        kept.append(event)
            streams.append([e for _, _, e in sorted(newest, key=lambda t: t[:2])] if tail else kept)
        history = list(heapq.merge(*streams, key=_ts))
        return history[-last:] if tail and last else history

    def poll(self, changed: set[str] | None = None) -> list[dict]:
        """Events written since the last call, merged across files by time (each file's order kept).

        `changed`: the paths the OS reported (only those are read, plus files seen for the first
        time); None reads every file.
        """
        new = self._discover()
        if changed is None:
            wanted = list(self.files.values())
        else:  # only what changed and what is new: a tick costs the changes, not the number of files
            keys = {key for key in changed if key in self.files} | {source.key for source, _ in new}
            wanted = sorted((self.files[key] for key in keys), key=lambda entry: self.position[entry[0].key])
        streams = [self._read(source, state) for source, state in wanted]
        return list(heapq.merge(*streams, key=_ts))

    def _discover(self) -> list[tuple[Source, LogFile | SnapshotFile]]:
        """Take note of sources seen for the first time; returns them."""
        sources = self.discovery.sources()
        if sources is self._sources:  # the same answer as last time: nothing new
            return []
        self._sources = sources
        new = []
        for source in sources:
            if source.key not in self.files:
                state = SnapshotFile(source.path) if source.snapshot else LogFile(source.path, source.id_field)
                self.files[source.key] = (source, state)
                self.position[source.key] = len(self.position)
                new.append((source, state))
        return new

    def _read(self, source: Source, state: LogFile | SnapshotFile) -> list[dict]:
        return [event for events in self._chunks(source, state, True) for event in events]

    def _chunks(self, source: Source, state: LogFile | SnapshotFile, make_events: bool) -> Iterator[list[dict]]:
        """The new events of one file, a chunk at a time; with `make_events` False the records are
        only taken note of (a starting point without history)."""
        if isinstance(state, SnapshotFile):
            change = state.read_changed()
            yield self.maker.from_snapshot(source, *change) if change and make_events else []
            return
        if state.identity is None and source.family == "group":
            self._continue_renamed(source, state)
        for records in state.read_chunks():
            records = [r for r in records if not self._shown_elsewhere(source, r)]
            if not make_events:
                self.maker.remember(source, records)
                continue
            yield [event for record in records for event in self.maker.from_record(source, record)]

    def _shown_elsewhere(self, source: Source, record: dict) -> bool:
        """Under --all, a group envelope in a member's inbox repeats the group's own events; the
        `renamed` tombstone left in a renamed group's old log repeats the one in its new log."""
        if source.family == "group":
            return record.get("ev") == "renamed" and record.get("from") == source.name and record.get("to") != source.name
        tag = record.get("tag")
        return self.discovery.selection.all and source.family == "inbox" and isinstance(tag, str) and tag.startswith("group:")

    def _continue_renamed(self, source: Source, state: LogFile) -> None:
        """A renamed group's new log repeats the old log's events: what was printed from the old
        one counts as seen in the new one."""
        for record in jsonl.scan(source.path).records:
            old = record.get("from")
            if record.get("ev") == "renamed" and record.get("to") == source.name and isinstance(old, str) and is_valid_name(old):
                known = self.files.get(Source("group", source.path.with_name(f"{old}.jsonl"), "group", old).key)
                if known and isinstance(known[1], LogFile):
                    state.seen_content |= known[1].seen_content


def _ts(event: dict) -> str:
    return str(event.get("ts", ""))


def _after(event: dict, since: datetime) -> bool:
    try:
        return parse_time(_ts(event)) >= since
    except InvalidInput:  # a record without a usable time is not "since" anything
        return False


def watch(
    project: Project, selection: Selection, *, since: datetime | None = None, last: int | None = None,
    timeout: float | None = None, stop: StopFlag | None = None, started: Callable[[], object] | None = None,
) -> Iterator[dict]:
    """Yield past events (`since`/`last`), then each new event once as it lands, until `stop` is set
    or `timeout` seconds have passed. `started()` is called once the starting point is taken: anything
    written after that is an event (a viewer reads its first state then, so nothing falls in between)."""
    stop = stop or StopFlag()
    if timeout is not None:
        stop.expire_in(timeout)
    follower = Follower(project, selection)
    # the waker (and the change journal) start watching before the baseline is read, so nothing slips in between
    with Waker(project.dir, stop) as waker:
        looks = PollingLooks(project) if waker.mode == "poll" else None
        yield from follower.start(since, last)
        if started is not None:
            started()
        for changed in waker:
            if looks is None or changed is not None:
                yield from follower.poll(changed)
                continue
            began = time.monotonic()
            changed = looks.changed()
            yield from follower.poll(changed)
            if changed is None:
                looks.full_look_took(time.monotonic() - began)


class PollingLooks:
    """What a polling tick reads: the logs rooms noted in the change journal (store/changes.py), and
    now and then everything, for writers that do not note (git, editors, other tools).

    A full look stats every followed file (10 000 on a large board), so it is spaced out to take at most
    1/FULL_LOOK_SHARE of a core; on a small project that is every tick, as before."""

    FULL_LOOK_SHARE = 200

    def __init__(self, project: Project):
        from rooms_cli.store.changes import JournalReader

        self.journal = JournalReader(project.dir)
        self.journal.changed()  # start at its end: what is already noted is in the baseline
        self.next_full = 0.0

    def changed(self) -> set[str] | None:
        """Paths to read, or None for a full look."""
        noted = self.journal.changed()
        if noted is None or time.monotonic() >= self.next_full:
            return None
        return noted

    def full_look_took(self, seconds: float) -> None:
        self.next_full = time.monotonic() + self.FULL_LOOK_SHARE * seconds
