"""`rooms top`: a live full-screen view of the board, the rooms, the agents and the groups (Textual).

    views.py    what each tab shows, read through the parts' functions (no textual)
    actions.py  what the keys do: the functions the CLI commands call (no textual)
    app.py      the Textual app; screens.py its dialogs

Textual is an optional extra (`tui`): only `rooms top` imports it, through `run` and `snapshot` here, so
every other command starts without it; when it is missing, the error says how to add it to this install
(store/installation.py: an editable checkout, pipx, or pip).
"""

from __future__ import annotations

from pathlib import Path

from rooms_cli.core.errors import RoomsError, UsageError
from rooms_cli.project.context import Context
from rooms_cli.tui.views import FIXED_TABS

SNAPSHOT_WAIT_S = 30.0


def require_textual() -> None:
    """Refuse in one sentence when the extra is not installed."""
    try:
        import textual  # noqa: F401
    except ImportError:
        from rooms_cli.store.installation import add_extra

        raise RoomsError(f"rooms top needs the Textual package, which is not installed: {add_extra('tui')}",
                         code="missing_dependency") from None


def check(ctx: Context, tab: str) -> None:
    """Everything the dashboard needs, resolved before the screen opens, so that a bad value is one
    sentence (and its exit code) rather than an error inside the app: the identity, the config, the
    room (it must exist: a typo would show an empty board forever), and `--tab` (board, rooms, agents,
    or a group that exists)."""
    from rooms_cli.chat.rooms import room_exists
    from rooms_cli.core.errors import NotFound
    from rooms_cli.groups.log import exists
    from rooms_cli.store.ids import validate_name

    ctx.config  # noqa: B018 - resolved now: a broken .rooms.yaml is the CLI's one sentence
    ctx.me  # noqa: B018
    if not room_exists(ctx.project, ctx.room):
        raise NotFound(f"no room {ctx.room!r}; see `rooms room list`")
    if tab in FIXED_TABS:
        return
    validate_name(tab, "--tab (board, rooms, agents or a group name)")
    if not exists(ctx.project, tab):
        raise NotFound(f"no group {tab!r} for --tab; it takes board, rooms, agents or a group name (rooms group list)")


def parse_size(text: str) -> tuple[int, int]:
    """`120x40` → (120, 40): columns by lines, each at least 20×8."""
    cols, sep, lines = text.lower().partition("x")
    if not sep or not cols.isdigit() or not lines.isdigit() or int(cols) < 20 or int(lines) < 8:
        raise UsageError(f"--size must be COLUMNSxLINES such as 120x40 (at least 20x8), not {text!r}")
    return int(cols), int(lines)


def run(ctx: Context, *, tab: str = "board", room: str | None = None) -> None:
    """The dashboard on this terminal until q or Ctrl+Q."""
    import sys

    require_textual()
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise RoomsError("rooms top needs a terminal (its input and output are not one); "
                         "rooms top --snapshot FILE.svg renders one frame without it")
    from rooms_cli.tui.app import TopApp

    TopApp(ctx, tab=tab, room=room).run()


def snapshot(ctx: Context, path: Path, *, tab: str = "board", room: str | None = None, size: tuple[int, int] = (120, 40)) -> None:
    """Render one frame, once everything is read, to an SVG file (no terminal needed)."""
    require_textual()
    import asyncio

    from rooms_cli.store import atomic

    atomic.write_text(Path(path), asyncio.run(render_svg(ctx, tab=tab, room=room, size=size)))


async def render_svg(ctx: Context, *, tab: str = "board", room: str | None = None, size: tuple[int, int] = (120, 40)) -> str:
    import time

    from rooms_cli.tui.app import TopApp

    app = TopApp(ctx, tab=tab, room=room, live=False)
    async with app.run_test(size=size) as pilot:
        deadline = time.monotonic() + SNAPSHOT_WAIT_S
        while not app.loaded.is_set() and time.monotonic() < deadline:
            await pilot.pause(0.02)
        await pilot.pause()
        await pilot.pause()
        return app.export_screenshot(title="rooms top")
