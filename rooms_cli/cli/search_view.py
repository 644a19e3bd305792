"""How the command line shows `rooms search` (operations/search.py): the hits, and the first build's progress."""

from __future__ import annotations

import sys
import time

from rooms_cli.cli import output
from rooms_cli.cli.views import listens, renders
from rooms_cli.operations import search as ops

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.cli.shared import Run
    from rooms_cli.search.engine import Hit

MARK = "**"  # around each match in a snippet (search/engine.py)


class Progress:
    """The first build's progress on stderr, one line redrawn in place (a terminal only): shown once a
    build has taken SHOW_AFTER seconds, redrawn at most every REDRAW seconds, cleared when it ends (the
    search's listener: entered around it, called with the bytes read so far and in all)."""

    SHOW_AFTER = 0.5
    REDRAW = 0.2

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.drawn = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.started < self.SHOW_AFTER or now - self.drawn < self.REDRAW or not total:
            return
        self.drawn = now
        sys.stderr.write(f"\rindexing .rooms/ for search: {done * 100 // total}% ({done / 1e6:.1f} of {total / 1e6:.1f} MB)\x1b[K")
        sys.stderr.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.drawn:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


@listens(ops.search)
def _progress(run: Run, values: dict[str, Any]) -> Progress | None:
    return Progress() if sys.stderr.isatty() else None


@renders(ops.search)
def _hits(run: Run, found: ops.Found, values: dict[str, Any]) -> None:
    results, query = found.results, " ".join(values["query"])  # the words as given
    if run.json:
        output.print_json([hit.to_json() for hit in results.hits])
        return
    if not results.hits:
        output.say(f"no hits for {query!r}")
        return
    for hit in results.hits:
        when = hit.ts[:16].replace("T", " ")
        about = [hit.where, *([hit.status] if hit.kind == "task" else []), hit.who, when]
        output.write(f"{hit.ref}  {' · '.join(part for part in about if part)}", style="bold")
        _snippet(_shown(hit))
    count = len(results.hits)
    more = f"{count} of {results.total} hits (--limit shows more)" if results.remaining else f"{count} hit{'s' * (count != 1)}"
    output.say(more)


def _shown(hit: Hit) -> str:
    """A task's snippet with its title before it when the match is elsewhere in the task."""
    if hit.kind == "task" and hit.snippet.replace(MARK, "") != hit.title:
        return f"{hit.title} — {hit.snippet}"
    return hit.snippet


def _snippet(snippet: str) -> None:
    """The snippet indented; on a terminal the matches in colour, piped as they are (between **)."""
    if not sys.stdout.isatty():
        output.write("  " + snippet)
        return
    output.write("  ", end="")
    for n, piece in enumerate(snippet.split(MARK)):
        output.write(piece, style="bold yellow" if n % 2 else None, end="")
    output.write("")
