"""`rooms send`, `inbox`, `status set`, `agents`, `spawn`, `wait`, `attention`, `hook claude-code …`."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli import operations, operations_messaging, output
from rooms_cli.cli.output import show_messages
from rooms_cli.cli.shared import Run, declared_command, shared
from rooms_cli.cli.values import duration_value

status_app = typer.Typer(help="Your status line, shown to every other agent.\n\nExample: rooms status set 'Working on frontend'", no_args_is_help=True)
hook_app = typer.Typer(help="Hooks for coding-agent hosts.\n\nExample: rooms hook claude-code stop < hook.json", no_args_is_help=True)
claude_app = typer.Typer(help="Claude Code hooks (see examples/claude-code/).\n\nExample: rooms hook claude-code prompt", no_args_is_help=True)
hook_app.add_typer(claude_app, name="claude-code")
TimeoutOpt = Annotated[float | None, typer.Option("--timeout", parser=duration_value("--timeout"), metavar="DURATION", help="Give up after this long (90, 90s, 15m); exit 4.", show_default=False)]


send_cmd = declared_command(operations.send)
inbox_cmd = declared_command(operations.inbox)


status_app.command("set")(declared_command(operations_messaging.status_set))


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


@shared(as_=True)
def wait_cmd(run: Run, timeout: TimeoutOpt = None) -> None:
    """Block until all your spawns (and theirs) finished, then print your unread messages.

    Example: rooms wait --timeout 10m
    """
    from rooms_cli.messaging.inbox import take_unread
    from rooms_cli.messaging.status import touch
    from rooms_cli.messaging.wait import wait_for_spawns

    touch(run.project, run.me)
    from rooms_cli.cli import progress

    with progress.live_line_sync(progress.spawns_line(run.project, run.me), progress.wanted(run.json)):
        result = wait_for_spawns(run.project, run.me, timeout)
    if result.timed_out:
        raise result.timeout_error(timeout)
    messages = take_unread(run.project, run.me)
    if run.json:
        return output.print_json({**result.to_json(), "messages": [m.shown(read=False) for m in messages]})
    if result.finished:
        output.note("spawns finished: " + ", ".join(f"{s.alias} ({s.status})" for s in result.finished))
    show_messages(messages)
    if not messages:
        output.say("Nothing left to do: no running spawns, no unread messages.")


attention_cmd = declared_command(operations.attention)
for _op in (operations.claude_stop, operations.claude_prompt, operations.claude_session_start):
    claude_app.command(_op.words[-1])(declared_command(_op))


@hook_app.command("pre-commit")
@shared(as_=True)
def pre_commit_cmd(
    run: Run,
    install: Annotated[bool, typer.Option("--install", help="Write .git/hooks/pre-commit to run this on every commit.")] = False,
) -> None:
    """git pre-commit hook: refuse (exit 3) a commit whose staged paths another agent reserved exclusively.

    Install it once per clone with `rooms hook pre-commit --install`. Your own reservations (--as,
    ROOMS_AGENT) do not count; outside a rooms project it allows everything.

    Example: rooms hook pre-commit --install
    """
    from rooms_cli.reservations import precommit
    from rooms_cli.reservations.ledger import check_paths

    if install:
        path = precommit.install_hook()
        return run.emit({"installed": str(path)}, f"installed {path}: commits now check file reservations")
    result = check_paths(run.project, precommit.staged_paths(run.project), agent=run.me)
    problem = result.problem()
    if problem is not None:
        problem.message += " — release or wait, or commit without those paths (git commit --no-verify skips the check)"
        raise problem
    run.emit(result)
