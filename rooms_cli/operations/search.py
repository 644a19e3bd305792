"""`rooms search`, declared once (operations/declare.py): its options, its body, its MCP tool (docs/search.md).

Agents search in loops, and a warm search is mostly start-up: like every declared operation it is read
by the fast path. This module imports only the declaration vocabulary and the search package's kinds;
the body imports the search part (and sqlite3 with it) when it runs.
"""

from __future__ import annotations

from rooms_cli.core.shapes import HIT, envelope
from rooms_cli.operations.declare import Mcp, McpArg, Param, operation
from rooms_cli.search import FAMILIES  # the package alone: no sqlite3 on the fast path's other commands

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.context import Context
    from rooms_cli.search.engine import Results

MCP_LIMIT = 100  # hits a tool call returns at most: a model's context is not a terminal


class Found:
    """What a search returns: its results; as a tool's JSON the hits in the list envelope (`remaining`
    counts the matches left out: a search is not paged, it is narrowed)."""

    def __init__(self, results: Results) -> None:
        self.results = results

    def to_json(self) -> dict[str, Any]:
        hits = [hit.to_json() for hit in self.results.hits]
        return {"hits": hits, "count": len(hits), "remaining": self.results.remaining, "next_cursor": None}


@operation("search", shared=("dir", "json_"), params=(
    Param("query", "strs", help='What to look for: words (all must match; quotes are not needed), "a phrase", prefix*, '
          "-word, a OR b.", show_default=False, mcp=McpArg(kind="str", help='What to look for: words (all must match), '
                                                                               '"a phrase", prefix*, -word, a OR b.')),
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
), mcp=Mcp("search", "Search everything said and planned", envelope("hits", HIT), read_only=True,
           description="Search chat transcripts, inboxes, tasks, group broadcasts and lessons at once, best match first. A "
                       "query is words (all must match), \"a phrase\", prefix*, -word, a OR b. Each hit has its kind, id, "
                       "where it lives (room, inbox, lane, group), who wrote it, when, a snippet with the matches between ** "
                       "and its `ref` (msg:, task:, inbox:, group: or lesson:<id>), which task_done takes as an artifact or "
                       "result_ref. Not paged: `remaining` counts the matches left out; narrow "
                       "the query or raise `limit`."))
def search(ctx: Context, query: str | list[str], within: list[str] | None, room: str | None, who: str | None,
           since: str | None, limit: int) -> Found:
    """Search chat, inboxes, tasks, group broadcasts and lessons at once, best match first.

    The words may be given as they are (rooms search rate limit) or as one argument; a phrase keeps its
    double quotes inside single ones. A query that starts with '-' goes after '--' (rooms search -- -draft spec).

    Example: rooms search '"rate limit" -draft' --in chat,tasks --since 7d
    """
    from rooms_cli.search.engine import search as search_project

    text = query if isinstance(query, str) else " ".join(query)  # the command line's words, or the MCP tool's string
    return Found(search_project(ctx.project, text, within=within, room=room, who=who, since=since, limit=limit,
                                progress=ctx.on_event))



OPERATIONS = (search,)
