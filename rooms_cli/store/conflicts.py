"""Unresolved git merges: conflict markers left in a file under `.rooms/`.

Every reader in the store (JSONL logs, JSON, YAML, markdown with frontmatter) checks the bytes it
read with `check`, so a file git could not merge is one clear error naming it — `MergeConflict`
(code `merge_conflict`, exit 1) — instead of a parse error, a crash, or lines silently skipped.
A conflict is a `<<<<<<< ` line followed later by a `=======` line and a `>>>>>>> ` line, so a
markdown heading underlined with `=======` is not mistaken for one.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import NoReturn

    from rooms_cli.store.files import StrPath


# patterns compiled on first use (re's cache): a file with no marker never needs them (~0.2 ms a process)
_START = rb"(?m)^<{7}(?: |\r?$)"
_MIDDLE = rb"(?m)^={7}\r?$"
_END = rb"(?m)^>{7}(?: |\r?$)"


def conflict_line(data: bytes) -> int | None:
    """The line number (1-based) of the first conflict block in `data`, or None."""
    if b"<<<<<<<" not in data:  # the fast path for every ordinary read
        return None
    for start in re.finditer(_START, data):
        middle = re.compile(_MIDDLE).search(data, start.end())
        if middle and re.compile(_END).search(data, middle.end()):
            return data.count(b"\n", 0, start.start()) + 1
    return None


MARKER = "is a git conflict marker (an unresolved git merge)"
_MARKER_LINE = rb"^(<{7}|>{7})(?: |\r?$)|^={7}\r?$"


def is_marker(raw: bytes) -> bool:
    """Is this one line of a log a conflict marker line?"""
    return raw[:1] in (b"<", b"=", b">") and bool(re.match(_MARKER_LINE, raw))


def message(path: StrPath, line: int, *, from_end: bool = False) -> str:
    where = f"line {line} from the end" if from_end else f"line {line}"
    return (
        f"{path} has an unresolved git merge (conflict markers at {where}): edit it to keep both sides' "
        f"lines without the marker lines, then `git add` it (rooms doctor lists every such file)"
    )


def refuse(path: StrPath, line: int, *, from_end: bool = False) -> NoReturn:
    from rooms_cli.core.errors import MergeConflict

    raise MergeConflict(message(path, line, from_end=from_end), data={"file": str(path), "line": line})


def check(path: StrPath, data: bytes) -> None:
    """Raise MergeConflict naming `path` when `data` holds an unresolved conflict."""
    line = conflict_line(data)
    if line is not None:
        refuse(path, line)


def check_text(path: StrPath, text: str) -> None:
    if "<<<<<<<" in text:
        check(path, text.encode("utf-8", "surrogatepass"))
