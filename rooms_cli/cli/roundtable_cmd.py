"""Commands of the roundtable part: `rooms roundtable formats|run|queue`, `rooms schedule`, `rooms memory`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from rooms_cli.cli import operations_roundtable, output
from rooms_cli.cli.options import complete_agent_list
from rooms_cli.cli.shared import Run, declared_command, shared
from rooms_cli.cli.values import finite_number
from rooms_cli.roundtable.sanitize import DEFAULT_MAX_CHARS, MIN_MAX_CHARS

roundtable_app = typer.Typer(
    help="Conversations among a few agents, turn by turn, in a format.\n\n"
    "Example: rooms roundtable run standup --topic 'launch week'",
    no_args_is_help=True,
)
schedule_app = typer.Typer(
    help="The daily schedule of roundtables (.rooms.yaml → schedule:) and the cron line that runs it.\n\n"
    "Example: rooms schedule && rooms schedule crontab",
)
memory_app = typer.Typer(
    help="Lessons agents learned in conversations (.rooms/memories/<agent>.jsonl).\n\nExample: rooms memory list analyst",
    no_args_is_help=True,
)

TopicOpt = Annotated[str | None, typer.Option("--topic", "-t", help="What to talk about (default: what matters most this week).")]
ParticipantsOpt = Annotated[
    str | None,
    typer.Option("--participants", "-p", autocompletion=complete_agent_list, help="Comma-separated agent ids and random:N (default: drawn in the format's range)."),
]
RoomOpt = Annotated[str | None, typer.Option("--room", "-r", help="Write into this room (default: a new roundtable-… room).")]
TurnsOpt = Annotated[int | None, typer.Option("--turns", min=1, help="Number of turns (default: drawn in the format's range).")]
MaxCharsOpt = Annotated[int, typer.Option("--max-chars", min=MIN_MAX_CHARS, help="Cap on each turn, cut at a word.")]
ForceOpt = Annotated[bool, typer.Option("--force", help="Allow --turns and participant counts outside the format's range.")]
PaceOpt = Annotated[float, typer.Option("--pace", parser=finite_number("--pace", minimum=0), metavar="SECONDS", help="Human-like gap: each pause is drawn in [S, 8S/3] seconds (the source's 3–8 s is --pace 3).")]


def _request(fmt, topic, participants, room, turns, max_chars, pace, force):
    from rooms_cli.roundtable.orchestrator import RoundtableRequest

    people = [p.strip() for p in participants.split(",") if p.strip()] if participants else None
    return RoundtableRequest(fmt, topic=topic, participants=people, room=room, turns=turns, max_chars=max_chars, pace=pace,
                             force=force)


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


@roundtable_app.command("run")
@shared()
def run_cmd(
    run: Run,
    format: Annotated[str, typer.Argument(help="Format name (see `rooms roundtable formats`).")],
    topic: TopicOpt = None, participants: ParticipantsOpt = None, room: RoomOpt = None, turns: TurnsOpt = None,
    max_chars: MaxCharsOpt = DEFAULT_MAX_CHARS, pace: PaceOpt = 0.0, force: ForceOpt = False,
    explain: Annotated[bool, typer.Option("--explain", help="Print each turn's speaker weights.")] = False,
) -> None:
    """Run a roundtable now, printing each turn as it happens, then extract lessons.

    Example: rooms roundtable run debate --topic 'monorepo or not' --participants analyst,hustler
    """
    from rooms_cli.roundtable.orchestrator import run_roundtable_sync


    def show(kind: str, data: dict[str, Any]) -> None:
        if run.json:
            return
        if kind == "start":
            output.say(f"{data['format']} · {data['topic']} · {', '.join(data['participants'])} · "
                       f"{data['planned_turns']} turns · room {data['room']}", style="bold")
        elif kind in ("turn", "skip"):
            if explain and "opens" in data:
                output.say(f"   opens: the format's rule ({data['opens']})", style="dim")
            elif explain:
                output.say("   weights: " + "  ".join(f"{a} {w:.2f}" for a, w in data["weights"].items()), style="dim")
            said = data["text"] if kind == "turn" else "(nothing usable twice: turn skipped)"
            output.say(f"{data['turn']:>2} {data['speaker']}: {said}")
        elif kind == "lessons":
            count = sum(len(v) for v in data["lessons"].values())
            if count:
                output.say(f"learned {count} lesson{'' if count == 1 else 's'} (rooms memory list)", style="dim")
            for who, why in data.get("problems", {}).items():
                output.say(f"no lessons learned: {why}" if who == "*" else f"   {who}: {why}", style="dim")

    result = run_roundtable_sync(run.project, run.config, _request(format, topic, participants, room, turns, max_chars, pace, force),
                                 on_event=show)
    if room is None:
        from rooms_cli.roundtable.tick import end_own_room

        end_own_room(run.project, result.room)
    if run.json:
        output.print_json(result)


@roundtable_app.command("queue")
@shared()
def queue_cmd(
    run: Run,
    format: Annotated[str | None, typer.Argument(help="Format to enqueue; leave out to list the queue.")] = None,
    topic: TopicOpt = None, participants: ParticipantsOpt = None, room: RoomOpt = None, turns: TurnsOpt = None,
    max_chars: MaxCharsOpt = DEFAULT_MAX_CHARS, pace: PaceOpt = 0.0, force: ForceOpt = False,
) -> None:
    """Enqueue a roundtable for the next `rooms tick`, or list the queue.

    Example: rooms roundtable queue retro --topic 'last sprint' && rooms tick
    """
    from rooms_cli.roundtable import queue
    from rooms_cli.roundtable.formats import get_format
    from rooms_cli.roundtable.speakers import check_turns

    if format is None:
        items = queue.list_items(run.project)
        if run.json:
            output.print_json(items)
            return
        for item in items:
            extra = item.roundtable or item.error or ""
            output.say(f"{item.id}  {item.status:<8} {item.request.format:<14} {item.enqueued}  {extra}".rstrip())
        if not items:
            output.say("The queue is empty. Add one with `rooms roundtable queue FORMAT`.")
        return
    if turns is not None:  # refused now, not at the next tick
        check_turns(get_format(run.config, format), turns, force)
    else:
        get_format(run.config, format)
    item, _new = queue.enqueue(run.project, _request(format, topic, participants, room, turns, max_chars, pace, force))
    run.emit(item, f"Queued {item.id} ({format}); `rooms tick` will run it.")


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


@schedule_app.command("crontab")
@shared()
def crontab_cmd(
    run: Run,
    every: Annotated[int, typer.Option("--every", min=1, max=59, help="Minutes between ticks.")] = 5,
) -> None:
    """Print a crontab line that runs `rooms tick` for this project (absolute paths; logs to .rooms/run/tick.log).

    Install it with: (crontab -l 2>/dev/null; rooms schedule crontab) | crontab -

    Example: rooms schedule crontab --every 10
    """
    from rooms_cli.tick import crontab_line

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
        output.say("No schedule: add slots under schedule: in .rooms.yaml (see examples/schedule/).")
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
        return f" (failed after {run['attempts']} attempts: {run['error']})"
    if run.get("room"):  # what became of it, and where to read it: rooms transcript --room ROOM
        return f" ({run['status']}, room {run['room']})"
    return ""


memory_app.command("list")(declared_command(operations_roundtable.memory_list))
memory_app.command("forget")(declared_command(operations_roundtable.memory_forget))
