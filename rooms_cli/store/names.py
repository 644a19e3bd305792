"""The name of the directory that holds a project's state, defined once for the whole store (a leaf:
paths.py, locks.py and changes.py all need it, and paths.py sits above the other two), and where a
path lies inside one."""

from __future__ import annotations

import os

ROOMS = ".rooms"


def inside_rooms(path: str | os.PathLike[str]) -> tuple[str, list[str]] | None:
    """(the innermost `.rooms` folder `path` lies in, the names below it down to `path`), or None when
    it lies in none. Empty and `.` parts are dropped, as Path.parts drops them."""
    text = os.fspath(path)
    parts = [part for part in text.split(os.sep) if part not in ("", ".")]
    if ROOMS not in parts:
        return None
    at = len(parts) - 1 - parts[::-1].index(ROOMS)
    head = os.sep.join(parts[: at + 1])
    return (os.sep + head if text.startswith(os.sep) else head), parts[at + 1:]
