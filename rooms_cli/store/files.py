"""Plain file access for the parts: reading a whole file, listing a folder, making and removing files.

The store is the one layer that touches files (tests/test_architecture.py checks it): logs go through
jsonl.py, replaced documents through atomic.py, locks through locks.py, caches through cache.py, and
everything else a part reads or lists goes through here. Each function keeps the plain os/pathlib
meaning, errors included (an OSError a caller turns into its own message), unless it says otherwise.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms a process); mypy reads the name

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from importlib.resources.abc import Traversable
    from typing import BinaryIO, TypeVar


    T = TypeVar("T")


def read_bytes(path: Path | str) -> bytes:
    """The file's bytes (bytes, not text: newline translation would turn a stored "\\r" into "\\n").
    An OSError names the file (`filename`): the one handler of cli/guard.py turns it into a sentence."""
    with open(path, "rb") as handle:
        return handle.read()


def read_from(path: Path | str, offset: int, limit: int) -> bytes:
    """At most `limit` bytes of the file from `offset` (what was appended after a known end)."""
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read(limit)


def read_text(path: Path | str) -> str:
    """The file's text, decoded as UTF-8 (UnicodeDecodeError when it is not), with universal newlines
    ("\r\n" and "\r" read as "\n", as `open` does): for text a person writes. Records whose exact
    characters matter decode `read_bytes`."""
    return Path(path).read_text("utf-8")


def read_line(path: Path | str) -> str | None:
    """The file's text without surrounding whitespace (a one-line state file); None when it is missing."""
    try:
        return read_text(path).strip()
    except (FileNotFoundError, NotADirectoryError):
        return None


def names(folder: Path | str) -> list[str]:
    """The names in `folder`, sorted; none when it does not exist or is not a folder."""
    try:
        return sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []


def entries(folder: Path | str) -> list[os.DirEntry[str]]:
    """`folder`'s entries (os.DirEntry: the file type without a stat per file), in the folder's order
    (unsorted: a board of 100 000 tasks lists them once and sorts only what it keeps).

    FileNotFoundError when the folder does not exist: a caller tells a missing folder from an empty one."""
    with os.scandir(folder) as listing:
        return list(listing)


def read_each(folder: Path | str, names: list[str], limit: int) -> Iterator[tuple[str, bytes | None]]:
    """(name, bytes) of each named file of `folder`, opened relative to the folder (no path walk per
    file: a fresh clone's board reads 100 000 logs) in one read of up to `limit` bytes; None for a file
    that cannot be read or holds `limit` bytes or more."""
    folder_fd = os.open(folder, os.O_RDONLY)
    try:
        for name in names:
            try:
                fd = os.open(name, os.O_RDONLY, dir_fd=folder_fd)
            except OSError:
                yield name, None
                continue
            try:
                data: bytes | None = os.read(fd, limit)
            except OSError:
                data = None
            finally:
                os.close(fd)
            yield name, data if data is None or len(data) < limit else None
    finally:
        os.close(folder_fd)


def stat_each(folder: Path | str, names: list[str]) -> list[os.stat_result]:
    """The stat of each named file of `folder`, taken relative to the folder (half the cost of a stat by
    path: the open-task index re-stats every open log on each read). FileNotFoundError when one is gone."""
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return [os.stat(name, dir_fd=folder_fd) for name in names]
    finally:
        os.close(folder_fd)


def matching(folder: Path, pattern: str) -> list[Path]:
    """The paths in `folder` matching the glob `pattern` (`*.md`), sorted; none when it is not a folder."""
    return sorted(Path(folder).glob(pattern)) if os.path.isdir(folder) else []


def every_file(folder: Path) -> Iterator[Path]:
    """Every file under `folder`, at any depth; a symlink to a folder is yielded as a file, not entered."""
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        base = Path(dirpath)
        for name in dirnames:
            if (base / name).is_symlink():
                yield base / name
        for name in filenames:
            yield base / name


