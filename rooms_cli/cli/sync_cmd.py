"""`rooms sync`: carry .rooms/ both ways through a git remote, on refs/rooms/state (docs/git.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli import hot
from rooms_cli.cli.shared import Run, shared


@shared()
def sync_cmd(
    run: Run,
    remote: Annotated[str | None, typer.Option("--remote", help="The git remote (default: sync.remote in .rooms.yaml, else origin).", show_default=False)] = None,
) -> None:
    """Merge .rooms/ with a git remote both ways; your branches, index and work tree are never touched.

    Exit 1 when there is no git, no such remote, it cannot be reached, or its state was rewritten by
    hand; exit 3 when other clones kept pushing first. Nothing local is lost in any case.

    Example: rooms sync --remote origin
    """
    hot.sync(run, remote=remote)
