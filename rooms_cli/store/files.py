"""Plain file access for the parts: reading a whole file, listing a folder, making and removing files.

The store is the one layer that touches files (tests/test_architecture.py checks it): logs go through
jsonl.py, replaced documents through atomic.py, locks through locks.py, caches through cache.py, and
everything else a part reads or lists goes through here. Each function keeps the plain os/pathlib
meaning, errors included (an OSError a caller turns into its own message), unless it says otherwise.
"""

from __future__ import annotations

import errno
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms a process); mypy reads the name

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from importlib.resources.abc import Traversable
    from typing import BinaryIO, TypeAlias, TypeVar

    T = TypeVar("T")
    StrPath: TypeAlias = str | os.PathLike[str]  # a path as the store takes it: a string, or a Path a caller holds


def read_bytes(path: StrPath) -> bytes:
    """The file's bytes (bytes, not text: newline translation would turn a stored "\\r" into "\\n").
    An OSError names the file (`filename`): the one handler of cli/guard.py turns it into a sentence."""
    with open(path, "rb") as handle:
        return handle.read()


def read_from(path: StrPath, offset: int, limit: int) -> bytes:
    """At most `limit` bytes of the file from `offset` (what was appended after a known end)."""
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read(limit)


def read_text(path: StrPath) -> str:
    """The file's text, decoded as UTF-8 (UnicodeDecodeError when it is not), with universal newlines
    ("\r\n" and "\r" read as "\n", as `open` does): for text a person writes. Records whose exact
    characters matter decode `read_bytes`."""
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def read_line(path: StrPath) -> str | None:
    """The file's text without surrounding whitespace (a one-line state file); None when it is missing."""
    try:
        return read_text(path).strip()
    except (FileNotFoundError, NotADirectoryError):
        return None


