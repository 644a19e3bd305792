"""The follower: every selected source followed through store/follow.py (logs by byte offset, whole
lines only, each record once; snapshots compared version to version), merged into one stream of
events. A renamed group's new log inherits what was seen in the old one.
"""

from __future__ import annotations

import heapq
import itertools
import os
import time
from collections.abc import Callable, Iterator
from datetime import datetime

from rooms_cli.core.errors import InvalidInput
from rooms_cli.store import jsonl
from rooms_cli.store.clock import parse_time
from rooms_cli.store.follow import LogFile, SnapshotFile
from rooms_cli.store.ids import is_valid_name
from rooms_cli.store.paths import Project
from rooms_cli.watch import events as ev
from rooms_cli.watch.sources import Discovery, Selection, Source
from rooms_cli.watch.wake import StopFlag, Waker

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


class Follower:
    """Follows every source of a selection; `start()` takes the baseline, `poll()` returns what is new."""

    def __init__(self, project: Project, selection: Selection):
        self.project = project
        self.discovery = Discovery(project, selection)
        self.files: dict[str, tuple[Source, LogFile | SnapshotFile]] = {}
        self.position: dict[str, int] = {}  # discovery order, kept when only some files are read
        self.renamed_from: dict[str, list[str]] = {}  # a renamed group's log -> the names it had before
        self._sources: list[Source] | None = None
        self.maker = ev.EventMaker()

    def start(self, since: datetime | None = None, last: int | None = None) -> list[dict[str, Any]]:
        """Count everything already written as seen; return the past events `since`/`last` ask for.

        Files are read a chunk at a time and only the events asked for are kept, so a large
        transcript costs its ids in memory, not its records. Without `since`/`last` nothing is
        printed: each log's starting point is taken back from the last watch's where the file allows
        (watch/baseline.py) and only what was appended since is read."""
        tail = since is None and bool(last)
        self._discover()
        if since is None and not tail:
            self._take_baseline()
            return []
        streams = []
        order = itertools.count()
        for source, state in list(self.files.values()):
            # the newest `last` by time, not by place in the file: a git merge puts one clone's
            # lines after the other's
            newest: list[tuple[str, int, dict[str, Any]]] = []
            kept: list[dict[str, Any]] = []
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

    def _take_baseline(self) -> None:
        """Count everything written so far as seen, printing nothing; keep the result for the next watch."""
        from rooms_cli.watch.baseline import KeptBaseline

        kept = KeptBaseline(self.project)
        for source, state in list(self.files.values()):
            if not isinstance(state, LogFile):
                for _ in self._chunks(source, state, False):
                    pass
                continue
            restored_at, titles, renamed = kept.restore(source, state)
            self.maker.titles.update(titles)
            if restored_at and source.family == "group":  # as the whole read would have (_continue_renamed)
                self.renamed_from[source.key] = renamed
                self._count_renamed_as_seen(source, state, renamed)
            for _ in self._chunks(source, state, False, titles):
                pass
            kept.note(source, state, restored_at, titles, self.renamed_from.get(source.key, []))
        kept.save()

    def poll(self, changed: set[str] | None = None) -> list[dict[str, Any]]:
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
        found = list(heapq.merge(*streams, key=_ts))
        return found + self._became_ready(found)

    def _became_ready(self, found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A `task.ready` event for each task that the events `found` left waiting on nothing (a task it
        depends on done, or a dependency that was not done dropped), after them: {room, task, title,
        lane, after: the ids that set it free}. Only as it happens: past events (`since`/`last`) do not
        say what was ready then."""
        finished: dict[str, list[str]] = {}
        unlinked: dict[str, dict[str, list[str]]] = {}
        moment: dict[str, str] = {}
        for event in found:
            room, task = event.get("room"), event.get("task")
            if not isinstance(room, str) or not isinstance(task, str):
                continue
            changed = event.get("changes")
            dropped = changed.get("depends_on") if event["type"] == "task.updated" and isinstance(changed, dict) else None
            if event["type"] == "task.done":
                finished.setdefault(room, []).append(task)
            elif isinstance(dropped, dict) and isinstance(dropped.get("remove"), list) and dropped["remove"]:
                unlinked.setdefault(room, {})[task] = [str(dep) for dep in dropped["remove"]]
            else:
                continue
            moment[room] = _ts(event)
        if not moment:  # the common case: no board is read
            return []
        from rooms_cli.board.tasks import became_ready
        from rooms_cli.core.errors import RoomsError

        out = []
        for room in sorted(moment):
            try:
                freed = became_ready(self.project, room, finished.get(room, []), unlinked.get(room, {}))
            except RoomsError:  # a room removed meanwhile, a board that cannot be read now: no event
                continue
            for data, after in freed:
                out.append({"type": "task.ready", "ts": moment[room], "room": room, "task": data["id"],
                            "title": data["title"], "lane": data["lane"], "after": after})
        return out

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

    def _read(self, source: Source, state: LogFile | SnapshotFile) -> list[dict[str, Any]]:
        return [event for events in self._chunks(source, state, True) for event in events]

    def _chunks(self, source: Source, state: LogFile | SnapshotFile, make_events: bool,
                titles: dict[str, str] | None = None) -> Iterator[list[dict[str, Any]]]:
        """The new events of one file, a chunk at a time; with `make_events` False the records are
        only taken note of (a starting point without history; the task titles noted go to `titles`)."""
        if isinstance(state, SnapshotFile):
            change = state.read_changed()
            yield self.maker.from_snapshot(source, *change) if change and make_events else []
            return
        if state.identity is None and source.family == "group":
            self._continue_renamed(source, state)
        for records in state.read_chunks():
            records = [r for r in records if not self._shown_elsewhere(source, r)]
            if not make_events:
                noted = self.maker.remember(source, records)
                if titles is not None:
                    titles.update(noted)
                continue
            yield [event for record in records for event in self.maker.from_record(source, record)]

    def _shown_elsewhere(self, source: Source, record: dict[str, Any]) -> bool:
        """Under --all, a group envelope in a member's inbox repeats the group's own events; the
        `renamed` tombstone left in a renamed group's old log repeats the one in its new log."""
        if source.family == "group":
            return record.get("ev") == "renamed" and record.get("from") == source.name and record.get("to") != source.name
        tag = record.get("tag")
        return self.discovery.selection.all and source.family == "inbox" and isinstance(tag, str) and tag.startswith("group:")

    def _continue_renamed(self, source: Source, state: LogFile) -> None:
        """A renamed group's new log repeats the old log's events: what was printed from the old
        one counts as seen in the new one."""
        renamed = []
        for record in jsonl.scan(source.path).records:
            old = record.get("from")
            if record.get("ev") == "renamed" and record.get("to") == source.name and isinstance(old, str) and is_valid_name(old):
                renamed.append(old)
        self.renamed_from[source.key] = renamed
        self._count_renamed_as_seen(source, state, renamed)

    def _count_renamed_as_seen(self, source: Source, state: LogFile, renamed: list[str]) -> None:
        for old in renamed:
            known = self.files.get(Source("group", os.path.join(os.path.dirname(source.path), f"{old}.jsonl"), "group", old)
.key)
            if known and isinstance(known[1], LogFile):
                state.seen_content |= known[1].seen_content


def _ts(event: dict[str, Any]) -> str:
    return str(event.get("ts", ""))


def _after(event: dict[str, Any], since: datetime) -> bool:
    try:
        return parse_time(_ts(event)) >= since
    except InvalidInput:  # a record without a usable time is not "since" anything
        return False


def watch(
    project: Project, selection: Selection, *, since: datetime | None = None, last: int | None = None,
    timeout: float | None = None, stop: StopFlag | None = None, started: Callable[[], object] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield past events (`since`/`last`), then each new event once as it lands, until `stop` is set
    or `timeout` seconds have passed. `started()` is called once the starting point is taken: anything
    written after that is an event (a viewer reads its first state then, so nothing falls in between)."""
    stop = stop or StopFlag()
    if timeout is not None:
        stop.expire_in(timeout)
    follower = Follower(project, selection)
    # the change journal is read from here before the baseline, and the waker looks at everything once when
    # notifications start (after the baseline), so nothing slips in between
    with Waker(project.dir, stop) as waker:
        looks = PollingLooks(project)
        yield from follower.start(since, last)
        if started is not None:
            started()
        for changed in waker:
            if waker.mode == "notify" or changed is not None:
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
