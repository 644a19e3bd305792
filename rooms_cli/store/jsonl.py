"""Append-only JSONL logs: one whole JSON object a line.

Writers append one or more whole lines with a single `write` under the file's lock, then fsync.
Each record gets its hybrid-logical-clock stamp (`hlc`, store/clock.py) as it is written, seeded from
the stamps in the file's last 64 KiB (never a rescan of the whole file); a record that has one (copied
from another log) keeps it. Readers replay in the one order of store/order.py.

The last line of a file may lack its newline. **A line that parses is kept**: a record that is whole
JSON is complete (every line is one object, and no prefix of an object's text is itself JSON), so
readers read it and the next append finishes it with a newline (in the same write as its own lines).
Only a last line that does not parse is torn (a crash cut it, or a writer is finishing it): readers
leave it out, and the next append cuts it off (reported on stderr) so a new line is never glued to it.
A hand edit that dropped the final newline therefore loses nothing, and no acknowledged record's
number is reused.

Readers parse from bytes line by line; a bad line in the middle is reported once per process on
stderr, naming file and line, and skipped; every other line is kept.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable

from rooms_cli.core import terminal
from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.core.text import count
from rooms_cli.store import changes, clock, conflicts, files, known, order
from rooms_cli.store.locks import locked

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.store.files import StrPath

_warned: set[tuple[str, int, str]] = set()


def dumps(record: dict[str, Any]) -> str:
    """One record as one line (no newline inside: JSON escapes them).

    NaN and infinities are refused (InvalidInput): they are not JSON, and other tools (jq, git
    merge drivers, JavaScript) could not read the log back.
    """
    try:
        return json.dumps(record, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)
    except ValueError:
        from rooms_cli.core.errors import InvalidInput

        raise InvalidInput(f"{non_finite_field(record)} is not a finite number (NaN or infinity); use a finite number") from None


def non_finite_field(value: Any, where: str = "a field") -> str:
    """The name of the (first) field of `value` holding NaN or an infinity, for error messages."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return where
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = non_finite_field(item, f"field {key!r}" if isinstance(key, str) else where)
        if found:
            return found
    return ""


def warn(path: StrPath, lineno: int, reason: str, *, from_end: bool = False) -> None:
    key = (str(path), -lineno if from_end else lineno, reason)
    if key in _warned:
        return
    _warned.add(key)
    where = f"line {lineno} from the end" if from_end else f"line {lineno}"
    terminal.warn(f"{path}: {where} {reason}; skipped, the other lines are kept (rooms doctor lists them)")


def _finish_last_line(fd: int, path: StrPath) -> bytes:
    """Make the file end at a line's end before an append: b"\\n" to write first when its last line is
    whole JSON without its newline (kept, finished); a torn last line (one that does not parse) is cut off
    and said on stderr; b"" when the file ends with a newline or is empty."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return b""
    # find the start of the unfinished line
    block = 4096
    pos = size
    cut = 0
    while pos > 0:
        start = max(0, pos - block)
        chunk = os.pread(fd, pos - start, start)
        idx = chunk.rfind(b"\n")
        if idx >= 0:
            cut = start + idx + 1
            break
        pos = start
    if _whole(os.pread(fd, size - cut, cut)):
        return b"\n"
    os.ftruncate(fd, cut)
    terminal.warn(f"{path}: removed an unfinished last line ({count(size - cut, 'byte')}) left by a crash")
    return b""


def _repair_torn_tail(fd: int, path: StrPath) -> None:
    """`_finish_last_line`, the newline written at once (for a writer that appends raw lines itself)."""
    finish = _finish_last_line(fd, path)
    if finish:
        os.write(fd, finish)


def _whole(raw: bytes) -> bool:
    """Whether a line is whole JSON (so complete, whatever is missing after it)."""
    try:
        json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return False
    return True


def append(path: StrPath, record: dict[str, Any], *, timeout: float | None = None) -> dict[str, Any]:
    """Append one record as a whole line, under the file's lock, fsynced; the record as written."""
    return append_many(path, [record], timeout=timeout)[0]


