"""The roundtable section of `rooms demo`: a standup and a debate on the offline model."""

from __future__ import annotations

from rooms_cli.core.text import count
from rooms_cli.project.config import load_config
from rooms_cli.roundtable.orchestrator import RoundtableRequest, run_roundtable_sync
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

DEMOS = (
    ("standup", "the pricing page launch", ["boss", "analyst", "hustler", "writer", "wildcard"], 6),
    ("debate", "ship the beta now or wait for the metrics", ["analyst", "hustler"], 6),
)


def run(project: Project, show: Callable[[str, str], None]) -> None:
    config = load_config(project)
    for fmt, topic, participants, turns in DEMOS:
        show("cmd", f"rooms roundtable run {fmt} --topic '{topic}' --participants {','.join(participants)} --turns {turns}")

        def on_event(kind: str, data: dict[str, Any]) -> None:
            if kind == "turn":
                show("line", f"{data['turn']:>2} {data['speaker']}: {data['text']}")

        result = run_roundtable_sync(project, config, RoundtableRequest(fmt, topic=topic, participants=participants,
                                                                         turns=turns), on_event=on_event)
        lessons = sum(len(v) for v in result.lessons.values())
        show("italic", f"{count(len(result.turns), 'turn')} in room {result.room}; {count(lessons, 'lesson')} extracted into .rooms/memories/")
    show("cmd", "rooms memory list analyst")
    from rooms_cli.agents.memories import list_lessons

    for record in list_lessons(project, "analyst")[-2:]:
        show("line", record["lesson"])
    show("italic", "the next conversation's prompts carry these lessons; `rooms tick` from cron runs a daily schedule")
