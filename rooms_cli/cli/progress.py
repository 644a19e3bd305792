"""Live status lines for long waits (`rooms group wait`, `group ask`, `rooms wait`, `rooms tick`): on a terminal only.

While the wait runs, stderr shows one line that rich redraws in place — who has answered, the
elapsed time, what is still pending — and clears when the wait ends. Piped or under `--json`
nothing extra is printed. rich.live is imported only when it is shown (start-up stays light).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rooms_cli.core.errors import RoomsError

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

REFRESH = 0.25


def wanted(as_json: bool) -> bool:
    """Only for a person at a terminal: never under --json, never when stderr is piped."""
    return not as_json and sys.stderr.isatty()


@contextmanager
def live_line(describe: Callable[[float], str], enabled: bool) -> Iterator[None]:
    """While inside, redraw `describe(seconds elapsed)` on stderr (when enabled): rich's own refresh
    thread redraws the line, so a blocking wait and an event loop alike keep it moving."""
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
            except (RoomsError, OSError, LookupError, ValueError):  # a status that cannot be read right now is no reason to stop the wait
                return Text(f"waiting… {time.monotonic() - started:.0f}s", style="dim")

    with Live(_Line(), console=err_console(), transient=True, refresh_per_second=1 / REFRESH):
        yield


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
