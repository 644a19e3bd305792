"""`rooms top`: the live dashboard (Textual, an optional extra imported only here, when it runs).

A declared operation (operations/declare.py) of the command line itself, like `rooms mcp`: it starts the
dashboard adapter (tui/), the one arrow from the CLI to it.
"""

from __future__ import annotations

from rooms_cli.operations.declare import Param, operation

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from rooms_cli.project.context import Context


@operation("top", shared=("as_", "room", "dir"), params=(
    Param("tab", default="board", help="Open on board, rooms, agents or a group's name.", flags=("--tab",), metavar="TAB"),
    Param("snapshot", default=None, help="Render one frame to this SVG file and exit (no terminal needed).", flags=("--snapshot",),
          metavar="FILE.svg", show_default=False),
    Param("size", default=None, help="With --snapshot: the screen size (default 120x40).", flags=("--size",), metavar="COLSxLINES",
          show_default=False),
))
def top(ctx: Context, tab: str, snapshot: str | None, size: str | None) -> None:
    """A live full-screen view of the board, rooms, agents and groups; ? lists the keys, q quits.

    Needs the tui extra (Textual); without it, rooms top says how to add it to this install.

    Example: rooms top --tab rooms
    """
    from pathlib import Path

    from rooms_cli import tui
    from rooms_cli.core.errors import UsageError

    tui.check(ctx, tab)
    if snapshot is None:
        if size is not None:
            raise UsageError("--size goes with --snapshot (a live dashboard takes the terminal's size)")
        tui.run(ctx, tab=tab)
        return
    tui.snapshot(ctx, Path(snapshot), tab=tab, size=tui.parse_size(size or "120x40"))
    ctx.note(f"wrote {snapshot}")
