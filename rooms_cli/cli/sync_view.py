"""How the command line shows `rooms sync` (operations/sync.py)."""

from __future__ import annotations

from rooms_cli.cli.views import renders
from rooms_cli.operations import sync as ops

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.cli.shared import Run
    from rooms_cli.store.sync.engine import SyncResult


@renders(ops.sync)
def _synced(run: Run, result: SyncResult, values: dict[str, Any]) -> None:
    from rooms_cli.core.text import count

    conflicts = (f"; {count(len(result.conflicts), 'file conflict')} (the other side kept under .rooms/run/sync/conflicts)"
                 if result.conflicts else "")
    if result.quarantined:
        conflicts += f"; {len(result.quarantined)} refused (kept under .rooms/run/sync/quarantine)"
    run.emit(result, f"synced with {result.remote}: {count(result.received, 'line')} in, {result.sent} out, "
                     f"{count(len(set(result.files_in)), 'file')} changed here, {len(set(result.files_out))} sent{conflicts}")
