"""Parsed YAML kept between processes: `.rooms/run/parsed.json` (local, out of git).

Every `rooms chat` and `rooms send` reads `.rooms.yaml` and agent definitions (YAML frontmatter);
importing and running the YAML parser costs more than the rest of such a command's reads. The
parsed data of each file is kept here under the file's (inode, size, mtime, ctime): any write to the
file changes that key, so a changed file is parsed again. A file written less than a second ago is
not kept (a rewrite of the same size within the clock's tick would keep its key), nor is data that
JSON would not give back unchanged (dates, non-text keys). Without the cache file (a fresh clone) or
with a damaged one, files are simply parsed; the cache is rewritten whole, atomically, last writer wins.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms a process); mypy reads the name

if TYPE_CHECKING:  # `rooms send` reads .rooms.yaml through here
    from typing import Any

RACY_S = 1.0


def _key(st: os.stat_result) -> list[int]:
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def cached(rooms_dir: Path, path: Path, parse: Callable[[], Any], st: os.stat_result | None = None) -> Any:
    """`parse()` (which reads `path`), or what it gave last time if `path` has not changed since.

    `st` is `path`'s stat taken before its text was read (a write in between then only costs a parse)."""
    if st is None:
        try:
            st = os.stat(path)
        except OSError:
            return parse()
    store = Path(rooms_dir) / "run" / "parsed.json"
    name, key = str(path), _key(st)
    entries: dict = {}
    try:
        with open(store, "rb") as f:
            loaded = json.loads(f.read())
        if isinstance(loaded, dict):
            entries = loaded
            entry = entries.get(name)
            if isinstance(entry, dict) and entry.get("key") == key and "data" in entry:
                return entry["data"]
    except (OSError, ValueError):  # no cache yet, or a damaged one: parse
        pass
    data = parse()
    if time.time() - st.st_mtime < RACY_S:
        return data
    try:
        if json.loads(json.dumps(data)) != data:
            return data
    except (TypeError, ValueError):
        return data
    entries[name] = {"key": key, "data": data}
    from rooms_cli.errors import StorageError
    from rooms_cli.store import atomic

    try:
        store.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_text(store, json.dumps(entries))
    except (OSError, StorageError):  # a read-only checkout or a full disk still works, uncached
        pass
    return data
