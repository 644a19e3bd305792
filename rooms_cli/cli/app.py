"""The `rooms` command: the root typer app, its error handler, and the registration of every part.

Each part's commands live in their own module; `commands()` below imports and names them, and this
file only wires them. Errors raised anywhere below are mapped here, once, to a message and an exit code.

Start-up stays light (docs/performance.md): the root group converts a command from typer to click
only when it is run (`typer.main.get_group` or `get_command` of that group or command alone), so `rooms task claim`
converts the board's commands alone, and `rooms --help` lists every command from its help text
without building any command's parameters. Only typer's public interface is used (no typer._click,
no typer.main internals): a group of commands is a `typer.Typer` made by cli/options.py `commands`,
which carries the root's settings because each group is converted on its own.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterator, Mapping
from types import SimpleNamespace
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from rooms_cli import __version__
from rooms_cli.cli.guard import begin, failed, undecodable_input
from rooms_cli.cli.help import ROOT, VERSION_HELP

Entry = typer.Typer | Callable[..., object]  # a command: a group of commands (a sub-app) or one command's function


def _click_error(exc: BaseException) -> bool:
    """Whether `exc` is click's own usage error, help or abort (typer runs on a copy of click it keeps
    private: its errors are known by what they carry, an exit code and a way to show themselves)."""
    return hasattr(exc, "exit_code") and callable(getattr(exc, "show", None))

_HOLD = str.maketrans({"\u2011": "-", "\u00a0": " "})


def _held(text: str) -> str:
    """`text` with its breaks marked non-breaking: a hyphen inside a word or flag (`--output-format`,
    `rate-limits`) becomes U+2011, the space before a lone `-` (`| crontab -`) U+00A0; `HelpFormatter.write`
    turns both back, so what is printed (and copied) is plain ASCII."""
    import re

    return re.sub(r" -(?=\s|$)", "\u00a0-", re.sub(r"(?<=\S)-(?=\S)", "\u2011", text))


_ClickFormatter: Any = typer.Context.formatter_class  # click's HelpFormatter, reached through typer's public Context


class HelpFormatter(_ClickFormatter):  # type: ignore[misc]  # click's class: typer keeps click private
    """click's help formatting, wrapped where a reader can copy it: a line never breaks a word or a flag at
    its hyphen (`--output-` / `format`) nor leaves a lone `-` alone at a line's start (`| crontab` / `-`)."""

    def write_text(self, text: str) -> None:
        super().write_text(_held(text))

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        super().write_dl([(term, _held(definition)) for term, definition in rows], col_max, col_spacing)

    def write(self, string: str) -> None:
        super().write(string.translate(_HOLD))


class HelpContext(typer.Context):
    """A command's context, its help written by `HelpFormatter`."""

    formatter_class = HelpFormatter


