"""How the command line shows `rooms watch` (operations/watch.py): each event as it lands, until Ctrl-C."""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.views import renders
from rooms_cli.operations import watch as ops

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.cli.shared import Run


@renders(ops.watch)
def _events(run: Run, watching: ops.Watching, values: dict[str, Any]) -> None:
    import sys

    from rooms_cli.watch.wake import stop_on_sigint

    as_json = values["json_"]
    if not as_json and sys.stderr.isatty():
        output.note(f"watching {watching.selection.describe()} · Ctrl-C to stop")
    with stop_on_sigint(watching.stop):
        for event in watching.events:
            _show_event(event, as_json)


def _show_event(event: dict[str, Any], as_json: bool) -> None:
    if as_json:
        output.print_json_line(event)
        return
    from rich.text import Text

    from rooms_cli.watch.render import line

    output.console().print(Text.assemble(*line(event)))
