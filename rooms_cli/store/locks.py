"""File locks with a timeout: a lock that cannot be had in time is `LockBusy` (exit 3).

Lock files live under `.rooms/run/locks/` (see lock_path; run/ is kept out of git by the .gitignore
`rooms init` writes). Default timeout: `ROOMS_LOCK_TIMEOUT` seconds, else 10.

The lock is an exclusive `flock(2)` on the lock file: the kernel lock the filelock library takes on
POSIX, taken here directly because importing filelock costs ~20 ms, a third of a `rooms task claim`
(docs/performance.md).
The kernel drops the lock when its process dies, so a killed holder never leaves a stale lock.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rooms_cli.core.errors import InvalidInput, LockBusy, storage_error
from rooms_cli.store import files, known
from rooms_cli.store.names import inside_rooms

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from rooms_cli.store.files import StrPath

FIRST_WAIT = 0.001  # a held task lock is usually released within a few ms: retry soon, then back off
LONGEST_WAIT = 0.05


def default_timeout() -> float:
    """`ROOMS_LOCK_TIMEOUT` in seconds (default 10); a value that is not a finite number ≥ 0 is an error,
    checked by every command as it starts (a negative one would make filelock wait forever)."""
    raw = os.environ.get("ROOMS_LOCK_TIMEOUT", "10")
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 <= value < float("inf"):
        raise InvalidInput(f"ROOMS_LOCK_TIMEOUT must be a number of seconds (0 or more), not {raw!r}")
    return value


_LOCK_PATHS: dict[str, str] = {}  # path -> its lock_path (a function of the string alone), per process


def lock_path(path: StrPath) -> str:
    """Where the lock guarding `path` lives: `.rooms/run/locks/<path inside .rooms>.lock`.

    Not beside the file: a board of 10 000 tasks would hold 10 000 lock files in its tasks/
    directory, and creating one changes the directory, which makes every reader of the listing
    (`rooms watch`, the board) list it again. Outside a `.rooms/` directory: `<name>.lock` beside it."""
    return known.memo(_LOCK_PATHS, os.fspath(path), _lock_path)


def _lock_path(path: str) -> str:
    found = inside_rooms(path)
    if found is not None:
        rooms_dir, inside = found
        if inside and inside[0] != "run":
            return os.path.join(rooms_dir, "run", "locks", *inside[:-1], inside[-1] + ".lock")
    return path + ".lock"


class HeldLock:
    """A lock this process holds; `release()` gives it back (once)."""

    def __init__(self, fd: int):
        self.fd: int | None = fd

    def release(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def hand_over(self) -> None:
        """Close this process's descriptor without unlocking: a child process started with the
        descriptor (`pass_fds`) shares the lock and holds it until it exits."""
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)


def _open(lock_file: StrPath) -> int:
    return files.making_folder(lock_file, lambda: os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644))


def acquire(path: StrPath, timeout: float) -> HeldLock | None:
    """Take the lock guarding `path`, waiting up to `timeout` seconds; None if another holds it."""
    fd = _open(lock_path(path))
    deadline = time.monotonic() + timeout
    wait = FIRST_WAIT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return HeldLock(fd)
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                os.close(fd)
                return None
            time.sleep(min(wait, left))
            wait = min(wait * 2, LONGEST_WAIT)
        except BaseException:
            os.close(fd)
            raise


@contextmanager
def locked(path: StrPath, timeout: float | None = None, what: str | None = None) -> Iterator[None]:
    """Hold the lock guarding `path` for the duration of the block."""
    wait = default_timeout() if timeout is None else timeout
    try:
        lock = acquire(path, wait)
    except OSError as exc:  # the lock file cannot be created: a read-only tree, a full disk
        raise storage_error(path, exc) from None
    if lock is None:
        raise LockBusy(f"{what or os.path.basename(path)} is locked by another rooms process (waited {wait:g}s); try again")
    try:
        yield
    finally:
        lock.release()


def try_lock(path: StrPath) -> HeldLock | None:
    """Take the lock without waiting; the held lock, or None when another holds it."""
    return acquire(path, 0)


# A liveness lock (`lock_file` itself, e.g. a spawn's `run/spawns/<id>.lock`) is held by a process for
# as long as it runs: the kernel drops it when the process dies, however it dies.

def hold_liveness(lock_file: StrPath) -> HeldLock:
    """Take the liveness lock, waiting for it; pass its `fd` to the child process that is to hold it."""
    fd = _open(lock_file)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return HeldLock(fd)


def is_alive(lock_file: StrPath) -> bool:
    """Whether a process holds the liveness lock (is still running)."""
    fd = _open(lock_file)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing also drops the lock taken here
    return False


def wait_until_released(lock_file: StrPath) -> None:
    """Block until no process holds the liveness lock (in the kernel: no polling)."""
    fd = _open(lock_file)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
