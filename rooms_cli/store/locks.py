"""File locks (filelock) with a timeout: a lock that cannot be had in time is `LockBusy` (exit 3).

Lock files sit beside what they guard as `<name>.lock` (kept out of git by the .gitignore
`rooms init` writes). Default timeout: `ROOMS_LOCK_TIMEOUT` seconds, else 10.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from rooms_cli.errors import InvalidInput, LockBusy


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


def lock_path(path: Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".lock")


@contextmanager
def locked(path: Path, timeout: float | None = None, what: str | None = None) -> Iterator[None]:
    """Hold the lock guarding `path` for the duration of the block."""
    from filelock import FileLock, Timeout

    lp = lock_path(path)
    lp.parent.mkdir(parents=True, exist_ok=True)
    wait = default_timeout() if timeout is None else timeout
    lock = FileLock(str(lp), timeout=wait)
    try:
        lock.acquire()
    except Timeout:
        raise LockBusy(
            f"{what or Path(path).name} is locked by another rooms process (waited {wait:g}s); try again"
        ) from None
    try:
        yield
    finally:
        lock.release()


def try_lock(path: Path):
    """Take the lock without waiting; return the held FileLock, or None when another holds it."""
    from filelock import FileLock, Timeout

    lp = lock_path(path)
    lp.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(lp), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        return None
    return lock
