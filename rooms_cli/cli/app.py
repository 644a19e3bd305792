"""The `rooms` command: the root typer app, its error handler, and the registration of every part.

Each part's commands live in their own module; `commands()` below imports and names them, and this
file only wires them. Errors raised anywhere below are mapped here, once, to a message and an exit code.

Start-up stays light (docs/performance.md): the commands are registered on `parts`, a typer app that
is never converted whole; the root group converts a command from typer to click only when it is run,
so `rooms task claim` inspects the board's commands alone, and `rooms --help` lists every command from
its help text without building any command's parameters.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterator, Mapping
from types import SimpleNamespace
from typing import Any

import typer

# The click typer itself runs on: typer ≥ 0.2x vendors it as typer._click, older versions use click.
# The vendored copy comes first even when a real click is installed too (the mcp extra brings one):
# its exceptions are the ones typer raises, and catching the other click's would turn every usage
# error into an "internal error".
try:
    from typer import _click as click
except ImportError:  # pragma: no cover - depends on the installed typer
    import click  # type: ignore[no-redef]
from typer.core import TyperGroup

from rooms_cli import __version__
from rooms_cli.cli.guard import begin, failed, undecodable_input

_HOLD = str.maketrans({"\u2011": "-", "\u00a0": " "})


def _held(text: str) -> str:
    """`text` with its breaks marked non-breaking: a hyphen inside a word or flag (`--output-format`,
    `rate-limits`) becomes U+2011, the space before a lone `-` (`| crontab -`) U+00A0; `HelpFormatter.write`
    turns both back, so what is printed (and copied) is plain ASCII."""
    import re

    return re.sub(r" -(?=\s|$)", "\u00a0-", re.sub(r"(?<=\S)-(?=\S)", "\u2011", text))


class HelpFormatter(click.HelpFormatter):
    """click's help formatting, wrapped where a reader can copy it: a line never breaks a word or a flag at
    its hyphen (`--output-` / `format`) nor leaves a lone `-` alone at a line's start (`| crontab` / `-`)."""

    def write_text(self, text: str) -> None:
        super().write_text(_held(text))

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        super().write_dl([(term, _held(definition)) for term, definition in rows], col_max, col_spacing)

    def write(self, string: str) -> None:
        super().write(string.translate(_HOLD))


class HelpContext(click.Context):
    """A command's context, its help written by `HelpFormatter`."""

    formatter_class = HelpFormatter


