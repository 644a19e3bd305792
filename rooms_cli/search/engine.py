"""`search(project, query, …)`: the index brought up to date, the query matched and ranked, each hit
checked against its log before it is shown.

A hit is shown only as its log holds it now: its line is read back (a task: its whole log, replayed)
and must make the very document the index returned. One that does not (a log changed in a way the
refresh could not see, a damaged or planted index) has its log read again whole and the query run
again; what still disagrees after that is left out. An index SQLite finds damaged is built anew.
"""

from __future__ import annotations

import re

from rooms_cli.core.errors import InvalidInput, RoomsError, UsageError
from rooms_cli.core.records import dataclass, field
from rooms_cli.search import FAMILIES, documents
from rooms_cli.search.query import parse
from rooms_cli.search.refresh import Progress, log_path, refresh
from rooms_cli.store import ftsindex
from rooms_cli.store.ftsindex import Damaged, Doc, Found
from rooms_cli.store.ids import validate_name
from rooms_cli.store.paths import Project, one_operation

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

DEFAULT_LIMIT = 20
MAX_LIMIT = 1000
MARK = "**"  # around each match in a snippet, in JSON and on a plain terminal
RECHECKS = 2  # rounds of reading a disagreeing hit's log again before it is left out


@dataclass
class Hit:
    """One search result: what it is, where it lives, who wrote it when, the match in context, and the
    reference that cites it in a task's record (`msg:<id>`, `task:<id>`…: documents.py)."""

    kind: str
    id: str
    ref: str
    who: str
    ts: str
    snippet: str
    room: str = ""
    lane: str = ""
    status: str = ""
    title: str = ""
    inbox: str = ""
    group: str = ""
    event: str = ""
    agent: str = ""
    text: str = ""  # the whole document (a task: title, then the rest), for a viewer; not in the JSON record

    def to_json(self) -> dict[str, Any]:
        """The `search hit` record (docs/json.md): the keys of its kind's place, none empty."""
        data = {"kind": self.kind, "id": self.id, "ref": self.ref, "who": self.who, "ts": self.ts, "snippet": self.snippet}
        data.update((name, value) for name in _PLACES[self.kind] if (value := getattr(self, name)))
        return data

    @property
    def where(self) -> str:
        """Where it lives, for a person: `#api`, `#api board · backend`, `bob's inbox`, `group rev`, `analyst's memories`."""
        if self.kind == "chat":
            return f"#{self.room}"
        if self.kind == "task":
            return f"#{self.room} board · {self.lane}" if self.lane else f"#{self.room} board"
        if self.kind == "message":
            return f"{self.inbox}'s inbox"
        if self.kind == "group":
            return f"group {self.group}" + (" · reply" if self.event == "reply" else "")
        return f"{self.agent}'s memories"


_PLACES = {"chat": ("room",), "task": ("room", "lane", "status", "title"), "message": ("inbox",), "group": ("group", "event"),
           "memory": ("agent",)}


@dataclass
class Results:
    """The hits of one search, best first, and how many documents matched in all."""

    hits: list[Hit] = field(default_factory=list)
    total: int = 0

    @property
    def remaining(self) -> int:
        return max(self.total - len(self.hits), 0)


