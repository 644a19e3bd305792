"""The baseline a watch starts from, kept between watches: `.rooms/run/watch/baseline.json`.

A watch counts everything already written as seen without printing it. Taking that starting point
used to parse every followed log whole (1.3 s for a transcript of 100 000 messages) for what the
parse leaves behind: where the whole lines end, the line number there, the ids and content
fingerprints of the records seen (so a replaced or rewritten log prints only what is new), the
titles task events carry, and the bad lines it warned about. This keeps exactly that, per log, with
the log's seal (store/known.seal: inode, offset, CRC-32 of the 4 KB before it). The next watch whose
log still has that seal (the same file, at most appended to) takes the state back, warns about the
same bad lines again, and reads only the bytes appended since; any other log is read whole, as before.
Never trusted over the file: a log that another inode now holds, that is shorter than the offset or
whose bytes before it changed is read from the start; so is a group's log that grew (a renamed
group's new log counts its old one's records as seen: watch/follow.py). The file is local (`run/` is out of
git), written only when an entry changed, and never fatal (store/cache.py).
"""

from __future__ import annotations

from collections import Counter

from rooms_cli.store import cache, jsonl, layout
from rooms_cli.store.follow import LogFile
from rooms_cli.store.paths import Project
from rooms_cli.watch.sources import Source

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

VERSION = 2


class KeptBaseline:
    """The stored baselines of one project: `restore` one into a fresh LogFile, `note` what a log's
    baseline came to, `save` once every log was read."""

    def __init__(self, project: Project):
        self.path = layout.watch_baseline_file(project)
        doc = cache.load(self.path, VERSION)
        logs = doc.get("logs") if doc else None
        self.logs: dict[str, dict[str, Any]] = logs if isinstance(logs, dict) else {}
        self.changed = False

    def restore(self, source: Source, state: LogFile) -> tuple[int, dict[str, str], list[str]]:
        """Put the stored baseline of `source` into `state` (a LogFile not read yet) when the file still
        has its seal, warning again about the bad lines it had; returns (offset, task titles, the names a
        renamed group had): (0, {}, []) when nothing was restored and the log is read from its start. A
        group's log is restored only when nothing was appended to it (a `renamed` event appended would
        take another group's seen records: the whole read finds it)."""
        entry = self.logs.get(source.key)
        if entry is None:
            return 0, {}, []
        try:
            seal, lineno = entry["seal"], int(entry["lineno"])
            seen_ids = set(entry["ids"])
            seen_content = {(bytes.fromhex(digest), n) for digest, n in entry["content"]}
            occurrences: Counter[bytes] = Counter()
            dict.update(occurrences, {bytes.fromhex(d): int(n) for d, n in entry["occurrences"].items()})  # not Counter.update's adding: ~10 µs a log
            bad = [(int(line), str(reason)) for line, reason in entry["bad"]]
            titles = {str(task): str(title) for task, title in entry["titles"].items()}
            renamed = [str(name) for name in entry["renamed"]]
            if not state.resume(seal, lineno, appended=source.family != "group"):
                return 0, {}, []
        except (KeyError, TypeError, ValueError, AttributeError):  # an entry this version did not write
            return 0, {}, []
        state.seen_ids, state.seen_content, state.occurrences = seen_ids, seen_content, occurrences
        for line, reason in bad:
            jsonl.warn(state.path, line, reason)
        state.bad_lines = bad
        return state.offset, titles, renamed

    def note(self, source: Source, state: LogFile, restored_at: int, titles: dict[str, str], renamed: list[str]) -> None:
        """Keep what reading `source`'s log from `restored_at` to its end left in `state`."""
        if state.identity is None or not state.offset:
            if self.logs.pop(source.key, None) is not None:
                self.changed = True
            return
        if restored_at and state.offset == restored_at and source.key in self.logs:
            return  # restored and nothing appended: the entry is the same
        self.logs[source.key] = {
            "seal": state.seal,
            "lineno": state.lineno,
            "ids": list(state.seen_ids),
            "content": [[digest.hex(), n] for digest, n in state.seen_content],
            "occurrences": {digest.hex(): n for digest, n in state.occurrences.items()},
            "bad": state.bad_lines,
            "titles": titles,
            "renamed": renamed,
        }
        self.changed = True

    def save(self) -> None:
        if self.changed:
            cache.save(self.path, {"version": VERSION, "logs": self.logs})
            self.changed = False
