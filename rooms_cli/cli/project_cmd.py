"""`rooms init`, `rooms config show`, `rooms demo`, `rooms tick`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run, shared
from rooms_cli.core.text import count
from rooms_cli.operations.values import choice_value

config_app = typer.Typer(help="Project configuration (.rooms.yaml).\n\nExample: rooms config show --json", no_args_is_help=True)


def _example_names() -> list[str]:
    from rooms_cli.project.init import example_sets

    return sorted(example_sets())


@shared(dir=False)
def init_cmd(
    run: Run,
    path: Annotated[Path, typer.Argument(help="Project directory (default: the current one).")] = Path("."),
    example: Annotated[str | None, typer.Option("--example", parser=choice_value("--example", _example_names), metavar="SET", help="Add an example agent set: roundtable, gamedev or dev.")] = None,
) -> None:
    """Create .rooms/, .rooms.yaml and the default room here (running it again changes nothing that exists).

    Example: rooms init --example roundtable
    """
    from rooms_cli.project.init import initialize

    result = initialize(path, example=example)
    if result.nested_in:
        output.warn(f"{result.root} is inside the rooms project {result.nested_in}: this makes a nested project, "
                    "and commands run under it will use the new one")
    if run.json:
        output.print_json(result)
        return
    if not result.changed:
        output.say(f"Nothing to do: {result.root} is already set up (kept {count(len(result.kept), 'existing file')}).")
    else:
        output.say(f"Initialized rooms in {result.root}")
        for item in result.created:
            output.say(f"  created {item}")
    for item in result.skipped:
        output.say(f"  skipped {item}")
    if result.changed:
        if result.agents:
            output.say("Next: rooms chat 'hello everyone'   (or rooms demo for a tour)")
        else:  # chatting needs an agent: a bare project is told to make one first
            output.say("Next: rooms agent new helper && rooms chat 'hello everyone'\n"
                       "      (or rooms init --example dev for six example agents, or rooms demo for a tour)")


@config_app.command("show")
@shared()
def config_show(run: Run) -> None:
    """Print the effective configuration (built-in providers included, secrets masked).

    Example: rooms config show --json
    """

    shown = run.config.masked()
    if run.json:
        output.print_json(shown)
        return
    import yaml

    source = run.project.relative(run.config.path) if run.config.path else "(no .rooms.yaml: defaults)"
    output.say(f"# effective config from {source}")
    output.say(yaml.safe_dump(shown, sort_keys=False, allow_unicode=True).rstrip())


@shared(dir=False)
def demo_cmd(
    run: Run,
    dir: Annotated[Path | None, typer.Option("--dir", metavar="DIR", help="Where to build the demo project (default: a new temporary directory).")] = None,
    only: Annotated[list[str] | None, typer.Option("--only", metavar="SECTIONS", help="Run only these sections, comma-separated: chat, board, roundtable, groups, messaging.")] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the temporary directory to look around (a --dir is always kept).")] = False,
) -> None:
    """Run a short showcase on the offline model in a temporary directory, removed afterwards unless --keep.

    Example: rooms demo --keep
    """
    from rooms_cli.across.demo import demo_directory, run_demo

    events: list[dict[str, Any]] = []

    def show(kind: str, text: str) -> None:
        if run.json:
            events.append({"kind": kind, "text": text})
        elif kind == "section":
            output.say("")
            output.say(f"── {text} ──", style="bold cyan")
        elif kind == "italic":
            output.say(f"  {text}", style="italic dim")
        elif kind == "cmd":
            output.say(f"$ {text}", style="bold")
        elif kind == "record":  # a task's done record, as JSON: printed as `rooms task done` prints it
            for line in output.record_lines(json.loads(text)):
                output.say(line)
        else:
            output.say(f"  {text}")

    kept = keep or dir is not None
    with demo_directory(dir, keep=kept) as target:
        summary = {**run_demo(target, show, only), "kept": kept}
    if run.json:
        output.print_json({**summary, "events": events})
        return
    output.say("")
    if not kept:
        output.say(f"Done. The demo ran in {summary['dir']}, now removed; `rooms demo --keep` keeps its files.", style="bold")
        return
    output.say(f"Done. The files are in {summary['dir']}/.rooms — look around, or run:", style="bold")
    output.say(f"  cd {summary['dir']} && rooms transcript --last 20")


@shared()
def tick_cmd(
    run: Run,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print what would be done; change nothing.")] = False,
) -> None:
    """Do the scheduled work: fire due schedule slots, run queued roundtables, expire leases, reap spawns.

    Meant for cron: `rooms schedule crontab` prints the line to install. Every step runs even when
    one fails; then each failure is one line on stderr and the exit status is 1.

    Example: rooms tick --dry-run
    """
    from rooms_cli.across.tick import run_tick
    from rooms_cli.cli import progress

    line = progress.RoundtableLine()
    live = progress.wanted(run.json)

    def on_roundtable(kind: str, data: dict[str, Any]) -> None:
        line.on_event(kind, data)
        if kind == "start" and not live and not run.json:  # a cron log hears of a long roundtable as it starts
            output.say(f"{_stamp()} roundtables: start {data['format']} with {', '.join(data['participants'])} "
                       f"in room {data['room']} ({count(data['planned_turns'], 'turn')})")

    with progress.live_line_sync(line.describe, live):
        report = run_tick(run.project, run.config, dry_run=dry_run, on_event={"roundtables": on_roundtable})
    if run.json:
        output.print_json(report)
    else:
        _show_tick(report, dry_run)
    for failure in report["failed"]:
        output.error_line(f"tick step {failure['step']} failed: {failure['message']}")
    if report["failed"]:
        raise typer.Exit(1)


def _stamp() -> str:
    from rooms_cli.store.clock import now_iso

    return now_iso()[:19] + "Z"


def _show_tick(report: dict[str, Any], dry_run: bool) -> None:
    """One time-stamped line per action (cron appends them to .rooms/run/tick.log); an idle tick says
    "Nothing to do." on a terminal only, so the log does not grow a line a minute."""
    import sys

    prefix = "would " if dry_run else ""
    did = False
    for step, actions in report["steps"].items():
        if isinstance(actions, dict) and "error" in actions:
            continue  # said on stderr
        for action in actions or []:
            did = True
            output.say(f"{_stamp()} {step}: {prefix}{action.get('action', '')} {action.get('detail', '')}".rstrip())
    if not did and (dry_run or sys.stdout.isatty()):
        output.say("Nothing to do." if not dry_run else "Nothing would be done.")


@shared()
def doctor_cmd(
    run: Run,
    offline: Annotated[bool, typer.Option("--offline", help="Skip the provider reachability checks.")] = False,
) -> None:
    """Check .rooms/ integrity (logs, state files, agents, config, leases, spawns, providers); exit 1 on errors.

    Example: rooms doctor --offline
    """
    from rooms_cli.across.doctor import run_doctor

    report = run_doctor(run.project, run.config, providers=not offline)
    if run.json:
        output.print_json(report)
    else:
        for f in report["findings"]:
            output.say(f"{f.severity}: {f.message}", style="red" if f.severity == "error" else "yellow")
            output.say(f"  fix: {f.fix}", style="dim")
        output.say("All good." if not report["findings"] else f"{count(report['errors'], 'error')}, {count(report['warnings'], 'warning')}.")
    if not report["ok"]:
        raise typer.Exit(1)