def kinds_of(within: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """The document kinds `--in` names (chat, messages, tasks, groups, memories; comma-separated or
    repeated); all of them for none. An unknown name is a UsageError naming the ones there are."""
    names = [name.strip() for given in within or () for name in given.split(",") if name.strip()]
    unknown = [name for name in names if name not in FAMILIES]
    if unknown:
        raise UsageError(f"--in {unknown[0]!r} is not something searched; use {', '.join(FAMILIES)}")
    return tuple(dict.fromkeys(documents.KIND[name] for name in names or FAMILIES))


def since_time(text: str) -> str:
    """The ISO time `--since` names: an ISO time or date (`2026-11-20`, `2026-11-20T09:00Z`) or a duration
    back from now (`90m`, `2d`, `1h30m`); a UsageError (exit 2) for anything else."""
    from rooms_cli.store import clock

    try:
        return clock.iso(clock.add_seconds(clock.now(), -clock.parse_duration(text)))
    except InvalidInput:
        pass
    try:
        return clock.iso(clock.parse_time(text))
    except InvalidInput:
        raise UsageError(f"--since {text!r} is neither a time (2026-11-20, 2026-11-20T09:00:00Z) nor a duration back "
                         "from now (90m, 2d)") from None


def search(project: Project, text: str, *, within: list[str] | tuple[str, ...] | None = None, room: str | None = None,
           who: str | None = None, since: str | None = None, limit: int = DEFAULT_LIMIT, progress: Progress | None = None) -> Results:
    """The documents matching the query `text` (search/query.py), best first: at most `limit`, of the kinds
    `within` names (kinds_of), in `room`, written by `who`, at or after `since` (since_time). The query and
    the filters are checked before the index is touched (a UsageError or InvalidInput, one sentence)."""
    match = parse(text).fts()
    kinds = kinds_of(within)
    if not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"--limit must be between 1 and {MAX_LIMIT} (it is {limit})")
    if room is not None:
        validate_name(room, "room id")
    if who is not None:
        who = validate_name(who.strip(), "--from name")  # names are ids (an agent, a person): '../x' finds nothing, say so
    filters: dict[str, Any] = {"kinds": kinds, "room": room, "who": who,
                               "since": since_time(since) if since is not None else None, "limit": limit}
    try:
        return _search(project, match, filters, progress)
    except Damaged:
        pass
    try:  # a damaged index, or one SQLite failed to update: built anew
        return _search(project, match, filters, progress, rebuild=True)
    except Damaged:
        pass
    try:  # the file keeps failing (a full disk, a broken file system): an index in memory, for this search
        return _search(project, match, filters, progress, memory=True)
    except Damaged as exc:
        raise RoomsError(f"the search index could not be built ({exc})") from None


def _search(project: Project, match: str, filters: dict[str, Any], progress: Progress | None, *, rebuild: bool = False,
            memory: bool = False) -> Results:
    with ftsindex.updating(project, rebuild=rebuild, memory=memory) as index, one_operation():
        refresh(index, project, progress)  # one operation: each folder's symlink check once, not once per log
    try:
        for _ in range(RECHECKS):
            found, total = index.search(match, **filters)
            stale = sorted({hit.log for hit in found if not _holds(project, hit)})
            if not stale:
                break
            index.close()
            with ftsindex.updating(project, memory=memory) as index:  # the logs read again whole, under the lock
                refresh(index, project, reread=tuple(stale))
        else:
            found, total = index.search(match, **filters)
            left_out = [hit for hit in found if not _holds(project, hit)]
            found, total = [hit for hit in found if hit not in left_out], total - len(left_out)
        return Results([_hit(hit) for hit in found], total)
    finally:
        index.close()


def _holds(project: Project, hit: Found) -> bool:
    """Whether the hit's log still makes exactly the document the index returned."""
    path = log_path(project, hit.log)
    doc = hit.doc
    if doc.kind == "task":
        read = ftsindex.read_log(path)
        return read is not None and len(read.data) == doc.length and documents.task_doc(doc.room, doc.key, read.data) == doc
    span = ftsindex.read_span(path, doc.at, doc.length)
    if span is None or len(span) != doc.length:
        return False
    family, _, scope = hit.log.partition("/")
    return doc in documents.from_lines(family, scope, span, doc.at).docs


_BREAK = re.compile(r"\s*\n\s*")  # a line break in the text (between a task's parts, in a message) shown as ·
_SPACE = re.compile(r"\s+")


def _hit(found: Found) -> Hit:
    doc: Doc = found.doc
    snippet = _SPACE.sub(" ", _BREAK.sub(" · ", found.snippet.strip())).replace(ftsindex.MARK_START, MARK).replace(ftsindex.MARK_END, MARK)
    text = "\n".join(part for part in (doc.title, doc.body) if part.strip())
    hit = Hit(kind=doc.kind, id=doc.rid, ref=doc.ref, who=doc.who, ts=doc.ts, snippet=snippet, text=text)
    if doc.kind in ("chat", "task"):
        hit.room = doc.room
    if doc.kind == "task":
        hit.lane, hit.status, hit.title = doc.lane, doc.status, doc.title
    elif doc.kind == "message":
        hit.inbox = doc.place
    elif doc.kind == "group":
        hit.group, hit.event = doc.place, doc.status
    elif doc.kind == "memory":
        hit.agent = doc.place
    return hit
