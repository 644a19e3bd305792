"""`rooms send`, `inbox`, `status set`, `agents`, `spawn`, `wait`, `attention`, `hook claude-code …`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from typer.core import TyperGroup

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run, declared_command, shared
from rooms_cli.operations import hot as operations
from rooms_cli.operations import messaging as operations_messaging

if TYPE_CHECKING:
    from typer import _click as click  # the click typer runs on (cli/app.py)


class StatusGroup(TyperGroup):
    """`rooms status` alone is the overview; `rooms status TEXT` is `rooms status set TEXT` (its options too)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        valued = {"--as", "--room", "-r", "--dir"}
        positional = [a for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or args[i - 1] not in valued)]
        if positional and positional[0] not in self.commands and not {"-h", "--help"} & set(args):
            args = ["set", *args]
        return super().parse_args(ctx, args)


status_app = typer.Typer(cls=StatusGroup, invoke_without_command=True)
hook_app = typer.Typer(help="Hooks for coding-agent hosts.\n\nExample: rooms hook claude-code stop < hook.json", no_args_is_help=True)
claude_app = typer.Typer(help="Claude Code hooks; `rooms hook claude-code settings` prints the .claude/settings.json that "
                         "runs them.\n\nExample: rooms hook claude-code prompt", no_args_is_help=True)
hook_app.add_typer(claude_app, name="claude-code")


send_cmd = declared_command(operations.send)
inbox_cmd = declared_command(operations.inbox)


status_app.command("set")(declared_command(operations_messaging.status_set))


@status_app.callback()
@shared(as_=True, room=True)
def status_cmd(run: Run, ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        operations.status.body(run)


status_cmd.__doc__ = operations.status.help  # the declaration's help (operations/hot.py)


@shared()
def agents_cmd(run: Run) -> None:
    """List every agent with its status and whether it is idle (spawns included).

    Example: rooms agents --json
    """
    from rooms_cli.messaging.roster import roster
    from rooms_cli.messaging.spawn import reap_all

    reap_all(run.project)
    entries = roster(run.project, run.config)
    for e in entries:
        if e.problem:
            output.warn(f"{e.name}: {e.problem['message']}")
    if run.json:
        return output.print_json(entries)
    for e in entries:
        state = ("idle" if e.idle else "active") + (f", spawn of {e.spawn['parent']} ({e.spawn['status']})" if e.spawn else "")
        output.say(f"{e.name:<20} {e.kind:<8} {state:<32} {e.status}".rstrip())


spawn_cmd = declared_command(operations_messaging.spawn)


wait_cmd = declared_command(operations_messaging.wait)
attention_cmd = declared_command(operations.attention)
for _op in (operations.claude_stop, operations.claude_prompt, operations.claude_session_start):
    claude_app.command(_op.words[-1])(declared_command(_op))


@claude_app.command("settings")
def claude_settings_cmd() -> None:
    """Print the hooks for .claude/settings.json: session-start, prompt and stop (merge them into yours).

    Example: rooms hook claude-code settings > .claude/settings.json
    """
    from rooms_cli.store import files

    output.verbatim(files.package_text("data", "examples", "claude-code-settings.json"))


@hook_app.command("pre-commit")
@shared(as_=True)
def pre_commit_cmd(
    run: Run,
    install: Annotated[bool, typer.Option("--install", help="Write .git/hooks/pre-commit and pre-merge-commit to run this on every commit.")] = False,
) -> None:
    """git pre-commit hook: refuse (exit 3) a commit whose staged paths another agent reserved exclusively.

    Install it once per clone with `rooms hook pre-commit --install` (it also runs for a merge that
    commits). Your own reservations (--as, ROOMS_AGENT) do not count; outside a rooms project it allows
    everything. A reservations ledger that cannot be read refuses the commit (exit 1). Cherry-picks,
    rebases and fast-forwards run no hook: check them in CI with `rooms files check --range A..B`.

    Example: rooms hook pre-commit --install
    """
    from rooms_cli.reservations import precommit
    from rooms_cli.reservations.ledger import check_paths

    if install:
        paths = precommit.install_hook()
        return run.emit({"installed": [str(p) for p in paths]},
                        f"installed {' and '.join(map(str, paths))}: commits and merges now check file reservations")
    result = check_paths(run.project, precommit.staged_paths(run.project), agent=run.me)
    problem = result.problem()
    if problem is not None:
        problem.message += " — release or wait, or commit without those paths (git commit --no-verify skips the check)"
        raise problem
    run.emit(result)
