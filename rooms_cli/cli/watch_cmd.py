"""`rooms watch`: follow rooms, boards, groups, inboxes and spawns as they happen."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Annotated

import typer

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run, shared
from rooms_cli.cli.values import duration_value, time_value


@shared(json=False)
def watch_cmd(
    run: Run,
    room: Annotated[list[str] | None, typer.Option("--room", "-r", metavar="ROOM", help="Follow this room's transcript (repeatable; default: the current room).", show_default=False)] = None,
    all_: Annotated[bool, typer.Option("--all", help="Follow every room, board, group, inbox and spawn, new ones included.")] = False,
    inbox: Annotated[list[str] | None, typer.Option("--inbox", metavar="AGENT", help="Follow this agent's inbox (repeatable).", show_default=False)] = None,
    board: Annotated[bool, typer.Option("--board", help="Follow the boards of the rooms given (default: the current room).")] = False,
    groups: Annotated[bool, typer.Option("--groups", help="Follow every group log, new groups included.")] = False,
    since: Annotated[datetime | None, typer.Option("--since", parser=time_value("--since"), metavar="ISO", help="First print the events since this ISO time.", show_default=False)] = None,
    last: Annotated[int | None, typer.Option("--last", min=0, metavar="N", help="First print the last N events.", show_default=False)] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", parser=duration_value("--timeout"), metavar="DURATION", help="Stop after this long (e.g. 30, 30s, 5m); exit 0.", show_default=False)] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print one JSON object a line (each with type and ts).")] = False,
) -> None:
    """Print each new event once, as it lands: messages, task, group, inbox and spawn events. Ctrl-C ends it.

    Under --json: one JSON object a line, each with `type` and `ts` (and room, group or agent).

    Example: rooms watch --all --json --timeout 60
    """
    from rooms_cli.errors import UsageError
    from rooms_cli.watch import Selection, watch
    from rooms_cli.watch.wake import StopFlag, stop_on_sigint

    if since is not None and last is not None:
        raise UsageError("--since and --last cannot be combined; give one")
    selection = Selection.from_flags(
        rooms=room or (), all=all_, inboxes=inbox or (), board=board, groups=groups, current_room=run.room,
    )
    selection.check(run.project)
    if not json_ and sys.stderr.isatty():
        output.note(f"watching {selection.describe()} · Ctrl-C to stop")
    with stop_on_sigint(StopFlag()) as stop:
        for event in watch(run.project, selection, since=since, last=last, timeout=timeout, stop=stop):
            _show(event, json_)


def _show(event: dict, as_json: bool) -> None:
    if as_json:
        output.print_json_line(event)
        return
    from rich.text import Text

    from rooms_cli.watch.render import line

    output.console().print(Text.assemble(*line(event)))
