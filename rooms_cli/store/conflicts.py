"""Unresolved git merges: conflict markers left in a file under `.rooms/`.

Every reader in the store (JSONL logs, JSON, YAML, markdown with frontmatter) checks the bytes it
read with `check`, so a file git could not merge is one clear error naming it — `MergeConflict`
(code `merge_conflict`, exit 1) — instead of a parse error, a crash, or lines silently skipped.
A conflict is a `<<<<<<< ` line followed later by a `=======` line and a `>>>>>>> ` line, so a
markdown heading underlined with `=======` is not mistaken for one.
"""

from __future__ import annotations

import re
from pathlib import Path

_START = re.compile(rb"^<{7}(?: |\r?$)", re.M)
_MIDDLE = re.compile(rb"^={7}\r?$", re.M)
_END = re.compile(rb"^>{7}(?: |\r?$)", re.M)


def conflict_line(data: bytes) -> int | None:
    """The line number (1-based) of the first conflict block in `data`, or None."""
    if b"<<<<<<<" not in data:  # the fast path for every ordinary read
        return None
    for start in _START.finditer(data):
        middle = _MIDDLE.search(data, start.end())
        if middle and _END.search(data, middle.end()):
            return data.count(b"\n", 0, start.start()) + 1
    return None


def message(path: Path | str, line: int) -> str:
    return (
        f"{path} has an unresolved git merge (conflict markers from line {line}): edit it to keep both sides' "
        f"lines, then `git add` it (rooms doctor shows every such file)"
    )


def check(path: Path | str, data: bytes) -> None:
    """Raise MergeConflict naming `path` when `data` holds an unresolved conflict."""
    line = conflict_line(data)
    if line is not None:
        from rooms_cli.errors import MergeConflict

        raise MergeConflict(message(path, line), data={"file": str(path), "line": line})


def check_text(path: Path | str, text: str) -> None:
    if "<<<<<<<" in text:
        check(path, text.encode("utf-8", "surrogatepass"))
