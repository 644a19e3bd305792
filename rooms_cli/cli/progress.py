"""Live status lines for long waits (`rooms group wait`, `group ask`, `rooms wait`, `rooms tick`): on a terminal only.

While the wait runs, stderr shows one line that rich redraws in place — who has answered, the
elapsed time, what is still pending — and clears when the wait ends. Piped or under `--json`
nothing extra is printed. rich.live is imported only when it is shown (start-up stays light).
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

from rooms_cli.core.text import count

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

REFRESH = 0.25


def wanted(as_json: bool) -> bool:
    """Only for a person at a terminal: never under --json, never when stderr is piped."""
    return not as_json and sys.stderr.isatty()


@asynccontextmanager
async def live_line(describe: Callable[[float], str], enabled: bool):
    """While inside, redraw `describe(elapsed seconds)` on stderr every REFRESH seconds (when enabled)."""
    if not enabled:
        yield
        return
    from rich.live import Live
    from rich.text import Text

    from rooms_cli.cli.output import err_console

    started = time.monotonic()

    def text() -> Text:
        try:
            return Text(describe(time.monotonic() - started), style="dim")
        except Exception:  # a status that cannot be read right now is no reason to stop the wait
            return Text(f"waiting… {time.monotonic() - started:.0f}s", style="dim")

    with Live(text(), console=err_console(), transient=True, auto_refresh=False) as live:
        async def redraw() -> None:
            while True:
                await asyncio.sleep(REFRESH)
                live.update(text(), refresh=True)

        task = asyncio.create_task(redraw())
        try:
            yield
        finally:
            task.cancel()


def group_line(project, name: str) -> Callable[[float], str]:
    """`▣ rev · 3s · answered: sec · pending: perf` for the broadcast in flight of group `name`."""
    from rooms_cli.groups.status import status

    def describe(elapsed: float) -> str:
        shown = status(project, name)
        flight = shown["in_flight"] or {}
        pending = flight.get("pending", [])
        answered = [m["handle"] for m in shown["members"] if m["handle"] not in pending]
        return (f"▣ {name} · {elapsed:.0f}s · answered: {', '.join(answered) or 'nobody yet'}"
                f" · pending: {', '.join(pending) or 'nobody'}")

    return describe


@contextmanager
def live_line_sync(describe: Callable[[float], str], enabled: bool) -> Iterator[None]:
    """`live_line` for a blocking wait: rich's own refresh thread redraws the line."""
    if not enabled:
        yield
        return
    from rich.live import Live
    from rich.text import Text

    from rooms_cli.cli.output import err_console

    started = time.monotonic()

    class _Line:
        def __rich__(self) -> Text:
            try:
                return Text(describe(time.monotonic() - started), style="dim")
            except Exception:  # a status that cannot be read right now is no reason to stop the wait
                return Text(f"waiting… {time.monotonic() - started:.0f}s", style="dim")

    with Live(_Line(), console=err_console(), transient=True, refresh_per_second=1 / REFRESH):
        yield


def spawns_line(project, agent: str) -> Callable[[float], str]:
    """`rooms wait`: `waiting for 2 spawns · 4s · done: a · running: b, c`."""
    from rooms_cli.messaging.wait import running_tree, tree_of

    def describe(elapsed: float) -> str:
        running = running_tree(project, agent, set())
        done = [s.alias for s in tree_of(project, agent) if s not in running and not s.active]
        return (f"waiting for {count(len(running), 'spawn')} · {elapsed:.0f}s · running: {', '.join(s.alias for s in running) or '-'}"
                + (f" · done: {', '.join(done)}" if done else ""))

    return describe


class RoundtableLine:
    """`rooms tick`: `◆ debate · 12s · turn 3/8 · spoke: ana, bo · pending: cy` for the roundtable it runs.

    Fed by the roundtable's own events (`on_event`); between roundtables the line is empty.
    """

    def __init__(self) -> None:
        self.current: dict[str, Any] | None = None
        self.spoke: list[str] = []
        self.turn = 0
        self.started = 0.0

    def on_event(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "start":
            self.current, self.spoke, self.turn, self.started = data, [], 0, time.monotonic()
        elif kind in ("turn", "skip") and self.current is not None:
            self.turn = data.get("turn", self.turn + 1)
            if data.get("speaker") and data["speaker"] not in self.spoke:
                self.spoke.append(data["speaker"])
        elif kind == "lessons":
            self.current = None

    def describe(self, elapsed: float) -> str:
        rt = self.current
        if rt is None:
            return ""
        pending = [p for p in rt.get("participants", []) if p not in self.spoke]
        return (f"◆ {rt['format']} · {time.monotonic() - self.started:.0f}s · turn {self.turn}/{rt.get('planned_turns', '?')}"
                f" · spoke: {', '.join(self.spoke) or 'nobody yet'} · pending: {', '.join(pending) or 'nobody'}")