def fsync_dir(directory: Path) -> None:
    """Flush a folder's entries (a file made or renamed in it) to disk; a folder that cannot be opened
    or flushed is left as it is."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def making_folder(path: Path | str, make: Callable[[], T]) -> T:
    """`make()`, which makes or opens a file `path` in its folder; when the folder is missing
    (FileNotFoundError), the folder is made and `make` tried once more. A file is written many times and
    its folder made once: nothing is statted or made before the first try."""
    try:
        return make()
    except FileNotFoundError:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        return make()


def make_folder(path: Path) -> None:
    """Create the folder `path` and its parents, if missing."""
    Path(path).mkdir(parents=True, exist_ok=True)


def touch(path: Path) -> None:
    """Create the file `path` (and its folder) empty if it is missing; an existing file is left as it is."""
    make_folder(Path(path).parent)
    Path(path).touch(exist_ok=True)


def remove(path: Path | str) -> None:
    """Delete the file `path`; a file already gone is fine."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def new_temporary_folder(prefix: str) -> Path:
    """A new, empty folder `<prefix><random>` in the system's temporary folder (the caller removes it)."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix=prefix))


def remove_tree(path: Path) -> None:
    """Delete the folder `path` and everything in it; a folder already gone is fine."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def move_aside(path: Path, keep: Path) -> None:
    """Rename `path` to `keep` (same folder: atomic), replacing whatever `keep` was."""
    os.replace(path, keep)


def count_lines(path: Path) -> int:
    """How many lines the file has (0 when it is missing), reading it a block at a time."""
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return 0
    with handle:
        return sum(1 for _ in handle)


def create_all(files: Iterable[tuple[str, bytes]]) -> None:
    """Create each new file (`(path, data)`; none may exist) and make them durable together: one sync
    for all of them and one fsync per folder, instead of two fsyncs per file (an import of 10 000
    tasks). All or nothing: on a failure the files created here are removed and the OSError is raised
    with the path that failed as its `filename`."""
    import contextlib
    import errno


    written: list[str] = []
    path = ""
    try:
        for path, data in files:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            written.append(path)
            try:
                if os.write(fd, data) != len(data):  # a short write: the disk filled up
                    raise OSError(errno.ENOSPC, "No space left on device", path)
            finally:
                os.close(fd)
        os.sync()
        for folder in sorted({os.path.dirname(p) for p in written}):
            fsync_dir(Path(folder))
    except OSError as exc:
        for done in written:
            with contextlib.suppress(OSError):
                os.unlink(done)
        if exc.filename is None:
            exc.filename = path
        raise


def open_for_append(path: Path) -> BinaryIO:
    """The file opened to append bytes (created with its folder): a child process's log of its stderr."""
    make_folder(Path(path).parent)
    return open(path, "ab")


def process_start(pid: int) -> str | None:
    """The kernel's start time of process `pid` (tells a reused pid from the process it was), when
    /proc has it (Linux); None otherwise."""
    try:
        data = read_bytes(f"/proc/{pid}/stat")
        return data.rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def _packaged(parts: tuple[str, ...]) -> Traversable:
    from importlib import resources

    resource = resources.files("rooms_cli")
    for part in parts:
        resource = resource / part
    return resource


def package_text(*parts: str) -> str:
    """A text file shipped inside the rooms_cli package (`data`, `rooms.yaml.example`)."""
    return _packaged(parts).read_text("utf-8")


def package_names(*parts: str, folders: bool = False) -> list[str]:
    """The names in a folder shipped inside the rooms_cli package (only its folders' with `folders`), sorted."""
    return sorted(item.name for item in _packaged(parts).iterdir() if not folders or item.is_dir())


def _read_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# read once, at import (single-threaded): os.umask can only be read by setting it
UMASK = _read_umask()

_TEMP_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def create_temp(path: Path) -> tuple[int, str]:
    """Create and open a new, empty temp file beside `path` (`.<name>.<random>.tmp`, mode 0600): its fd and path.

    What `tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=...)` does (O_CREAT|O_EXCL, no
    symlink followed, a fresh name on a collision), without importing tempfile: that pulls in shutil,
    random and the compression modules (~5 ms), and every claim and send writes through here.
    """
    for _ in range(100):
        tmp = os.path.join(path.parent, f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o600), tmp
        except FileExistsError:  # 48 random bits: only a file left with this very name
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", os.path.join(path.parent, f".{path.name}.*.tmp"))
