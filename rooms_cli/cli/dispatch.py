"""Run a declared operation from the command line: read what only a terminal has, call its body, show its result.

The fast path (cli/fast.py) and typer (the command `declared_command` makes of a declaration) both call
`invoke` with the values they parsed, so an operation behaves the same whichever parser read its line.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from functools import cached_property

from rooms_cli.cli.shared import Command, Run, shared_parameters
from rooms_cli.cli.views import LISTENS, PREPARES, RENDERS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    import inspect
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.cli.views import Render
    from rooms_cli.operations.declare import Operation


def _load(op: Operation) -> None:
    """Import the view module of `op`'s part (a plain import each: a broken one fails loudly)."""
    part = op.body.__module__.rpartition(".")[2]
    if part == "board":
        from rooms_cli.cli import board_view  # noqa: F401
    elif part == "chat":
        from rooms_cli.cli import chat_view  # noqa: F401
    elif part == "messaging":
        from rooms_cli.cli import messaging_view  # noqa: F401
    elif part == "groups":
        from rooms_cli.cli import groups_view  # noqa: F401
    elif part == "files":
        from rooms_cli.cli import files_view  # noqa: F401
    elif part == "roundtable":
        from rooms_cli.cli import roundtable_view  # noqa: F401
    elif part == "sync":
        from rooms_cli.cli import sync_view  # noqa: F401
    elif part == "watch":
        from rooms_cli.cli import watch_view  # noqa: F401
    elif part == "search":
        from rooms_cli.cli import search_view  # noqa: F401
    elif part == "project":
        from rooms_cli.cli import project_view  # noqa: F401
    elif part == "across":
        from rooms_cli.cli import across_view  # noqa: F401


def view_of(op: Operation) -> Render:
    """How the command line shows `op`'s result (its part's view module loaded)."""
    if op.name not in RENDERS:
        _load(op)
    return RENDERS.get(op.name) or _emitted


def _emitted(run: Run, result: Any, values: dict[str, Any]) -> None:
    """An operation of the command line itself (`rooms mcp`): its result, if any, as JSON."""
    if result is not None:
        run.emit(result)


def invoke(op: Operation, run: Run, values: dict[str, Any]) -> None:
    """Run `op` from the command line with `values` (parsed, by parameter name) and show its result."""
    render = view_of(op)
    prepare = PREPARES.get(op.name)
    if prepare is not None:
        prepared = prepare(run, values)
        if prepared is None:
            return
        values = prepared
    listen = LISTENS.get(op.name)
    if listen is not None:
        run.on_event = listen(run, values)
    around: AbstractContextManager[object] = run.on_event if isinstance(run.on_event, AbstractContextManager) else nullcontext()
    with around:  # a listener that is a context manager shows something while the body runs (a live line)
        result = op.body(run, **op.body_values(values))
    render(run, result, values)


def declared_command(op: Operation) -> Callable[..., Any]:
    """The typer command of a declared operation (operations/declare.py), to register with `app.command(name)`."""
    return _Declared(op)


class _Declared(Command):
    """A declared operation as typer reads it: a signature of typer.Option/Argument annotations built
    from its parameters (cli/options.py `annotation`) when typer converts it, the help its body's
    docstring; a call runs the operation as the fast path does (`invoke`)."""

    def __init__(self, op: Operation) -> None:
        super().__init__(op.body, list(op.shared))
        self.__doc__ = op.help
        self.op = op

    def __call__(self, **kwargs: Any) -> Any:
        given = {n: kwargs.pop(n) for n in self._names}
        invoke(self.op, Run(**given), kwargs)

    @cached_property
    def __signature__(self) -> inspect.Signature:
        import inspect

        from rooms_cli.cli.options import annotation

        parameters = [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation(p),
                                        default=inspect.Parameter.empty if p.required else p.default)
                      for p in self.op.params if p.cli]
        return inspect.Signature(parameters + shared_parameters(self._names))
