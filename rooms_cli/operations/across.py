"""What runs across every part, declared once (operations/declare.py): `rooms tick`, `rooms doctor`, `rooms demo`."""

from __future__ import annotations

from rooms_cli.operations.declare import Param, operation

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.context import Context


@operation("tick", shared=("dir", "json_"), params=(
    Param("dry_run", "bool", False, "Print what would be done; change nothing.", ("--dry-run",)),
))
def tick(ctx: Context, dry_run: bool) -> dict[str, Any]:
    """Do the scheduled work: fire due schedule slots, run queued roundtables, expire leases, reap spawns.

    Meant for cron: `rooms schedule crontab` prints the line to install. Every step runs even when
    one fails; then each failure is one line on stderr and the exit status is 1.

    Example: rooms tick --dry-run
    """
    from rooms_cli.across.tick import run_tick

    listener = ctx.on_event
    return run_tick(ctx.project, ctx.config, dry_run=dry_run, on_event={"roundtables": listener} if listener else None)


@operation("doctor", shared=("dir", "json_"), params=(
    Param("offline", "bool", False, "Skip the provider reachability checks.", ("--offline",)),
))
def doctor(ctx: Context, offline: bool) -> dict[str, Any]:
    """Check .rooms/ integrity (logs, state files, agents, config, leases, spawns, providers); exit 1 on errors.

    Example: rooms doctor --offline
    """
    from rooms_cli.across.doctor import run_doctor

    return run_doctor(ctx.project, ctx.config, providers=not offline)


@operation("demo", shared=("json_",), params=(
    Param("dir", default=None, help="Where to build the demo project (default: a new temporary directory).", flags=("--dir",),
          show_default=False),
    Param("only", "strs", None, "Run only these sections, comma-separated: chat, board, roundtable, groups, messaging.",
          ("--only",), show_default=False),
    Param("keep", "bool", False, "Keep the temporary directory to look around (a --dir is always kept).", ("--keep",)),
))
def demo(ctx: Context, dir: str | None, only: list[str] | None, keep: bool) -> dict[str, Any]:
    """Run a short showcase on the offline model in a temporary directory, removed afterwards unless --keep.

    Example: rooms demo --keep
    """
    from pathlib import Path

    from rooms_cli.across.demo import demo_directory, run_demo

    events: list[dict[str, str]] = []

    def show(kind: str, text: str) -> None:
        events.append({"kind": kind, "text": text})
        if ctx.on_event is not None:
            ctx.on_event(kind, text)

    kept = keep or dir is not None
    with demo_directory(Path(dir) if dir is not None else None, keep=kept) as target:
        summary = {**run_demo(target, show, only), "kept": kept}
    return {**summary, "events": events}


OPERATIONS = (tick, doctor, demo)
