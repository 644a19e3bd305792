"""Parsed YAML kept between processes: `.rooms/run/parsed.json` (local, out of git; store/cache.py).

Every `rooms chat` and `rooms send` reads `.rooms.yaml` and agent definitions (YAML frontmatter);
importing and running the YAML parser costs more than the rest of such a command's reads. The
parsed data of each file is kept here under the file's identity (known.identity_of): any write to the
file changes that key, so a changed file is parsed again. A file written less than RACY_S ago is
not kept (a rewrite of the same size within the clock's tick would keep its key), nor is data that
JSON would not give back unchanged (dates, non-text keys). Without the cache file (a fresh clone) or
with a damaged one, files are simply parsed; the cache is rewritten whole, atomically, last writer wins.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

from rooms_cli.store import cache, known

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms a process); mypy reads the name

if TYPE_CHECKING:  # `rooms send` reads .rooms.yaml through here
    from typing import Any

    from rooms_cli.store.files import StrPath

VERSION = 1


def cached(rooms_dir: StrPath, path: StrPath, parse: Callable[[], Any], st: os.stat_result | None = None) -> Any:
    """`parse()` (which reads `path`), or what it gave last time if `path` has not changed since.

    `st` is `path`'s stat taken before its text was read (a write in between then only costs a parse)."""
    if st is None:
        try:
            st = os.stat(path)
        except OSError:
            return parse()
    store = os.path.join(rooms_dir, "run", "parsed.json")
    name, key = str(path), known.identity_of(st)
    doc = cache.load(store, VERSION)
    entries = doc.get("files") if doc is not None else None
    if not isinstance(entries, dict):
        entries = {}
    entry = entries.get(name)
    if isinstance(entry, dict) and entry.get("key") == key and "data" in entry:
        return entry["data"]
    data = parse()
    if not cache.settled(st, time.time()):
        return data
    try:
        if json.loads(json.dumps(data)) != data:
            return data
    except (TypeError, ValueError):
        return data
    entries[name] = {"key": key, "data": data}
    cache.save(store, {"version": VERSION, "files": entries})  # never fails: a read-only checkout reads uncached
    return data
