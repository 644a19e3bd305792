"""How the command line shows what runs across every part (operations/across.py): tick, doctor, demo."""

from __future__ import annotations

import json

from rooms_cli.cli import output, progress
from rooms_cli.cli.guard import Quiet
from rooms_cli.cli.views import listens, renders
from rooms_cli.core.text import count
from rooms_cli.operations import across as ops

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.cli.shared import Run


def _stamp() -> str:
    from rooms_cli.store.clock import now_iso

    return now_iso()[:19] + "Z"


class _TickLine(progress.RoundtableLine):
    """`rooms tick`'s listener of the roundtables it runs: the live line on a terminal (entered around
    the tick), or, in a cron log, a line when a long roundtable starts."""

    def __init__(self, run: Run) -> None:
        super().__init__()
        self.run, self.live = run, progress.wanted(run.json)
        self.shown: Any = None

    def on_event(self, kind: str, data: dict[str, Any]) -> None:
        super().on_event(kind, data)
        if kind == "start" and not self.live and not self.run.json:  # a cron log hears of a long roundtable as it starts
            output.say(f"{_stamp()} roundtables: start {data['format']} with {', '.join(data['participants'])} "
                       f"in room {data['room']} ({count(data['planned_turns'], 'turn')})")

    __call__ = on_event

    def __enter__(self) -> _TickLine:
        self.shown = progress.live_line(self.describe, self.live)
        self.shown.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shown.__exit__(*exc)


@listens(ops.tick)
def _tick_line(run: Run, values: dict[str, Any]) -> _TickLine:
    return _TickLine(run)


@renders(ops.tick)
def _ticked(run: Run, report: dict[str, Any], values: dict[str, Any]) -> None:
    if run.json:
        output.print_json(report)
    else:
        _show_tick(report, values["dry_run"])
    for failure in report["failed"]:
        output.error_line(f"tick step {failure['step']} failed: {failure['message']}")
    if report["failed"]:
        raise Quiet(1)


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


@renders(ops.doctor)
def _doctored(run: Run, report: dict[str, Any], values: dict[str, Any]) -> None:
    if run.json:
        output.print_json(report)
    else:
        for f in report["findings"]:
            output.say(f"{f.severity}: {f.message}", style="red" if f.severity == "error" else "yellow")
            output.say(f"  fix: {f.fix}", style="dim")
        output.say("All good." if not report["findings"] else f"{count(report['errors'], 'error')}, {count(report['warnings'], 'warning')}.")
    if not report["ok"]:
        raise Quiet(1)


@listens(ops.demo)
def _showcase(run: Run, values: dict[str, Any]) -> Callable[[str, str], None] | None:
    """The demo's lines as they happen (under --json they come with the result)."""
    if run.json:
        return None

    def show(kind: str, text: str) -> None:
        if kind == "section":
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

    return show


@renders(ops.demo)
def _demoed(run: Run, summary: dict[str, Any], values: dict[str, Any]) -> None:
    if run.json:
        output.print_json(summary)
        return
    output.say("")
    if not summary["kept"]:
        output.say(f"Done. The demo ran in {summary['dir']}, now removed; `rooms demo --keep` keeps its files.", style="bold")
        return
    output.say(f"Done. The files are in {summary['dir']}/.rooms — look around, or run:", style="bold")
    output.say(f"  cd {summary['dir']} && rooms transcript --last 20")
