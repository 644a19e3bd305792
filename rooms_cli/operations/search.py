"""`rooms search`, declared once (operations/declare.py): its options, its body, its MCP tool (docs/search.md).

On the fast path (listed in operations/hot.py's OPERATIONS): agents search in loops, and a warm search
is mostly start-up. This module imports only the declaration vocabulary; the body imports the search
part (and sqlite3 with it) when it runs.
"""

from __future__ import annotations

import sys
import time

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run
from rooms_cli.core.shapes import HIT, envelope
from rooms_cli.operations.declare import Mcp, McpArg, Param, operation
from rooms_cli.search import FAMILIES  # the package alone: no sqlite3 on the fast path's other commands

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from rooms_cli.search.engine import Hit, Results

MCP_LIMIT = 100  # hits a tool call returns at most: a model's context is not a terminal
MARK = "**"  # around each match in a snippet (search/engine.py)


@operation("search", shared=("dir", "json_"), params=(
    Param("query", help='What to look for: words (all must match), "a phrase", prefix*, -word, a OR b.'),
    Param("within", "strs", None, "Only these: chat, messages, tasks, groups, memories (comma-separated or repeated).",
          ("--in",), metavar="KINDS", show_default=False,
          mcp=McpArg(choices=FAMILIES, help="Only these kinds of document (default: all): --in on the command line.")),
    Param("room", default=None, help="Only chat and tasks of this room.", flags=("--room",), complete="rooms", show_default=False),
    Param("who", default=None, help="Only what this name wrote (said, sent, created, broadcast, replied, learned).",
          flags=("--from",), complete="agents", show_default=False,
          mcp=McpArg(help="Only what this name wrote: --from on the command line.")),
    Param("since", default=None, help="Only since this time (2026-11-20, 2026-11-20T09:00Z) or this long ago (90m, 2d).",
          flags=("--since",), metavar="WHEN", show_default=False),
    Param("limit", "int", 20, "At most this many hits, best first (up to 1000).", ("--limit", "-n"), min=1,
          mcp=McpArg(ge=1, le=MCP_LIMIT, help=f"At most this many hits, best first (up to {MCP_LIMIT}).")),
), mcp=Mcp("search", "Search everything said and planned", envelope("hits", HIT), read_only=True))
def search(run: Run, query: str, within: list[str] | None, room: str | None, who: str | None, since: str | None,
           limit: int) -> None:
    """Search chat, inboxes, tasks, group broadcasts and lessons at once, best match first.

    A query that starts with '-' goes after '--' (rooms search -- '-draft spec').

    Example: rooms search '"rate limit" -draft' --in chat,tasks --since 7d
    """
    from rooms_cli.search.engine import search as search_project

    progress = Progress()
    try:
        results = search_project(run.project, query, within=within, room=room, who=who, since=since, limit=limit,
                                 progress=progress if sys.stderr.isatty() else None)
    finally:
        progress.clear()
    run.emit([hit.to_json() for hit in results.hits], lambda: show(results, query))


def show(results: Results, query: str) -> None:
    """The hits for a person: where each lives, who wrote it when, its reference, the match marked."""
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


class Progress:
    """The first build's progress on stderr, one line redrawn in place (a terminal only): shown once a
    build has taken SHOW_AFTER seconds, redrawn at most every REDRAW seconds, cleared when it ends."""

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

    def clear(self) -> None:
        if self.drawn:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
