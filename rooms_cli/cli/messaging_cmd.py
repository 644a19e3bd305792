"""`rooms send`, `inbox`, `status set`, `agents`, `spawn`, `wait`, `attention`, `hook claude-code …`."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli.dispatch import declared_command
from rooms_cli.cli.help import GROUPS
from rooms_cli.cli.options import commands
from rooms_cli.cli.shared import Run, shared
from rooms_cli.operations import messaging as ops

status_app = commands(GROUPS["status"])
hook_app = commands(GROUPS["hook"])
claude_app = commands("Claude Code hooks (see examples/claude-code/).\n\nExample: rooms hook claude-code prompt")
hook_app.add_typer(claude_app, name="claude-code")


send_cmd = declared_command(ops.send)
inbox_cmd = declared_command(ops.inbox)


status_app.command("set")(declared_command(ops.status_set))


spawn_cmd = declared_command(ops.spawn)


wait_cmd = declared_command(ops.wait)
attention_cmd = declared_command(ops.attention)
for _op in (ops.claude_stop, ops.claude_prompt, ops.claude_session_start):
    claude_app.command(_op.words[-1])(declared_command(_op))


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