class RoomsGroup(TyperGroup):
    """Maps RoomsError (and stray exceptions) to one clear line and the documented exit code."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # ctx: click's Context (typer keeps click private)
        ctx.meta["rooms_json"] = "--json" in args
        refusal = undecodable_input(args)
        if refusal is not None:
            from rooms_cli.cli.output import print_error
            from rooms_cli.core.errors import UsageError

            print_error(UsageError(refusal), ctx.meta["rooms_json"])
            ctx.exit(UsageError.exit_code)
        try:
            return super().parse_args(ctx, args)
        except Exception as exc:  # noqa: BLE001 - re-raised: click's usage error is first written as JSON under --json
            if _click_error(exc):
                _usage_as_json(ctx, exc)
            raise

    def invoke(self, ctx: Any) -> Any:
        begin()
        try:
            result = super().invoke(ctx)
            sys.stdout.flush()  # a failure to print is the command's, not the interpreter's at exit
            return result
        except (typer.Exit, typer.Abort):
            raise
        except (Exception, KeyboardInterrupt) as exc:  # one line and the documented exit code
            if _click_error(exc):
                _usage_as_json(ctx, exc)
                raise
            ctx.exit(failed(exc, ctx.meta.get("rooms_json", False)))


def _usage_as_json(ctx: Any, exc: Any) -> None:
    """Under --json a usage error (click's, exit code 2) is the JSON error document too, not click's text."""
    if ctx.meta.get("rooms_json") and exc.exit_code == 2:
        from rooms_cli.cli.output import print_error
        from rooms_cli.core.errors import UsageError

        where = getattr(getattr(exc, "ctx", None), "command_path", None) or ctx.command_path
        print_error(UsageError(f"{where}: {exc.format_message()} (see {where} --help)"), True)
        ctx.exit(UsageError.exit_code)


def convert(name: str, entry: Entry) -> Any:
    """`entry` as click runs it, converted by typer now: a group of commands whole, or one command; its help
    (and every subcommand's) written by HelpFormatter."""
    if isinstance(entry, typer.Typer):
        group = typer.main.get_group(entry)  # a group even of one command (`rooms config show`)
        group.name = name
        return _helped(group)
    single = typer.Typer(add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False)
    single.command(name)(entry)
    return _helped(typer.main.get_command(single))


def _helped(command: Any) -> Any:
    """`command` and its subcommands, their help written by HelpFormatter (click makes each one's context
    from its own context_class)."""
    command.context_class = HelpContext
    for sub in (getattr(command, "commands", None) or {}).values():
        _helped(sub)
    return command


def help_of(entry: Entry) -> SimpleNamespace:
    """What the command list needs of an entry not converted: its help text (a group's, or the command's
    docstring) and its flags."""
    if isinstance(entry, typer.Typer):
        text = entry.info.help
    else:
        text = inspect.getdoc(entry)
    return SimpleNamespace(help=text if isinstance(text, str) else None, short_help=None, hidden=False, deprecated=False)


class LazyCommands(Mapping[str, Any]):
    """The root's commands, each converted to click when it is looked up (iterating builds nothing)."""

    def __init__(self, entries: dict[str, Entry]) -> None:
        # typer's own order: the commands, then the groups of commands, each in the order given
        self.entries = {name: entry for name, entry in sorted(entries.items(), key=lambda item: isinstance(item[1], typer.Typer))}
        self.built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self.built:
            self.built[name] = convert(name, self.entries[name])
        return self.built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)


class LazyRoomsGroup(RoomsGroup):
    """The root group: the commands of `commands()`, converted when run; errors mapped once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(commands())  # type: ignore[assignment]

    context_class = HelpContext

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # typer's own goes through .items(), which would convert them all

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The help's command list as typer writes it, from each command's help text alone
        (tests/test_startup_imports.py compares it with the full conversion)."""
        lazy = self.commands
        assert isinstance(lazy, LazyCommands)
        listed: list[tuple[str, Any]] = [(name, lazy.built.get(name) or help_of(entry)) for name, entry in lazy.entries.items()]
        listed = [(name, cmd) for name, cmd in listed if not cmd.hidden]
        if listed:
            limit = formatter.width - 6 - max(len(name) for name, _ in listed)
            with formatter.section("Commands"):
                # click's own shortening, applied to a stand-in that carries the help text
                formatter.write_dl([(name, TyperCommand.get_short_help_str(cmd, limit)) for name, cmd in listed])


app = typer.Typer(
    name="rooms",
    cls=LazyRoomsGroup,
    help=ROOT,  # cli/help.py writes the root's page without typer from the same text
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
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help=VERSION_HELP),
) -> None:
    """Coordinate LLM agents from the shell."""
    from rooms_cli.store.locks import default_timeout

    default_timeout()  # a bad ROOMS_LOCK_TIMEOUT is one sentence for every command, not only those that lock


def commands() -> dict[str, Entry]:
    """`rooms <name>` -> its typer command function or sub-app (a group of commands), each module by a
    plain import: a broken one fails loudly. The modules import their parts inside the commands, so
    importing them all costs little; converting them is what stays lazy (LazyRoomsGroup)."""
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
        sync_cmd,
        top_cmd,
        watch_cmd,
    )
    from rooms_cli.cli.dispatch import declared_command
    from rooms_cli.operations import across, messaging, project, search

    return {
        "init": declared_command(project.init),
        "config": project_cmd.config_app,
        "demo": declared_command(across.demo),
        "tick": declared_command(across.tick),
        "doctor": declared_command(across.doctor),
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
        "agents": declared_command(messaging.agents),
        "spawn": messaging_cmd.spawn_cmd,
        "wait": messaging_cmd.wait_cmd,
        "attention": messaging_cmd.attention_cmd,
        "hook": messaging_cmd.hook_app,
        "watch": watch_cmd.watch_cmd,
        "search": declared_command(search.search),
        "mcp": declared_command(mcp_cmd.mcp),
        "files": files_cmd.files_app,
        "sync": sync_cmd.sync_cmd,
        "top": declared_command(top_cmd.top),
    }


def main() -> None:
    """Console-script entry point."""
    begin()  # a closed stdout or stderr gets /dev/null before anything opens a file
    app()
