"""How the command line shows `rooms init` (operations/project.py)."""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.views import renders
from rooms_cli.core.text import count
from rooms_cli.operations import project as ops

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.cli.shared import Run
    from rooms_cli.project.init import InitResult


@renders(ops.init)
def _initialized(run: Run, result: InitResult, values: dict[str, Any]) -> None:
    if result.nested_in:
        output.warn(f"{result.root} is inside the rooms project {result.nested_in}: this makes a nested project, "
                    "and commands run under it will use the new one")
    if run.json:
        output.print_json(result)
        return
    if not result.changed:
        output.say(f"Nothing to do: {result.root} is already set up (kept {count(len(result.kept), 'existing file')}).")
    else:
        output.say(f"Initialized rooms in {result.root}")
        for item in result.created:
            output.say(f"  created {item}")
    for item in result.skipped:
        output.say(f"  skipped {item}")
    if result.changed:
        if result.agents:
            output.say("Next: rooms chat 'hello everyone'   (or rooms demo for a tour)")
        else:  # chatting needs an agent: a bare project is told to make one first
            output.say("Next: rooms agent new helper && rooms chat 'hello everyone'\n"
                       "      (or rooms init --example dev for six example agents, or rooms demo for a tour)")
