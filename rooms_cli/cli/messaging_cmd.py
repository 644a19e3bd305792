"""`rooms send`, `inbox`, `status set`, `agents`, `spawn`, `wait`, `attention`, `hook claude-code …`."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from rooms_cli.cli import output
from rooms_cli.cli.dispatch import declared_command, invoke
from rooms_cli.cli.help import GROUPS
from rooms_cli.cli.options import commands
from rooms_cli.cli.shared import Run, shared
from rooms_cli.operations import messaging as ops


class StatusGroup(TyperGroup):
    """`rooms status` alone is the overview; `rooms status TEXT` is `rooms status set TEXT` (its options too)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # ctx: click's Context (typer keeps click private)
        valued = {"--as", "--room", "-r", "--dir"}
        positional = [a for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or args[i - 1] not in valued)]
        if positional and positional[0] not in self.commands and not {"-h", "--help"} & set(args):
            args = ["set", *args]
        return super().parse_args(ctx, args)


status_app = commands(GROUPS["status"], no_args_is_help=False, cls=StatusGroup, invoke_without_command=True)
hook_app = commands(GROUPS["hook"])
claude_app = commands("Claude Code hooks; `rooms hook claude-code settings` prints the .claude/settings.json that "
                      "runs them.\n\nExample: rooms hook claude-code prompt")
hook_app.add_typer(claude_app, name="claude-code")


send_cmd = declared_command(ops.send)
inbox_cmd = declared_command(ops.inbox)


status_app.command("set")(declared_command(ops.status_set))


@status_app.callback()
@shared(as_=True, room=True)
def status_cmd(run: Run, ctx: typer.Context) -> None:
    if ctx.invoked_subcommand is None:
        invoke(ops.status, run, {})


spawn_cmd = declared_command(ops.spawn)


wait_cmd = declared_command(ops.wait)
attention_cmd = declared_command(ops.attention)
for _op in (ops.claude_stop, ops.claude_prompt, ops.claude_session_start):
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
