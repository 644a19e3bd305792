"""How the command line shows the result of a declared operation: the views, registered by operation.

The operation's body (rooms_cli/operations/) returns data; here the CLI prints it: one JSON document
under `--json`, else the lines a person reads. Each part's view module (board_view.py, chat_view.py,
messaging_view.py, groups_view.py, files_view.py, roundtable_view.py, sync_view.py, watch_view.py)
registers, by operation:

- `@renders(op)`: `render(run, result, values)` prints the result (every operation has one);
- `@prepares(op)`: `prepare(run, values)` reads what only a command line has before the body runs
  (a message from stdin, chat mode on a terminal, paths relative to here), returning the values, or
  None when it did the whole job itself;
- `@listens(op)`: `listen(run, values)` gives the listener of the events the body reports while it
  runs (a chat turn's replies as they arrive, a roundtable's turns); a listener that is also a context
  manager is entered around the body (`rooms tick`'s live line, fed by the events).

cli/dispatch.py `invoke` runs an operation with them, for the fast path (cli/fast.py) and typer
(cli/shared.py `declared_command`) alike.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.cli.shared import Run
    from rooms_cli.operations.declare import Operation

    Render = Callable[[Run, Any, dict[str, Any]], None]
    Prepare = Callable[[Run, dict[str, Any]], dict[str, Any] | None]
    Listen = Callable[[Run, dict[str, Any]], Any]

RENDERS: dict[str, Render] = {}
PREPARES: dict[str, Prepare] = {}
LISTENS: dict[str, Listen] = {}


def renders(*ops: Operation) -> Callable[[Render], Render]:
    """Register the decorated function as how the command line shows the results of `ops`."""
    def register(fn: Render) -> Render:
        RENDERS.update((op.name, fn) for op in ops)
        return fn

    return register


def prepares(*ops: Operation) -> Callable[[Prepare], Prepare]:
    """Register the decorated function as what the command line reads for `ops` before their body runs."""
    def register(fn: Prepare) -> Prepare:
        PREPARES.update((op.name, fn) for op in ops)
        return fn

    return register


def listens(*ops: Operation) -> Callable[[Listen], Listen]:
    """Register the decorated function as the maker of the listener of `ops`' events."""
    def register(fn: Listen) -> Listen:
        LISTENS.update((op.name, fn) for op in ops)
        return fn

    return register
