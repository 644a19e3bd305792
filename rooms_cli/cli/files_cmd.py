"""`rooms files reserve|release|list|check`: say which files you are editing before you edit them."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run, shared
from rooms_cli.cli.values import duration_value

files_app = typer.Typer(
    help="File reservations: glob patterns an agent is editing, exclusive or shared, under a lease.\n\n"
         "Example: rooms files reserve 'src/auth/**' --as frontend --ttl 1h --reason 'login form'",
    no_args_is_help=True,
)

PatternsArg = Annotated[list[str], typer.Argument(help="Paths or globs relative to the project root: src/auth/**, *.md, docs/api.md.", show_default=False)]


def _show(held) -> None:
    for r in held:
        output.say(_line(r))
    if not held:
        output.say("no active reservations")


def _line(r) -> str:
    how = "exclusive" if r.exclusive else "shared"
    extra = f" — {r.reason}" if r.reason else ""
    lost = f" [LOST to {r.lost_to}: not enforced]" if r.lost_to else ""
    return f"{r.id}  {r.agent:<12} {how:<9} until {r.expires_at}  {' '.join(r.patterns)}{extra}{lost}"


@files_app.command("reserve")
@shared(as_=True)
def reserve_cmd(
    run: Run, patterns: PatternsArg,
    ttl: Annotated[float | None, typer.Option("--ttl", parser=duration_value("--ttl", positive=True), metavar="DURATION", help="How long it holds (default 30m); reserving the same patterns again renews it.", show_default=False)] = None,
    shared_: Annotated[bool, typer.Option("--shared", help="Others may hold shared reservations of these paths too (not exclusive ones).")] = False,
    reason: Annotated[str, typer.Option("--reason", help="What you are doing, shown to the others.")] = "",
) -> None:
    """Reserve files before editing them; refused (exit 3) when another agent holds an overlapping one.

    Example: rooms files reserve 'src/auth/**' 'docs/auth.md' --as frontend --ttl 1h
    """
    from rooms_cli.reservations.ledger import reserve

    r = reserve(run.project, run.me, patterns, ttl=ttl, exclusive=not shared_, reason=reason)
    run.emit(r, f"reserved {' '.join(r.patterns)} for {r.agent} ({'exclusive' if r.exclusive else 'shared'}) "
                f"until {r.expires_at}  [{r.id}]")


@files_app.command("release")
@shared(as_=True)
def release_cmd(
    run: Run,
    patterns: Annotated[list[str] | None, typer.Argument(help="Patterns (or reservation ids) to release.", show_default=False)] = None,
    all_: Annotated[bool, typer.Option("--all", help="Release every reservation you hold.")] = False,
) -> None:
    """Release your reservations: those holding PATTERN (or with that id), or --all.

    Example: rooms files release 'src/auth/**' --as frontend
    """
    from rooms_cli.errors import UsageError
    from rooms_cli.reservations.ledger import release

    if bool(patterns) == all_:
        raise UsageError("give the patterns (or reservation ids) to release, or --all, not both")
    released = release(run.project, run.me, patterns, all_=all_)
    run.emit(released, "\n".join(f"released {r.id} ({' '.join(r.patterns)})" for r in released))


@files_app.command("list")
@shared()
def list_cmd(
    run: Run,
    agent: Annotated[str | None, typer.Option("--agent", help="Only this agent's reservations.", show_default=False)] = None,
) -> None:
    """List the active reservations: agent, patterns, exclusive or shared, expiry.

    Example: rooms files list --json
    """
    from rooms_cli.reservations.ledger import active_reservations

    held = [r for r in active_reservations(run.project) if agent is None or r.agent == agent]
    run.emit(held, lambda: _show(held))


@files_app.command("check")
@shared(as_=True)
def check_cmd(run: Run, paths: Annotated[list[str], typer.Argument(help="Files to check (relative to here).", show_default=False)]) -> None:
    """Exit 3 naming the holder when another agent holds an exclusive reservation of a PATH.

    With --as (or ROOMS_AGENT), your own reservations do not count.

    Example: rooms files check src/auth/login.py --as backend
    """
    from rooms_cli.reservations.ledger import check_paths, project_paths

    result = check_paths(run.project, project_paths(run.project, paths), agent=run.me)
    problem = result.problem()
    if problem is not None:
        raise problem
    run.emit(result, f"free: {' '.join(result.paths)}")
