"""The one cache primitive: what was derived from files, kept under `.rooms/run/` (this machine's, out
of git) and trusted only while the files it came from keep their identity.

    key = cache.identity(log)                    # [dev, inode, size, mtime_ns], None if missing
    doc = cache.load(path, VERSION)             # the stored document, or None: missing, damaged, other version
    ...                                          # compare the keys it holds with the files' identities now
    cache.save(path, {"version": VERSION, ...})  # replace it: atomic, never fatal

- **Key.** A file's identity changes with any write to it: an append grows it, a rewrite moves its
  mtime, a replacement (git checkout, os.replace) gives it a new inode. (Not the ctime: a board's
  cache holds one key per task, and 20 000 more 19-digit numbers cost its every read ~5 %.) Take the identity
  *before* reading the file: a write in between then makes the entry stale, never wrong. A file
  written within RACY_S may be rewritten at the same size inside the clock's tick: `settled` says
  whether a key can be trusted for a file that is not append-only.
- **Crash-safe write.** `save` replaces the file atomically (store/atomic.write_cache: temp file and
  rename, no fsync): a crash leaves the old cache or the new, and a lost one only costs a rebuild.
- **Read paths stay read-only.** `save` never fails and never raises: on a read-only tree, a full disk
  or a missing permission nothing is stored and the caller goes on with what it computed. A read
  command therefore works on a read-only checkout, only slower.

Documents are JSON — data that cannot execute, never pickle or marshal: `.rooms/run/` is out of git
by `.rooms/.gitignore`, but a clone can carry a file there all the same (`git add -f`), and loading it
must never run it. A document is a dict whose `version` names its layout; its reader checks the keys
it holds against the files' identities now, and its shape, before it trusts a byte of it.
"""

from __future__ import annotations

import os

from rooms_cli.store.known import identity_of, remember

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.store.files import StrPath

RACY_S = 1.0  # seconds: a file written more recently may change again without its identity changing


def identity(path: StrPath) -> list[int] | None:
    """The identity of the file at `path`; None when there is none."""
    try:
        return identity_of(os.stat(path))
    except (FileNotFoundError, NotADirectoryError):
        return None


def settled(st: os.stat_result, now: float) -> bool:
    """Whether the file was last written long enough before `now` (time.time()) for its identity to
    change with its next write; a cache entry for a file that is not settled is not worth storing."""
    return now - st.st_mtime >= RACY_S


def load(path: StrPath, version: int) -> dict[str, Any] | None:
    """The document stored at `path` when its `version` is `version`; None when it is missing,
    unreadable, damaged or of another version (the caller rebuilds it)."""
    from rooms_cli.store.files import read_bytes

    try:
        blob = read_bytes(path)
    except OSError:  # a missing or unreadable cache only means a rebuild
        return None
    return decode(blob, version)


def load_bytes(path: StrPath, version: int, memo: dict[str, tuple[bytes, Any]] | None = None) -> tuple[bytes | None, dict[str, Any] | None]:
    """(the bytes stored at `path`, the JSON document they hold as `load` gives it): a caller that
    looks again later (under a lock) compares the bytes and skips decoding and checking what it has
    already. (None, None) when the file cannot be read.

    With a `memo` (a per-process dict, see `remember`), bytes equal to those decoded last time give
    the same document object again without decoding: the caller copies what it will change."""
    from rooms_cli.store.files import read_bytes

    try:
        blob = read_bytes(path)
    except OSError:
        return None, None
    if memo is None:
        return blob, decode(blob, version)
    kept = memo.get(str(path))
    if kept is None or kept[0] != blob:
        kept = remember(memo, str(path), (blob, decode(blob, version)))
    return blob, kept[1]


def decode(blob: bytes, version: int) -> dict[str, Any] | None:
    """The JSON document `blob` holds when its `version` is `version`; None when damaged or foreign."""
    import json

    try:
        doc = json.loads(blob)
    except (ValueError, RecursionError):  # damaged, foreign, or nested past the parser
        return None
    return doc if isinstance(doc, dict) and doc.get("version") == version else None


def save(path: StrPath, doc: dict[str, Any]) -> bytes | None:
    """Store `doc` (a dict with its `version`) at `path`, replacing what was there; never fails. The
    bytes stored (what `load_bytes` reads back), or None when nothing was."""
    import json

    from rooms_cli.store.atomic import write_cache

    blob = json.dumps(doc, separators=(",", ":")).encode()
    return blob if write_cache(path, blob) else None


def save_line(path: StrPath, line: str) -> None:
    """Store one line of local state that is not a document (a session's last-seen time) as `save`
    stores a cache: atomic, without fsync (losing it in a crash costs nothing), never failing."""
    from rooms_cli.store.atomic import write_cache

    write_cache(path, (line + "\n").encode())
