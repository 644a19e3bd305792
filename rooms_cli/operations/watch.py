"""`rooms watch`, declared once (operations/declare.py): each new event once, as it lands (docs/watch.md)."""

from __future__ import annotations

from rooms_cli.operations.declare import Param, operation
from rooms_cli.operations.values import duration_value, time_value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Iterator
    from datetime import datetime
    from typing import Any

    from rooms_cli.project.context import Context
    from rooms_cli.watch.sources import Selection
    from rooms_cli.watch.wake import StopFlag


class Watching:
    """What `rooms watch` returns: what it follows, the flag that stops it (Ctrl-C sets it: cli/views.py),
    and its events, each made when it is read."""

    def __init__(self, selection: Selection, stop: StopFlag, events: Iterator[dict[str, Any]]) -> None:
        self.selection, self.stop, self.events = selection, stop, events


@operation("watch", shared=("dir",), params=(
    Param("room", "strs", None, "Follow this room's transcript (repeatable; default: the current room).", ("--room", "-r"),
          metavar="ROOM", show_default=False),
    Param("all_", "bool", False, "Follow every room, board, group, inbox and spawn, new ones included.", ("--all",)),
    Param("inbox", "strs", None, "Follow this agent's inbox (repeatable).", ("--inbox",), metavar="AGENT", show_default=False),
    Param("board", "bool", False, "Follow the boards of the rooms given (default: the current room).", ("--board",)),
    Param("groups", "bool", False, "Follow every group log, new groups included.", ("--groups",)),
    Param("since", "datetime", None, "First print the events since this ISO time.", ("--since",), parse=time_value, metavar="ISO",
          show_default=False),
    Param("last", "int", None, "First print the last N events.", ("--last",), min=0, metavar="N", show_default=False),
    Param("timeout", "duration", None, "Stop after this long (e.g. 30, 30s, 5m); exit 0.", ("--timeout",), parse=duration_value,
          metavar="DURATION", show_default=False),
    Param("json_", "bool", False, "Print one JSON object a line (each with type and ts).", ("--json",), view=True),
))
def watch(ctx: Context, room: list[str] | None, all_: bool, inbox: list[str] | None, board: bool, groups: bool,
          since: datetime | None, last: int | None, timeout: float | None) -> Watching:
    """Print each new event once, as it lands: messages, task, group, inbox and spawn events. Ctrl-C ends it.

    Under --json: one JSON object a line, each with `type` and `ts` (and room, group or agent).

    Example: rooms watch --all --json --timeout 60
    """
    from rooms_cli.core.errors import UsageError
    from rooms_cli.watch import Selection, watch
    from rooms_cli.watch.wake import StopFlag

    if since is not None and last is not None:
        raise UsageError("--since and --last cannot be combined; give one")
    selection = Selection.from_flags(rooms=room or (), all=all_, inboxes=inbox or (), board=board, groups=groups,
                                     current_room=ctx.room)
    selection.check(ctx.project)
    stop = StopFlag()
    return Watching(selection, stop, watch(ctx.project, selection, since=since, last=last, timeout=timeout, stop=stop))


OPERATIONS = (watch,)
