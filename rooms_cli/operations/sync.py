"""`rooms sync`, declared once (operations/declare.py): merge `.rooms/` with a git remote both ways (docs/git.md)."""

from __future__ import annotations

from rooms_cli.core.shapes import BOOL, INT, STR, record
from rooms_cli.operations.common import DIR_JSON
from rooms_cli.operations.declare import Mcp, Param, operation

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from rooms_cli.project.context import Context
    from rooms_cli.store.sync.engine import SyncResult

SYNCED = record({"remote": STR, "received": INT, "sent": INT, "pushed": BOOL, "conflicts": {"type": "array"}})


@operation("sync", shared=DIR_JSON, params=(
    Param("remote", default=None, help="The git remote (default: sync.remote in .rooms.yaml, else origin).", flags=("--remote",),
          show_default=False),
), mcp=Mcp("sync", "Sync with the git remote", SYNCED, idempotent=True,
           description="Merge .rooms/ with a git remote both ways (on refs/rooms/state; your branches and work tree are "
                       "never touched): what other clones wrote arrives, what you wrote leaves. See docs/git.md."))
def sync(ctx: Context, remote: str | None) -> SyncResult:
    """Merge .rooms/ with a git remote both ways; your branches, index and work tree are never touched.

    Exit 1 when there is no git, no such remote, it cannot be reached, or its state was rewritten by
    hand; exit 3 when other clones kept pushing first. Nothing local is lost in any case.

    Example: rooms sync --remote origin
    """
    from rooms_cli.store.sync.engine import sync as sync_with
    from rooms_cli.store.sync.settings import for_task_commands

    if remote is None:
        remote = for_task_commands(lambda: ctx.config, ctx.project.root, True, None)[1]
    return sync_with(ctx.project, remote)


OPERATIONS = (sync,)
