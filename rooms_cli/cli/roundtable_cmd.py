"""Commands of the roundtable part: `rooms roundtable formats|run|queue`, `rooms schedule`, `rooms memory`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rooms_cli.cli import output
from rooms_cli.cli.dispatch import declared_command
from rooms_cli.cli.help import GROUPS
from rooms_cli.cli.options import commands
from rooms_cli.cli.shared import Run, shared
from rooms_cli.core.text import count
from rooms_cli.operations import roundtable as ops

roundtable_app = commands(GROUPS["roundtable"])
schedule_app = commands(GROUPS["schedule"], no_args_is_help=False)
memory_app = commands(GROUPS["memory"])


@roundtable_app.command("formats")
@shared()
def formats_cmd(run: Run) -> None:
    """List the conversation formats: agents, turns, temperature, who opens, purpose.

    Example: rooms roundtable formats --json
    """
    from rooms_cli.roundtable.formats import load_formats

    formats = list(load_formats(run.config).values())
    if run.json:
        output.print_json(formats)
        return
    from rich.table import Table

    table = Table("format", "agents", "turns", "temp", "opens", "purpose", box=None, pad_edge=False)
    for f in formats:
        mark = "" if f.source == "built-in" else f" ({f.source})"
        table.add_row(f.name + mark, f"{f.min_agents}–{f.max_agents}", f"{f.min_turns}–{f.max_turns}",
                      f"{f.temperature:g}", f.opens, f.purpose)
    output.console().print(table)


roundtable_app.command("run")(declared_command(ops.roundtable_run))
roundtable_app.command("queue")(declared_command(ops.roundtable_queue))


@schedule_app.callback(invoke_without_command=True)
@shared()
def schedule_cmd(run: Run, ctx: typer.Context) -> None:
    """Show today's schedule slots (UTC): next fire time, whether today's roll won or lost, and what
    became of the roundtable it queued (retrying, failed).

    Example: rooms schedule --json
    """
    if ctx.invoked_subcommand is not None:
        return
    _show_schedule(run)


@schedule_app.command("example")
def schedule_example_cmd() -> None:
    """Print a 24-slot day of roundtables for the five roundtable voices (rooms init --example roundtable),
    to paste into .rooms.yaml and edit.

    Example: rooms schedule example >> .rooms.yaml
    """
    from rooms_cli.store import files

    output.verbatim(files.package_text("data", "examples", "schedule.yaml"))


@schedule_app.command("crontab")
@shared()
def crontab_cmd(
    run: Run,
    every: Annotated[int, typer.Option("--every", min=1, max=59, metavar="MINUTES", help="Minutes between ticks.")] = 5,
) -> None:
    """Print a crontab line that runs `rooms tick` for this project (absolute paths; logs to .rooms/run/tick.log).

    Install it with: (crontab -l 2>/dev/null; rooms schedule crontab) | crontab -

    Example: rooms schedule crontab --every 10
    """
    from rooms_cli.across.tick import crontab_line

    line = crontab_line(run.project, every=every)
    run.emit({"line": line}, line)


def _show_schedule(run: Run) -> None:
    from rooms_cli.roundtable.schedule import today_status
    from rooms_cli.store.clock import now

    rows = today_status(run.project, run.config, now())
    if run.json:
        output.print_json(rows)
        return
    if not rows:
        output.say("No schedule: add slots under schedule: in .rooms.yaml (rooms schedule example prints a 24-slot day to start from).")
        return
    for row in rows:
        if len(row["today"]) > 3:  # a busy cron slot: counts, not every time
            from collections import Counter

            today = ", ".join(f"{n} {st}" for st, n in Counter(t["status"] for t in row["today"]).items())
        else:
            today = ", ".join(f"{t['at'][11:16]} {t['status']}{_run_note(t)}" for t in row["today"]) or "not today"
        output.say(f"{row['name']:<22} {row['when']:<18} {row['format']:<14} p={row['probability']:<4g} "
                   f"today: {today:<18} next: {row['next'] or 'never'}")


def _run_note(occurrence: dict[str, Any]) -> str:
    run = occurrence.get("run") or {}
    if run.get("status") == "retrying":
        return f" (failed {run['attempts']}×, retry after {run['retry_after']}: {run['error']})"
    if run.get("status") == "failed":
        return f" (failed after {count(run['attempts'], 'attempt')}: {run['error']})"
    if run.get("room"):  # what became of it, and where to read it: rooms transcript --room ROOM
        return f" ({run['status']}, room {run['room']})"
    return ""


memory_app.command("list")(declared_command(ops.memory_list))
memory_app.command("forget")(declared_command(ops.memory_forget))
