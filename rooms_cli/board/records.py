"""The compact record a task ends with: one line of summary, the next step, what it cites (board/references.py)."""

from __future__ import annotations

from rooms_cli.board.model import SUMMARY_MAX
from rooms_cli.board.references import validate_ref
from rooms_cli.board.tasks import one_line
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


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
