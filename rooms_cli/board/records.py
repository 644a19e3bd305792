"""The compact record a task ends with, and the validation of what it points at.

A reference is `file:<path inside the project>` (the file must exist; a path escaping the project
root, by `..` or a symlink, is refused) or `msg:<message id>` (the message must be in the room's
transcript; a unique prefix is expanded to the full id). Anything else is refused.
"""

from __future__ import annotations

import os
from pathlib import Path

from rooms_cli.board.model import SUMMARY_MAX
from rooms_cli.board.tasks import one_line
from rooms_cli.core.errors import InvalidInput, NotFound
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


def validate_ref(project: Project, room: str, ref: str, what: str = "reference") -> str:
    """Return the normalized reference, or raise InvalidInput / NotFound saying what is wrong."""
    text = (ref or "").strip()
    kind, sep, target = text.partition(":")
    if not sep or kind not in ("file", "msg") or not target:
        raise InvalidInput(f"{what} {ref!r} must be file:<path inside the project> or msg:<message id>")
    if kind == "file":
        return "file:" + _project_file(project, target, what)
    return "msg:" + _message_id(project, room, target, what)


def _project_file(project: Project, target: str, what: str) -> str:
    root = project.root.resolve()
    candidate = Path(target)
    full = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if root not in full.parents:
        raise InvalidInput(f"{what} file:{target} is outside the project ({root}); refusing it")
    if not full.exists():
        raise NotFound(f"{what} file:{target} does not exist (paths are relative to {root})")
    return Path(os.path.relpath(full, root)).as_posix()


def _message_id(project: Project, room: str, target: str, what: str) -> str:
    from rooms_cli.chat.transcript import read_transcript
    from rooms_cli.store.ids import resolve_prefix

    ids = [m.id for m in read_transcript(project, room)]
    try:
        return resolve_prefix(target, ids, "message id")
    except NotFound:
        raise NotFound(f"{what} msg:{target} is not a message in the transcript of room {room!r}") from None


def make_record(
    project: Project,
    room: str,
    *,
    task_id: str,
    plate: str,
    status: str,
    summary: str | None,
    artifacts: list[str] | tuple[str, ...] = (),
    next_step: str | None = None,
    result_ref: str | None = None,
    summary_required: bool = True,
) -> dict[str, Any]:
    """The compact record: {task_id, plate, status, summary, artifacts, next, result_ref} (every key, always)."""
    record: dict[str, Any] = {
        "task_id": task_id,
        "plate": plate,
        "status": status,
        "summary": one_line(summary or "", "--summary", SUMMARY_MAX, required=summary_required),
        "artifacts": [validate_ref(project, room, a, "artifact") for a in artifacts],
        "next": one_line(next_step, "--next", SUMMARY_MAX) if next_step else None,
        "result_ref": validate_ref(project, room, result_ref, "result_ref") if result_ref else None,
    }
    return record
