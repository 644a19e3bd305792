"""What every command shares, carried by one decorator: the common options, the context, the output.

    @task_app.command("show")
    @shared(room=True)                       # adds --room, --dir and --json to the command
    def show_cmd(run: Run, task_id: IdArg) -> None:
        task = show_task(run.project, run.room, task_id)
        run.emit(task, lambda: output.say(task_line(task)))   # one JSON document, or the rich lines

The decorated function takes a `Run` first and declares only its own options; the decorator adds
`--dir` (unless dir=False), `--json` (unless json=False), `--as` (as_=True) and `--room/-r` (room=True) to the
signature typer reads, and opens the project lazily, once, on first use of `run.project`.
"""

from __future__ import annotations

from functools import cached_property

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name

if TYPE_CHECKING:  # typing's names only for the checker: the fast path (cli/fast.py) imports this module
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.operations.declare import Operation

# the shared options: parameter name -> (its typer declaration in cli/options.py, default); the fast path
# (cli/fast.py) parses the same four without typer
SHARED_OPTIONS = {"as_": ("AsOpt", None), "room": ("RoomOpt", None), "dir": ("DirOpt", None), "json_": ("JsonOpt", False)}


class Run:
    """One invocation: the shared options as given, and the Context they resolve to."""

    def __init__(self, dir: str | None = None, as_: str | None = None, room: str | None = None, json_: bool = False):
        self.dir = dir
        self.as_ = as_
        self.room_option = room  # as given (None when --room was not); `room` is the resolved current room
        self.json = json_

    @cached_property
    def context(self):
        from rooms_cli.project.context import Context

        return Context.open(self.dir, as_=self.as_, room=self.room_option)

    @property
    def project(self):
        return self.context.project

    @property
    def config(self):
        return self.context.config

    @property
    def me(self) -> str:
        return self.context.me

    @property
    def room(self) -> str:
        """The current room; a bad --room is a bad option value (exit 2), as a bad --as is (operations/values.py)."""
        from rooms_cli.core.errors import InvalidInput, UsageError

        try:
            return self.context.room
        except InvalidInput as exc:
            if self.room_option is None:
                raise
            raise UsageError(f"--room: {exc.message}") from None

    def emit(self, data: Any, human: str | Callable[[], object] | None = None) -> None:
        """Under --json print `data` as one JSON document; otherwise print `human` (a line, or a function that prints)."""
        from rooms_cli.cli import output

        if self.json:
            output.print_json(data)
        elif callable(human):
            human()
        elif human is not None:
            output.say(human)


def shared(*, json: bool = True, as_: bool = False, room: bool = False, dir: bool = True) -> Callable[[Callable[..., Any]], Callable]:
    """Add the shared options to a command whose first parameter is a `Run`."""
    names = [n for n, wanted in (("as_", as_), ("room", room), ("dir", dir), ("json_", json)) if wanted]

    def decorate(fn: Callable[..., Any]) -> Callable:
        return _Command(fn, names)

    return decorate


class _Command:
    """A command function with the shared options added to the signature typer reads.

    The signature is built (its string annotations evaluated) when typer first asks for it, i.e. when
    this one command is converted to click: building all ~75 at import cost ~15 ms on every command.
    """

    def __init__(self, fn: Callable[..., Any], names: list[str]):
        self.__wrapped__ = fn
        self._names = names
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(self, attr, getattr(fn, attr))

    def __call__(self, **kwargs: Any) -> Any:
        given = {n: kwargs.pop(n) for n in self._names}
        return self.__wrapped__(Run(**given), **kwargs)

    @cached_property
    def __signature__(self):
        import inspect

        fn, names = self.__wrapped__, self._names
        signature = inspect.signature(fn, eval_str=True)
        own = list(signature.parameters.values())[1:]  # the first is the Run
        clash = {p.name for p in own} & set(names)
        if clash:
            raise TypeError(f"{fn.__name__} declares {', '.join(sorted(clash))} itself; @shared adds them")
        from rooms_cli.cli import options  # typer's declarations: only when typer converts this command

        added = [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=SHARED_OPTIONS[n][1],
                                   annotation=getattr(options, SHARED_OPTIONS[n][0])) for n in names]
        return signature.replace(parameters=own + added)

    @cached_property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {p.name: p.annotation for p in self.__signature__.parameters.values()}


def declared_command(op: Operation) -> Callable[..., Any]:
    """The typer command of a declared operation (operations/declare.py), to register with `app.command(name)`."""
    return _Declared(op)


class _Declared(_Command):
    """A declared operation as typer reads it: a signature of typer.Option/Argument annotations built
    from its parameters (cli/options.py `annotation`) when typer converts it, the help its body's
    docstring, a call that makes the Run and calls the operation's command-line function."""

    def __init__(self, op: Operation):
        super().__init__(op.cli, list(op.shared))
        self.__doc__ = op.help
        self.op = op

    @cached_property
    def __signature__(self):
        import inspect

        from rooms_cli.cli.options import annotation

        parameters = [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation(p),
                                        default=inspect.Parameter.empty if p.required else p.default)
                      for p in self.op.params if p.cli]
        from rooms_cli.cli import options  # typer's declarations of the shared options

        parameters += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=SHARED_OPTIONS[n][1],
                                         annotation=getattr(options, SHARED_OPTIONS[n][0])) for n in self._names]
        return inspect.Signature(parameters)
