"""`rooms init`, declared once (operations/declare.py): set up a project here (docs in README)."""

from __future__ import annotations

from rooms_cli.operations.declare import Param, operation
from rooms_cli.operations.values import choice_value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from rooms_cli.project.context import Context
    from rooms_cli.project.init import InitResult


def _example_names() -> list[str]:
    from rooms_cli.project.init import example_sets

    return sorted(example_sets())


@operation("init", shared=("json_",), params=(
    Param("path", default=".", help="Project directory (default: the current one)."),
    Param("example", default=None, help="Add an example agent set: roundtable, gamedev or dev.", flags=("--example",),
          parse=lambda flag: choice_value(flag, _example_names), show_default=False, metavar="SET"),
))
def init(ctx: Context, path: str, example: str | None) -> InitResult:
    """Create .rooms/, .rooms.yaml and the default room here (running it again changes nothing that exists).

    Example: rooms init --example roundtable
    """
    from pathlib import Path

    from rooms_cli.project.init import initialize

    return initialize(Path(path), example=example)


OPERATIONS = (init,)
