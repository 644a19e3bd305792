"""Following files as they change: a log read by byte offset, whole lines only, replaced and truncated
files re-read safely; a JSON document replaced whole, read again when it changed.

A log (JSONL) is read from the byte offset just after the last whole line already read; a line
without its newline yet is held back and read again, complete, next time. The file is read again
from the start when it was replaced (new inode: rehydrate, compaction via os.replace), truncated
(smaller than the offset), or rewritten in place (the bytes just before the offset changed). On such
a re-read a record already emitted is recognised and skipped, so nothing is printed twice and nothing
is lost: by its `id` in logs whose records each have one (transcripts, inboxes), else by its content
and how many identical records came before it (board and group events; a group's broadcast id is
shared by its replies).

A snapshot (a spawn's JSON record, replaced whole) is read again when its inode, size or mtime
changes, and the two versions are compared to make events.
"""

from __future__ import annotations

import json
import os
import time
import zlib
from collections import Counter
from collections.abc import Iterator

from rooms_cli.core import terminal
from rooms_cli.store import files, jsonl

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any, BinaryIO


RACY_S = 2.0  # seconds: a file changed less than this ago may change again without its mtime moving (coarse clocks)

CHUNK = 1 << 20
ANCHOR = 4096  # bytes before the offset (the last lines read) that must be unchanged for an append-only read


class LogFile:
    """One append-only JSONL file, followed by byte offset."""

    def __init__(self, path: str, id_field: str | None = "id"):
        self.path = path
        self.id_field = id_field  # a field unique to each record, when the log has one
        self.identity: tuple[int, int] | None = None
        self.offset = 0
        self.anchor = b""
        self.lineno = 1  # line number at `offset`, for warnings about bad lines
        self.seen_ids: set[str] = set()
        self.seen_content: set[tuple[bytes, int]] = set()
        self.occurrences: Counter[bytes] = Counter()
        self.bad_lines: list[tuple[int, str]] = []  # (line number, why) of the lines skipped since the start
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

    def resume(self, seal: list[Any], lineno: int, appended: bool = True) -> bool:
        """Start at a position a previous reader of this log kept: `seal` is [inode, offset, CRC-32 of the
        ANCHOR bytes before the offset] (the `seal` property then). True when the file still has it
        (the same file, at most appended to since): the reader is then at that offset and line number,
        and the bytes after it are its next read (`appended` False: only if there are none). False leaves
        the reader as it was."""
        inode, end, crc = seal
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return False
        try:
            stat = os.fstat(fd)
            if stat.st_ino != inode or stat.st_size < end or (stat.st_size > end and not appended):
                return False
            anchor = os.pread(fd, min(end, ANCHOR), end - min(end, ANCHOR))
        except OSError:
            return False
        finally:
            os.close(fd)
        if zlib.crc32(anchor) != crc:
            return False
        self.identity, self.offset, self.anchor, self.lineno = (stat.st_dev, stat.st_ino), end, anchor, lineno
        if stat.st_size == end:  # nothing appended: the next look needs no open (unchanged())
            self._stat = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
        return True

    @property
    def seal(self) -> list[Any] | None:
        """Where this reader is, for `resume` (None before the file was read)."""
        if self.identity is None:
            return None
        return [self.identity[1], self.offset, zlib.crc32(self.anchor)]

    def read_new(self) -> list[dict[str, Any]]:
        """The records that are whole now and were never returned before, in file order."""
        return [record for chunk in self.read_chunks() for record in chunk]

    def read_chunks(self) -> Iterator[list[dict[str, Any]]]:
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
                self.occurrences, self.bad_lines = Counter(), []
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

    def _take(self, lines: bytes) -> list[dict[str, Any]]:
        """Parse whole lines just read at `offset`; move past them; return the records never seen."""
        scan = jsonl.parse_bytes(lines, first_lineno=self.lineno)
        for lineno, reason in scan.bad:
            jsonl.warn(self.path, lineno, reason)
        self.bad_lines += scan.bad
        self.offset += len(lines)
        self.lineno += lines.count(b"\n")
        self.anchor = (self.anchor + lines[-ANCHOR:])[-ANCHOR:]
        return [record for record in scan.records if self._first_time(record)]

    def _anchored(self, handle: BinaryIO) -> bool:
        if not self.anchor:
            return True
        handle.seek(self.offset - len(self.anchor))
        return handle.read(len(self.anchor)) == self.anchor

    def _first_time(self, record: dict[str, Any]) -> bool:
        rid = record.get(self.id_field) if self.id_field else None
        if isinstance(rid, str) and rid:
            if rid in self.seen_ids:
                return False
            self.seen_ids.add(rid)
            return True
        digest = _digest(json.dumps(record, sort_keys=True).encode())
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


def _digest(data: bytes) -> bytes:
    """A record's 12-byte fingerprint; hashlib (~3 ms: its OpenSSL set-up) is imported on the first record
    without an id, not by every `rooms watch` (a kept baseline reads no record: watch/baseline.py)."""
    from hashlib import blake2b

    return blake2b(data, digest_size=12).digest()


class SnapshotFile:
    """One JSON document replaced whole (os.replace); remembers the last version read."""

    def __init__(self, path: str):
        self.path = path
        self.signature: tuple[int, ...] | None = None
        self.data: dict[str, Any] | None = None

    def read_changed(self) -> tuple[dict[str, Any] | None, dict[str, Any]] | None:
        """(previous version, new version) when the document changed, else None."""
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        signature = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
        if signature == self.signature:
            return None
        try:
            data = json.loads(files.read_bytes(self.path))
        except (OSError, ValueError):
            return None  # being written by a non-atomic writer: read it again next time
        self.signature = signature
        if not isinstance(data, dict) or data == self.data:
            return None
        before, self.data = self.data, data
        return before, data
