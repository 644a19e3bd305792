"""What other parts add to a chat prompt about its room (its board), wired by plain imports.

The board builds on chat (a task's `msg:<id>` result is a transcript id), so chat may not import the
board; yet a chat prompt shows the room's board. This table, above both, is the one place that
arrow goes through: chat/context.py reads it. Each entry is a loader (the import inside it, so a
chat that never builds a prompt imports no board) returning `(project, room) -> str`, markdown or "".
It lives apart from rooms_cli/across/registry.py, which imports chat's own demo: together the two would
be an import cycle.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable

    RoomSection = Callable[..., str]  # (project, room) -> markdown, "" when there is nothing to say


def _board() -> RoomSection:
    from rooms_cli.board.render import board_markdown

    return board_markdown


ROOM_SECTIONS: dict[str, Callable[[], RoomSection]] = {
    "board": _board,
}
