"""The `rooms` command: the root typer app, its error handler, and the registration of every part.

Each part's commands live in their own module; `rooms_cli.registry.COMMANDS` names them and this
file only wires them. Errors raised anywhere below are mapped here, once, to a message and an exit code.
"""

from __future__ import annotations

import os
import sys

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


class RoomsGroup(TyperGroup):
    """Maps RoomsError (and stray exceptions) to one clear line and the documented exit code."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["rooms_json"] = "--json" in args
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context):
        from rooms_cli.errors import ExitCode, RoomsError

        try:
            return super().invoke(ctx)
        except RoomsError as err:
            if os.environ.get("ROOMS_DEBUG"):
                raise
            from rooms_cli.cli.output import print_error

            print_error(err, ctx.meta.get("rooms_json", False))
            ctx.exit(err.exit_code)
        except (typer.Exit, typer.Abort, click.ClickException):
            raise
        except KeyboardInterrupt:
            ctx.exit(130)
        except BrokenPipeError:
            # output piped into `head`: not an error of ours
            try:
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115
            except OSError:
                pass
            ctx.exit(0)
        except Exception as exc:  # a bug, or a file we cannot use: one line; ROOMS_DEBUG=1 shows the traceback
            if os.environ.get("ROOMS_DEBUG"):
                raise
            from rooms_cli.cli.output import print_error
            from rooms_cli.errors import as_rooms_error

            print_error(as_rooms_error(exc), ctx.meta.get("rooms_json", False))
            ctx.exit(ExitCode.ERROR)


app = typer.Typer(
    name="rooms",
    cls=RoomsGroup,
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


def _register_commands() -> None:
    """Add every command named in rooms_cli.registry.COMMANDS (an import that fails, fails loudly)."""
    from rooms_cli.registry import COMMANDS, resolve

    for name, target in COMMANDS.items():
        command = resolve(target)
        if isinstance(command, typer.Typer):
            app.add_typer(command, name=name)
        else:
            app.command(name)(command)


_register_commands()


def main() -> None:
    """Console-script entry point."""
    app()
