"""What every command shares: the common options, the Run (a command's Context), and typer's view of a command.

    @task_app.command("resolve")
    @shared(as_=True, room=True)             # adds --as, --room, --dir and --json to the command
    def resolve_cmd(run: Run, task_id: IdArg) -> None:
        task = resolve_conflicts(run.project, run.room, task_id, by=run.me)
        run.emit(task, f"resolved {task.id}")   # one JSON document, or the human line

The decorated function takes a `Run` first and declares only its own options; the decorator adds
`--dir` (unless dir=False), `--json` (unless json=False), `--as` (as_=True) and `--room/-r` (room=True) to the
signature typer reads. A declared operation (rooms_cli/operations/) becomes a typer command through
cli/dispatch.py `declared_command`, its signature built from the declaration the same way.
"""

from __future__ import annotations

from functools import cached_property

from rooms_cli.project.context import Context

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:  # typing's names only for the checker: the fast path (cli/fast.py) imports this module
    import inspect
    from collections.abc import Callable
    from contextlib import AbstractContextManager
    from typing import Any


# the shared options: parameter name -> (its typer declaration in cli/options.py, default); the fast path
# (cli/fast.py) parses the same four without typer
SHARED_OPTIONS = {"as_": ("AsOpt", None), "room": ("RoomOpt", None), "dir": ("DirOpt", None), "json_": ("JsonOpt", False)}


class Run(Context):
    """One command: the shared options as given, the Context they resolve to (the project opened on
    first use), and what a person at the terminal sees while it runs: notes and live lines on stderr."""

    person = True

    def __init__(self, dir: str | None = None, as_: str | None = None, room: str | None = None, json_: bool = False) -> None:
        super().__init__(dir=dir, as_=as_, room=room)
        self.json = json_

    @cached_property
    def room(self) -> str:
        """The current room; a bad --room is a bad option value (exit 2), as a bad --as is (operations/values.py)."""
        from rooms_cli.core.errors import InvalidInput, UsageError

        try:
            return super().room
        except InvalidInput as exc:
            if self.room_ is None:
                raise
            raise UsageError(f"--room: {exc.message}") from None

    def note(self, text: str) -> None:
        from rooms_cli.cli import output

        output.note(text)

    def done(self, sentence: str) -> None:
        from rooms_cli.cli import output

        output.done(sentence)

    def waiting(self, describe: Callable[[float], str]) -> AbstractContextManager[object]:
        from rooms_cli.cli import progress

        return progress.live_line(describe, progress.wanted(self.json))

    def emit(self, data: Any, human: str | Callable[[], object] | None = None) -> None:
        """Under --json print `data` as one JSON document; otherwise print `human` (a line, or a function that prints)."""
        from rooms_cli.cli import output

        if self.json:
            output.print_json(data)
        elif callable(human):
            human()
        elif human is not None:
            output.say(human)


def shared(*, json: bool = True, as_: bool = False, room: bool = False, dir: bool = True) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the shared options to a command whose first parameter is a `Run`."""
    names = [n for n, wanted in (("as_", as_), ("room", room), ("dir", dir), ("json_", json)) if wanted]

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        return Command(fn, names)

    return decorate


def shared_parameters(names: list[str]) -> list[inspect.Parameter]:
    """The typer parameters of the shared options `names` (cli/options.py declares them)."""
    import inspect

    from rooms_cli.cli import options  # typer's declarations: only when typer converts this command

    return [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=SHARED_OPTIONS[n][1],
                              annotation=getattr(options, SHARED_OPTIONS[n][0])) for n in names]


class Command:
    """A command function with the shared options added to the signature typer reads.

    The signature is built (its string annotations evaluated) when typer first asks for it, i.e. when
    this one command is converted to click: building all ~75 at import cost ~15 ms on every command.
    """

    def __init__(self, fn: Callable[..., Any], names: list[str]) -> None:
        self.__wrapped__ = fn
        self._names = names
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(self, attr, getattr(fn, attr))

    def __call__(self, **kwargs: Any) -> Any:
        given = {n: kwargs.pop(n) for n in self._names}
        return self.__wrapped__(Run(**given), **kwargs)

    @cached_property
    def __signature__(self) -> inspect.Signature:
        import inspect

        fn, names = self.__wrapped__, self._names
        signature = inspect.signature(fn, eval_str=True)
        own = list(signature.parameters.values())[1:]  # the first is the Run
        clash = {p.name for p in own} & set(names)
        if clash:
            raise TypeError(f"{fn.__name__} declares {', '.join(sorted(clash))} itself; @shared adds them")
        return signature.replace(parameters=own + shared_parameters(names))

    @cached_property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {p.name: p.annotation for p in self.__signature__.parameters.values()}