class RoomsGroup(TyperGroup):
    """Maps RoomsError (and stray exceptions) to one clear line and the documented exit code."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["rooms_json"] = "--json" in args
        refusal = undecodable_input(args)
        if refusal is not None:
            from rooms_cli.cli.output import print_error
            from rooms_cli.core.errors import UsageError

            print_error(UsageError(refusal), ctx.meta["rooms_json"])
            ctx.exit(UsageError.exit_code)
        try:
            return super().parse_args(ctx, args)
        except click.ClickException as exc:
            _usage_as_json(ctx, exc)
            raise

    def invoke(self, ctx: click.Context):
        begin()
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # a failure to print is the command's, not the interpreter's at exit
            return result
        except click.ClickException as exc:
            _usage_as_json(ctx, exc)
            raise
        except (typer.Exit, typer.Abort):
            raise
        except (Exception, KeyboardInterrupt) as exc:  # one line and the documented exit code
            ctx.exit(failed(exc, ctx.meta.get("rooms_json", False)))


def _usage_as_json(ctx: click.Context, exc: click.ClickException) -> None:
    """Under --json a usage error (click's, exit code 2) is the JSON error document too, not click's text."""
    if ctx.meta.get("rooms_json") and exc.exit_code == 2:
        from rooms_cli.cli.output import print_error
        from rooms_cli.core.errors import UsageError

        where = getattr(getattr(exc, "ctx", None), "command_path", None) or ctx.command_path
        print_error(UsageError(f"{where}: {exc.format_message()} (see {where} --help)"), True)
        ctx.exit(UsageError.exit_code)


class LazyCommands(Mapping[str, Any]):
    """A group's commands: every command registered on a typer app, converted to click when looked up.

    click looks a command up by name (`get_command`) and lists them by iterating: iterating builds
    nothing, a look-up converts that one command (or sub-app) the way typer would have."""

    def __init__(self, group: LazyGroup, source: typer.Typer):
        self.group = group
        # typer's own order: the commands, then the sub-apps, each in registration order
        self.infos: dict[str, typer.models.CommandInfo | typer.models.TyperInfo] = {}
        for info in source.registered_commands:
            assert info.callback is not None
            self.infos[info.name or typer.main.get_command_name(info.callback.__name__)] = info
        for group_info in source.registered_groups:
            assert group_info.name, "every sub-app is added with a name"
            self.infos[group_info.name] = group_info
        self.built: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self.built:
            self.built[name] = self.group.convert(self.infos[name])
        return self.built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.infos)

    def __len__(self) -> int:
        return len(self.infos)


class LazyGroup(TyperGroup):
    """A group whose commands typer converts one at a time, when first looked up (sub-apps too)."""

    def follow(self, source: typer.Typer) -> None:
        self.commands = LazyCommands(self, source)  # type: ignore[assignment]

    context_class = HelpContext

    def convert(self, info) -> click.Command:
        """What typer does for this entry when it converts a whole app (its help written by HelpFormatter);
        a sub-app comes out lazy too."""
        command = self._convert(info)
        command.context_class = HelpContext
        return command

    def _convert(self, info) -> click.Command:
        import copy

        from typer.main import get_command_from_info, get_group_from_info

        short, markup = app.pretty_exceptions_short, self.rich_markup_mode
        if not isinstance(info, typer.models.TyperInfo):
            return get_command_from_info(info, pretty_exceptions_short=short, rich_markup_mode=markup)
        source = info.typer_instance
        assert source is not None
        if not isinstance(source.info.cls, typer.models.DefaultPlaceholder):  # a group class of its own (status)
            return get_group_from_info(info, pretty_exceptions_short=short, suggest_commands=app.suggest_commands,
                                       rich_markup_mode=markup)
        shell = copy.copy(source)  # the sub-app without its commands: typer converts only the group itself
        shell.registered_commands, shell.registered_groups = [], []
        shell.info = copy.copy(source.info)
        shell.info.cls = LazyGroup
        shallow = copy.copy(info)
        shallow.typer_instance = shell
        group = get_group_from_info(shallow, pretty_exceptions_short=short, suggest_commands=app.suggest_commands,
                                    rich_markup_mode=markup)
        if not isinstance(group, LazyGroup):  # a sub-app with a group class of its own: convert it whole
            return get_group_from_info(info, pretty_exceptions_short=short, suggest_commands=app.suggest_commands,
                                       rich_markup_mode=markup)
        group.follow(source)
        return group

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # typer's own goes through .items(), which would convert them all

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The help's command list as typer writes it, from each command's help text alone
        (tests/test_startup_imports.py compares it with the full conversion)."""
        listed = [(name, self.help_of(name)) for name in self.list_commands(ctx)]
        listed = [(name, cmd) for name, cmd in listed if not cmd.hidden]
        if listed:
            limit = formatter.width - 6 - max(len(name) for name, _ in listed)
            with formatter.section("Commands"):
                # click's own shortening, applied to a stand-in that carries the help text
                formatter.write_dl([(name, click.Command.get_short_help_str(cmd, limit)) for name, cmd in listed])

    def help_of(self, name: str):
        """What the command list needs of a command: the built one, or its help text and flags."""
        commands = self.commands
        assert isinstance(commands, LazyCommands)
        if name in commands.built:
            return commands.built[name]
        info = commands.infos[name]
        if isinstance(info, typer.models.TyperInfo):
            from typer.main import solve_typer_info_defaults, solve_typer_info_help

            solved = solve_typer_info_defaults(info)
            return SimpleNamespace(help=solve_typer_info_help(info), short_help=solved.short_help,
                                   hidden=bool(solved.hidden), deprecated=solved.deprecated)
        text = inspect.cleandoc(info.help) if info.help is not None else inspect.getdoc(info.callback)
        return SimpleNamespace(help=text, short_help=info.short_help, hidden=info.hidden, deprecated=info.deprecated)


class LazyRoomsGroup(LazyGroup, RoomsGroup):
    """The root group: the commands registered on `parts`, converted when run; errors mapped once."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.follow(parts)


# every part registers its commands here; the root group (LazyRoomsGroup) converts them one by one
parts = typer.Typer()

app = typer.Typer(
    name="rooms",
    cls=LazyRoomsGroup,
    help=(
        "Coordinate LLM agents, people and coding-agent sessions from the shell. "
        "Everything lives in plain files under .rooms/.\n\n"
        "Example: rooms init --example roundtable && rooms chat '@jam what should we build next?'"
    ),
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"rooms {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Coordinate LLM agents from the shell."""
    from rooms_cli.store.locks import default_timeout

    default_timeout()  # a bad ROOMS_LOCK_TIMEOUT is one sentence for every command, not only those that lock


def commands() -> dict[str, typer.Typer | Callable[..., object]]:
    """`rooms <name>` -> its typer command function or sub-app (a group of commands), each module by a
    plain import: a broken one fails loudly. The modules import their parts inside the commands, so
    importing them all costs little; converting them is what stays lazy (LazyGroup)."""
    from rooms_cli.cli import (
        agent_cmd,
        board_cmd,
        chat_cmd,
        files_cmd,
        group_cmd,
        mcp_cmd,
        messaging_cmd,
        models_cmd,
        project_cmd,
        roundtable_cmd,
        search_cmd,
        sync_cmd,
        top_cmd,
        watch_cmd,
    )

    return {
        "init": project_cmd.init_cmd,
        "config": project_cmd.config_app,
        "demo": project_cmd.demo_cmd,
        "tick": project_cmd.tick_cmd,
        "doctor": project_cmd.doctor_cmd,
        "agent": agent_cmd.agent_app,
        "models": models_cmd.models_app,
        "chat": chat_cmd.chat_cmd,
        "transcript": chat_cmd.transcript_cmd,
        "room": chat_cmd.room_app,
        "board": board_cmd.board_cmd,
        "task": board_cmd.task_app,
        "roundtable": roundtable_cmd.roundtable_app,
        "schedule": roundtable_cmd.schedule_app,
        "memory": roundtable_cmd.memory_app,
        "group": group_cmd.group_app,
        "send": messaging_cmd.send_cmd,
        "inbox": messaging_cmd.inbox_cmd,
        "status": messaging_cmd.status_app,
        "agents": messaging_cmd.agents_cmd,
        "spawn": messaging_cmd.spawn_cmd,
        "wait": messaging_cmd.wait_cmd,
        "attention": messaging_cmd.attention_cmd,
        "hook": messaging_cmd.hook_app,
        "watch": watch_cmd.watch_cmd,
        "search": search_cmd.search_cmd,
        "mcp": mcp_cmd.mcp_cmd,
        "files": files_cmd.files_app,
        "sync": sync_cmd.sync_cmd,
        "top": top_cmd.top_cmd,
    }


def _register_commands() -> None:
    """Add every command to `parts`; nothing is converted to click here."""
    for name, command in commands().items():
        if isinstance(command, typer.Typer):
            parts.add_typer(command, name=name)
        else:
            parts.command(name)(command)


_register_commands()


def main() -> None:
    """Console-script entry point."""
    begin()  # a closed stdout or stderr gets /dev/null before anything opens a file
    app()
