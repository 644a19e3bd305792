"""What a process knows of the files it read, and how it checks that knowledge before using it.

- **Identity** (`identity_of`): [dev, inode, size, mtime_ns] of a stat; any write changes it.
- **Seal** (`seal`, `seal_fd`): [inode, end, CRC-32 of the SEAL_BYTES before end] of an append-only file
  read up to `end`; a later read that finds the same seal knows the file is the one read, only appended
  to since.
- **Memo** (`remember`): a bounded per-process dict of what was derived from files or strings.

A leaf module (it imports nothing of rooms_cli): store/jsonl.py and store/paths.py use it, and
store/cache.py, whose writer imports jsonl, builds on it.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any, TypeVar

    K = TypeVar("K")
    V = TypeVar("V")


def identity_of(st: os.stat_result) -> list[int]:
    """The identity of the file `st` is the stat of (store/cache.py says what it keys)."""
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns]


SEAL_BYTES = 4096  # bytes before the offset whose CRC-32 a seal keeps


def seal(path: Path | str, end: int) -> list[Any]:
    """[inode, `end`, CRC-32 of the SEAL_BYTES before `end`] of an append-only file read up to `end`: a
    later read that finds the same seal knows the file is the one read, only appended to since (a file
    git wrote anew has another inode, or the same inode number reused, which the CRC tells). A missing
    file seals as [None, end, 0], one shorter than `end` as [inode, end, None] (no cursor's seal)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return [None, end, 0]
    try:
        return seal_fd(fd, end)
    finally:
        os.close(fd)


def seal_fd(fd: int, end: int) -> list[Any]:
    """`seal` of the file open at `fd` (an appender holding its log open)."""
    import zlib

    stat = os.fstat(fd)
    if stat.st_size < end:
        return [stat.st_ino, end, None]
    start = max(end - SEAL_BYTES, 0)
    return [stat.st_ino, end, zlib.crc32(os.pread(fd, end - start, start))]


MEMO_MAX = 4096  # entries a per-process memo keeps before it starts over


def memo(memo: dict[K, V], key: K, compute: Callable[[K], V], cap: int = MEMO_MAX) -> V:
    """`memo[key]`, or `compute(key)` remembered there (`remember`) the first time: for what depends on the
    key alone (a path's lock, its journal, a Path built from checked segments)."""
    try:
        return memo[key]
    except KeyError:
        return remember(memo, key, compute(key), cap)


def remember(memo: dict[K, V], key: K, value: V, cap: int = MEMO_MAX) -> V:
    """Keep `value` under `key` in `memo`, a per-process dict of what was derived from files or strings
    (a session's decoded index, replayed logs, sealed appends, checked paths, inbox numbers): at `cap`
    entries it starts over, so a long session holds a bounded amount. What a memo holds is checked
    against the files before use (a seal, a stat, the bytes), never trusted on its own."""
    if len(memo) >= cap and key not in memo:
        memo.clear()
    memo[key] = value
    return value