def names(folder: StrPath) -> list[str]:
    """The names in `folder`, sorted; none when it does not exist or is not a folder."""
    try:
        return sorted(os.listdir(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []


def entries(folder: StrPath) -> list[os.DirEntry[str]]:
    """`folder`'s entries (os.DirEntry: the file type without a stat per file), in the folder's order
    (unsorted: a board of 100 000 tasks lists them once and sorts only what it keeps).

    FileNotFoundError when the folder does not exist: a caller tells a missing folder from an empty one."""
    with os.scandir(folder) as listing:
        return list(listing)


def read_each(folder: StrPath, names: list[str], limit: int) -> Iterator[tuple[str, bytes | None]]:
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


def stat_each(folder: StrPath, names: list[str]) -> list[os.stat_result]:
    """The stat of each named file of `folder`, taken relative to the folder (half the cost of a stat by
    path: the open-task index re-stats every open log on each read). FileNotFoundError when one is gone."""
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return [os.stat(name, dir_fd=folder_fd) for name in names]
    finally:
        os.close(folder_fd)


def matching(folder: StrPath, pattern: str) -> list[str]:
    """The paths in `folder` matching the glob `pattern` (`*.md`, hidden files included), sorted; none
    when it is not a folder."""
    if not os.path.isdir(folder):
        return []
    from pathlib import Path  # pathlib's glob: its rules (hidden files match `*`), on a cold path

    return sorted(str(found) for found in Path(folder).glob(pattern))


def every_file(folder: StrPath) -> Iterator[str]:
    """Every file under `folder`, at any depth; a symlink to a folder is yielded as a file, not entered."""
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in dirnames:
            if os.path.islink(os.path.join(dirpath, name)):
                yield os.path.join(dirpath, name)
        for name in filenames:
            yield os.path.join(dirpath, name)


def fsync_dir(directory: StrPath) -> None:
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


def making_folder(path: StrPath, make: Callable[[], T]) -> T:
    """`make()`, which makes or opens a file `path` in its folder; when the folder is missing
    (FileNotFoundError), the folder is made (`make_folder`) and `make` tried once more. A file is written
    many times and its folder made once: nothing is statted or made before the first try."""
    try:
        return make()
    except FileNotFoundError:
        make_folder(os.path.dirname(path))
        return make()


def make_folder(path: StrPath) -> None:
    """Create the folder `path` and its parents, if missing. Each folder made is flushed into its parent
    (fsync_dir): a log later made durable in it (store/jsonl.py) must not vanish with its folder when
    the machine loses power. Folders are made rarely (a room, an agent's inbox): the flush costs nothing
    on the paths that write often."""
    missing = []
    folder = os.path.abspath(path)
    while not os.path.isdir(folder) and folder != os.path.dirname(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    if not missing:
        return
    os.makedirs(path, exist_ok=True)
    for made in reversed(missing):
        fsync_dir(os.path.dirname(made))


def touch(path: StrPath) -> None:
    """Create the file `path` (and its folder) empty if it is missing; an existing file keeps its content (its times are set to now)."""
    make_folder(os.path.dirname(path))
    try:
        os.utime(path)  # as Path.touch: an existing file's times are set to now
    except OSError:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o666))


def remove(path: StrPath) -> None:
    """Delete the file `path`; a file already gone is fine."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def new_temporary_folder(prefix: str) -> str:
    """A new, empty folder `<prefix><random>` in the system's temporary folder (the caller removes it)."""
    import tempfile

    return tempfile.mkdtemp(prefix=prefix)


def remove_tree(path: StrPath) -> None:
    """Delete the folder `path` and everything in it; a folder already gone is fine."""
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def move_aside(path: StrPath, keep: StrPath) -> None:
    """Rename `path` to `keep` (same folder: atomic), replacing whatever `keep` was."""
    os.replace(path, keep)


def count_lines(path: StrPath) -> int:
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
    tasks). Each file is written beside its name and linked under it whole (`link_whole`), so a process
    killed meanwhile leaves no empty or half-written file under a name, at most a temp file. All or
    nothing on an error: the files created here are removed and the OSError is raised with the path that
    failed as its `filename`. (A kill leaves the files linked until then: each one whole.)"""
    import contextlib

    written: list[str] = []
    path = ""
    try:
        for path, data in files:
            if not link_whole(path, data, durable=False):
                raise FileExistsError(errno.EEXIST, "File exists", path)
            written.append(path)
        os.sync()
        for folder in sorted({os.path.dirname(p) for p in written}):
            fsync_dir(folder)
    except OSError as exc:
        for done in written:
            with contextlib.suppress(OSError):
                os.unlink(done)
        if exc.filename is None:
            exc.filename = path
        raise


def link_whole(path: StrPath, data: bytes, *, durable: bool = True, mode: int = 0o644) -> int | None:
    """Make the file `path` holding `data` in one step: written to a temp file beside it (its folder made
    if missing), then hard-linked under its name, which is exclusive. The new file's descriptor (open for
    reading and writing; the caller closes it), or None when `path` exists already (nothing made).

    So a file exists only whole: a process killed at any instant leaves at most a temp file (`rooms
    doctor` names it), never an empty file whose name is taken. `durable`: the data is fsynced before
    the link and the folder after it — a new hard link is an entry of its folder, and until the folder
    is flushed a power cut can lose the name, so whoever reports the file made does so after both.
    `mode` is narrowed by the umask, as `open` does. A file system without hard links gets a rename
    (exclusive only under a lock the caller holds)."""
    import contextlib

    fd, tmp = making_folder(path, lambda: create_temp(path))
    linked = False
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if durable:
            os.fsync(fd)
        os.fchmod(fd, mode & ~UMASK)
        try:
            os.link(tmp, path)  # the same inode: what is known of the temp file is known of `path`
        except FileExistsError:
            return None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP) or os.path.lexists(path):
                raise
            os.rename(tmp, path)
        linked = True
        if durable:
            fsync_dir(os.path.dirname(path))
        return fd
    finally:
        if not linked:
            with contextlib.suppress(OSError):
                os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def open_for_append(path: StrPath) -> BinaryIO:
    """The file opened to append bytes (created with its folder): a child process's log of its stderr."""
    make_folder(os.path.dirname(path))
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


def create_temp(path: StrPath) -> tuple[int, str]:
    """Create and open a new, empty temp file beside `path` (`.<name>.<random>.tmp`, mode 0600): its fd and path.

    What `tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=...)` does (O_CREAT|O_EXCL, no
    symlink followed, a fresh name on a collision), without importing tempfile: that pulls in shutil,
    random and the compression modules (~5 ms), and every claim and send writes through here.
    """
    folder, name = os.path.split(os.fspath(path))
    for _ in range(100):
        tmp = os.path.join(folder, f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, _TEMP_FLAGS, 0o600), tmp
        except FileExistsError:  # 48 random bits: only a file left with this very name
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", os.path.join(folder, f".{name}.*.tmp"))
