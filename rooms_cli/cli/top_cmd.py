"""`rooms top`: the live dashboard (Textual, an optional extra imported only here, when it runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run, shared


@shared(json=False, as_=True, room=True)
def top_cmd(
    run: Run,
    tab: Annotated[str, typer.Option("--tab", metavar="TAB", help="Open on board, rooms, agents or a group's name.")] = "board",
    snapshot: Annotated[Path | None, typer.Option("--snapshot", metavar="FILE.svg", help="Render one frame to this SVG file and exit (no terminal needed).", show_default=False)] = None,
    size: Annotated[str | None, typer.Option("--size", metavar="COLSxLINES", help="With --snapshot: the screen size (default 120x40).", show_default=False)] = None,
) -> None:
    """A live full-screen view of the board, rooms, agents and groups; ? lists the keys, q quits.

    Needs the tui extra (Textual); without it, rooms top says how to add it to this install.

    Example: rooms top --tab rooms
    """
    from rooms_cli import tui
    from rooms_cli.core.errors import UsageError

    tui.check(run.context, tab)
    if snapshot is None:
        if size is not None:
            raise UsageError("--size goes with --snapshot (a live dashboard takes the terminal's size)")
        tui.run(run.context, tab=tab)
        return
    tui.snapshot(run.context, snapshot, tab=tab, size=tui.parse_size(size or "120x40"))
    output.note(f"wrote {snapshot}")
