"""How the command line shows roundtables and memories (operations/roundtable.py)."""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.views import listens, renders
from rooms_cli.core.text import count
from rooms_cli.operations import roundtable as ops

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.cli.shared import Run
    from rooms_cli.roundtable.orchestrator import RoundtableResult


@listens(ops.roundtable_run)
def _turns(run: Run, values: dict[str, Any]) -> Callable[[str, dict[str, Any]], None] | None:
    """Each turn printed as it happens (none under --json); with --explain, each turn's speaker weights."""
    if run.json:
        return None
    explain = values["explain"]

    def show(kind: str, data: dict[str, Any]) -> None:
        if kind == "start":
            output.say(f"{data['format']} · {data['topic']} · {', '.join(data['participants'])} · "
                       f"{count(data['planned_turns'], 'turn')} · room {data['room']}", style="bold")
        elif kind in ("turn", "skip"):
            if explain and "opens" in data:
                output.say(f"   opens: the format's rule ({data['opens']})", style="dim")
            elif explain:
                output.say("   weights: " + "  ".join(f"{a} {w:.2f}" for a, w in data["weights"].items()), style="dim")
            said = data["text"] if kind == "turn" else "(nothing usable twice: turn skipped)"
            output.say(f"{data['turn']:>2} {data['speaker']}: {said}")
        elif kind == "lessons":
            learned = sum(len(v) for v in data["lessons"].values())
            if learned:
                output.say(f"learned {count(learned, 'lesson')} (rooms memory list)", style="dim")
            for who, why in data.get("problems", {}).items():
                output.say(f"no lessons learned: {why}" if who == "*" else f"   {who}: {why}", style="dim")

    return show


@renders(ops.roundtable_run)
def _ran(run: Run, result: RoundtableResult, values: dict[str, Any]) -> None:
    if run.json:  # a person has read every turn as it happened
        output.print_json(result)


@renders(ops.roundtable_queue)
def _queue(run: Run, result: Any, values: dict[str, Any]) -> None:
    if values["format"] is not None:
        run.emit(result, f"Queued {result.id} ({values['format']}); `rooms tick` will run it.")
        return
    if run.json:
        return output.print_json(result)
    for item in result:
        extra = item.roundtable or item.error or ""
        output.say(f"{item.id}  {item.status:<8} {item.request.format:<14} {item.enqueued}  {extra}".rstrip())
    if not result:
        output.say("The queue is empty. Add one with `rooms roundtable queue FORMAT`.")


@renders(ops.memory_list)
def _lessons(run: Run, lessons: list[dict[str, Any]], values: dict[str, Any]) -> None:
    if run.json:
        output.print_json(lessons)
        return
    for r in lessons:
        output.say(f"{r.get('id', '')}  {r.get('agent', ''):<10} {r.get('lesson', '')}  [{r.get('source', '')}]")
    if not lessons:
        output.say("No lessons yet: they are extracted after each roundtable.")


@renders(ops.memory_forget)
def _forgot(run: Run, forgotten: dict[str, Any], values: dict[str, Any]) -> None:
    removed, agent = forgotten["removed"], forgotten["agent"]
    run.emit(forgotten, f"Forgot {count(len(removed), 'lesson')} of {agent}.")