def append_many(path: StrPath, records: Iterable[dict[str, Any]], *, timeout: float | None = None,
                lock: bool = True) -> list[dict[str, Any]]:
    """Append records in one write, each stamped (`hlc`); return them as written. Pass `lock=False`
    only when the caller already holds the lock.

    A failed append (a full disk, a quota, a read-only file system) is a StorageError naming the
    file, which is left as it was: cut back to its old length, or never made if this append would have
    made it (`_create_whole`).
    """
    from rooms_cli.core.errors import storage_error

    records = list(records)
    lines = [dumps(r) for r in records]  # refuses what is not JSON before the file is touched
    if not lines:
        return []
    try:
        if lock:
            with locked(path, timeout):
                return _append_bytes(path, records, lines)
        return _append_bytes(path, records, lines)
    except OSError as exc:
        raise storage_error(path, exc) from None


_HLC_IN_LINE = re.compile(rb'"hlc": "([^"\\]{1,64})"')
_SEED_BYTES = 64 * 1024


def _seed_clock(fd: int, size: int, known: tuple[int, str] | None = None) -> str:
    """Let the clock see the latest stamp at the end of the log (what this clone last wrote or merged):
    the last _SEED_BYTES, or only what was appended after the end `known` names (with the latest stamp
    before it). The latest stamp seen ("" for none)."""
    end, latest = known or (0, "")
    start = max(0, size - _SEED_BYTES, end)
    if start < size:
        tail = os.pread(fd, size - start, start)
        found = [m.group(1).decode("ascii", "replace") for m in _HLC_IN_LINE.finditer(tail)]
        latest = max([latest, *found])
    if latest:
        clock.hlc_see(latest)
    return latest


# path -> (the log's seal (store/known.seal) just after this process's last append to it, the latest
# stamp before that end)
_KNOWN: dict[str, tuple[list[Any], str]] = {}


def _known_end(fd: int, key: str) -> tuple[int, str] | None:
    """(end, latest stamp) of this process's own last append to the log, when the file still carries
    the seal noted then (the same file, only appended to since): the bytes before that end were checked
    for conflict markers and the latest stamp among them is known. None otherwise.

    A process that appends again (an MCP session sending to one inbox, a group's fan-out) then checks
    and seeds from only what others appended meanwhile: a 17 MB inbox was searched whole for conflict
    markers (~8 ms) and its last 64 KiB scanned for stamps on every append."""
    kept = _KNOWN.get(key)
    if kept is None or known.seal_fd(fd, kept[0][1]) != kept[0]:
        return None
    return kept[0][1], kept[1]


def _note_known(fd: int, key: str, latest: str) -> None:
    known.remember(_KNOWN, key, (known.seal_fd(fd, os.fstat(fd).st_size), latest))


def _sorted_keys(record: dict[str, Any]) -> bool:
    keys = list(record)
    return len(keys) > 1 and all(a < b for a, b in zip(keys, keys[1:], strict=False))


def _stamped(records: list[dict[str, Any]], lines: list[str], after: str = "") -> tuple[list[dict[str, Any]], bytes]:
    """The records stamped (`hlc`), each after `after` (the log's latest stamp) and after the one before it."""
    written, out = [], []
    for record, line in zip(records, lines, strict=True):
        stamp = record.get("hlc")
        if isinstance(stamp, str) and stamp:
            clock.hlc_see(stamp)
            written.append(record)
            out.append(line)
            continue
        stamp = after = clock.hlc_stamp(after)
        done = {**record, "hlc": stamp}
        if "hlc" in record or _sorted_keys(record):  # a bad stamp replaced; a record in key order stays so
            line = dumps(dict(sorted(done.items())) if _sorted_keys(record) else done)
        else:
            line = f'{line[:-1]}, "hlc": "{stamp}"}}' if record else f'{{"hlc": "{stamp}"}}'
        written.append(done)
        out.append(line)
    return written, "".join(line + "\n" for line in out).encode("utf-8")


def _append_bytes(path: StrPath, records: list[dict[str, Any]], lines: list[str]) -> list[dict[str, Any]]:
    try:  # a log is appended to many times and made once: no stat or mkdir before the open
        fd = os.open(path, os.O_RDWR | os.O_APPEND)
    except FileNotFoundError:
        made = _create_whole(path, records, lines)
        if made is not None:
            return made
        fd = os.open(path, os.O_RDWR | os.O_APPEND)  # another process made it meanwhile
    size = os.fstat(fd).st_size
    key = str(path)
    try:
        known = _known_end(fd, key)
        _refuse_unresolved_merge(fd, path, known[0] if known else 0)
        finish = _finish_last_line(fd, path)
        latest = _seed_clock(fd, os.fstat(fd).st_size, known)
        written, data = _stamped(records, lines, latest)
        data = finish + data
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
        _note_known(fd, key, max([latest, *(str(r["hlc"]) for r in written)]))
    except OSError:
        _KNOWN.pop(key, None)
        _undo_append(fd, path, size)
        raise
    finally:
        os.close(fd)
    changes.note(path)
    return written


def _create_whole(path: StrPath, records: list[dict[str, Any]], lines: list[str]) -> list[dict[str, Any]] | None:
    """Make the log with its first lines in one step (store/files.link_whole: written beside it, fsynced,
    linked under its name, the folder flushed); None when another process made it meanwhile, to append to.

    So a log exists only with its first records in it: a process killed at its first write leaves at
    most a temp file (doctor names it), never an empty log whose name is taken — `room create` saying
    the room exists while `room show` found none, an empty task log without its create event. And the
    command that made it says so only once the log's name is on disk, not only its bytes.
    """
    written, data = _stamped(records, lines)
    fd = files.link_whole(path, data)
    if fd is None:
        return None
    try:
        _note_known(fd, str(path), max(str(r["hlc"]) for r in written))
    finally:
        os.close(fd)
    changes.note(path)
    return written


def _refuse_unresolved_merge(fd: int, path: StrPath, known: int = 0) -> None:
    """Never append to a file git left with conflict markers: say so (MergeConflict) instead.

    A memory-mapped search (~2 GB/s) of the whole file, or of what follows `known` (_known_end).
    """
    import mmap

    size = os.fstat(fd).st_size
    if size <= known:
        return
    with mmap.mmap(fd, size, access=mmap.ACCESS_READ) as view:
        if view.find(b"<<<<<<<", max(known - 6, 0)) < 0:
            return
        data = view[:]
    conflicts.check(path, data)


def _undo_append(fd: int, path: StrPath, size: int) -> None:
    """Leave the log as it was before a failed append: no partial line."""
    try:
        os.ftruncate(fd, size)
    except OSError:
        pass  # the next append repairs a torn tail; readers skip it meanwhile


@dataclass
class Scan:
    """The result of reading a log: good records, bad lines, and where the whole lines end."""

    records: list[dict[str, Any]] = field(default_factory=list)
    bad: list[tuple[int, str]] = field(default_factory=list)
    torn: bool = False  # the last line does not parse and has no newline: left out
    unfinished: bool = False  # the last line parses but has no newline: kept, the next append finishes it
    end: int = 0  # byte offset just after the last line read (whole, or parsed without its newline)


def parse_bytes(data: bytes, *, first_lineno: int = 1) -> Scan:
    """Parse JSONL bytes; a last line without its newline is kept when it parses (`unfinished`), else
    reported as `torn`, not as bad."""
    scan = Scan()
    pos = 0
    lineno = first_lineno
    length = len(data)
    while pos < length:
        nl = data.find(b"\n", pos)
        if nl < 0:
            if not data[pos:].strip():
                break
            if not _whole(data[pos:]):
                scan.torn = True
                break
            scan.unfinished = True
            nl = length
        raw = data[pos:nl]
        pos = min(nl + 1, length)
        scan.end = pos
        if raw.strip():
            try:
                obj = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                scan.bad.append((lineno, conflicts.MARKER if conflicts.is_marker(raw) else "is not valid JSON"))
            else:
                if isinstance(obj, dict):
                    scan.records.append(obj)
                else:
                    scan.bad.append((lineno, "is not a JSON object"))
        lineno += 1
    return scan


def _read_from(path: StrPath, offset: int) -> bytes:
    """The file's bytes from `offset`, with raw os calls: a board read opens thousands of small logs,
    and a buffered file object costs about half again as much per file."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        if offset:
            os.lseek(fd, offset, os.SEEK_SET)
        chunks = []
        want = max(size - offset, 0) + 1  # one byte more: the file may have grown since fstat
        while True:
            chunk = os.read(fd, want)
            chunks.append(chunk)
            if len(chunk) < want:  # a regular file reads short only at its end
                break
            want = 1 << 20
        return b"".join(chunks) if len(chunks) != 1 else chunks[0]
    finally:
        os.close(fd)


def scan(path: StrPath, offset: int = 0) -> Scan:
    """Read a log from byte `offset` without printing anything (a missing file is empty)."""
    from rooms_cli.core.errors import InvalidData

    try:
        data = _read_from(path, offset)
    except FileNotFoundError:
        return Scan(end=offset)
    except IsADirectoryError:
        raise InvalidData(f"{path} is a directory, expected a JSONL file") from None
    except OSError as exc:
        raise InvalidData(f"cannot read {path}: {exc.strerror}") from None
    result = parse_bytes(data)
    _refuse_markers(path, result)
    result.end += offset
    return result


def appended(path: StrPath, seal: list[Any]) -> tuple[list[int], list[Any], Scan] | None:
    """What was appended to the log at `path` after the end `seal` names (store/known.seal), when the
    file still carries that seal (the same file, only appended to since): (its identity before the read,
    its seal at the end of the whole lines read, those lines parsed; a conflict marker line is a bad
    line there, not an error). None when the file does not carry the seal or cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        stat = os.fstat(fd)
        end = seal[1]
        if known.seal_fd(fd, end) != seal:
            return None
        result = parse_bytes(os.pread(fd, stat.st_size - end, end))
        return known.identity_of(stat), known.seal_fd(fd, end + result.end), result
    finally:
        os.close(fd)


def _refuse_markers(path: StrPath, result: Scan, *, from_end: int | None = None) -> None:
    """A log with a git conflict marker line is an unresolved merge: one clear error, not skipped lines."""
    for lineno, reason in result.bad:
        if reason == conflicts.MARKER:
            conflicts.refuse(path, lineno if from_end is None else from_end - lineno + 1, from_end=from_end is not None)


def read(path: StrPath) -> list[dict[str, Any]]:
    """All good records of a log; bad lines are reported on stderr (once) and skipped."""
    result = scan(path)
    for lineno, reason in result.bad:
        warn(path, lineno, reason)
    return result.records


def in_order(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`records` in the one order of every log (store/order.py): stamp, then id; each record once."""
    return order.ordered(records)


def read_ordered(path: StrPath) -> list[dict[str, Any]]:
    """`read` in the one order."""
    return order.ordered(read(path))


def tail(path: StrPath, count: int) -> list[dict[str, Any]]:
    """The last `count` good records, reading backwards from the end (cost independent of file size)."""
    if count <= 0:
        return []
    from rooms_cli.core.errors import InvalidData

    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return []
    except IsADirectoryError:
        raise InvalidData(f"{path} is a directory, expected a JSONL file") from None
    except OSError as exc:
        raise InvalidData(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        size = handle.seek(0, os.SEEK_END)
        block = 64 * 1024
        pos = size
        data = b""
        while pos > 0:
            start = max(0, pos - block)
            handle.seek(start)
            data = handle.read(pos - start) + data
            pos = start
            if data.count(b"\n") > count + 1:
                break
        if pos > 0:
            # drop the first (possibly partial) line: it starts before the bytes we read
            data = data[data.find(b"\n") + 1 :]
    result = parse_bytes(data)
    # line numbers counted from the end: counting from the start would mean reading the whole file
    lines = data.count(b"\n")
    _refuse_markers(path, result, from_end=lines)
    for lineno, reason in result.bad:
        warn(path, lines - lineno + 1, reason, from_end=True)
    return result.records[-count:]
