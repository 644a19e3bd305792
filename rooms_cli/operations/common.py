"""What several operations declare alike: the shared options they take, their parameters, list pages."""

from __future__ import annotations

from rooms_cli.operations.declare import REQUIRED, McpArg, Param
from rooms_cli.operations.values import choice_value, duration_value, name_value, text_value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.operations.declare import Parser

AS_ROOM = ("as_", "room", "dir", "json_")  # the shared options of a command that acts in a room
AS = ("as_", "dir", "json_")  # a command that acts as someone
DIR_JSON = ("dir", "json_")  # a command that acts as no one
IN_ROOM = ("room", "dir", "json_")  # a command that reads a room

DEFAULT_LIMIT = 50  # records a list tool returns unless `limit` says otherwise


def named(what: str) -> Callable[[str], Parser]:
    """The `parse` of an option naming a `what` strictly (a lane, an agent): a bad name is exit 2."""
    return lambda flag: name_value(flag, what)


def nonblank(what: str) -> Callable[[str], Parser]:
    """The `parse` of required text (a title, a message, a summary): blank is exit 2, as chat's empty message."""
    return lambda flag: text_value(flag, what)


def statuses() -> tuple[str, ...]:
    """What `--status` takes on the board: a task's statuses, and pending."""
    from rooms_cli.board.model import STATUSES

    return (*STATUSES, "pending")


def _status(flag: str) -> Parser:
    return choice_value(flag, statuses)


def positive_duration(flag: str) -> Parser:
    """A lease's or a reservation's length: more than zero, at most the longest lease (store/clock.MAX_LEASE_S)."""
    from rooms_cli.store.clock import MAX_LEASE_S

    return duration_value(flag, positive=True, maximum=MAX_LEASE_S)


TASK_ID = Param("task_id", help="Task id (any unique prefix, like git).", mcp=McpArg(help="Task id, or any unique prefix of it."))
LANE = Param("lane", default=None, help="Only this agent's lane.", flags=("--lane",), show_default=False, parse=named("lane"),
             metavar="LANE")
STATUS = Param("status", default=None, help="Only tasks with this status (or pending).", flags=("--status",), parse=_status,
               show_default=False, metavar="STATUS",
               mcp=McpArg(help="Only tasks with this status (todo, doing, done, blocked, failed, cancelled, pending)."))
LEASE = Param("lease", "duration", None, "Lease length, e.g. 90s, 15m, 1h (default 10m).", ("--lease",), parse=positive_duration,
              metavar="DURATION", show_default=False, mcp=McpArg(help="Lease length such as 90s, 15m, 1h (default 10m)."))
# the lease to act under: the one claim printed, exported as ROOMS_LEASE; over MCP the one task_claim returned
LEASE_ID = Param("lease_id", default=None, flags=("--lease-id",), envvar="ROOMS_LEASE", show_default=False,
                 help="The lease id printed by claim (default: ROOMS_LEASE, else the lease you — ROOMS_AGENT or --as — hold on the task).",
                 mcp=McpArg(default=REQUIRED, help="The lease id that task_claim or task_next returned."))
SYNC = Param("sync", "bool", None, "Count it only once it is on the git remote (rooms sync; default: sync.claims in .rooms.yaml).",
             ("--sync",), mcp=McpArg(default=None, help="Count it only once it is on the git remote (rooms sync): the "
                                                         "answer waits for the remote; default: sync.claims in .rooms.yaml."))
RESULT_REF = Param("result_ref", default=None, flags=("--result-ref",), show_default=False,
                   help="What the result is: file:<path>, msg:, task:, inbox:, group: or lesson:<id> (as rooms search prints it).")
# a list tool's page: the command line prints the whole list (limit None), a tool at most `limit` records
LIMIT = Param("limit", "int", None, "At most this many records (the rest are counted in `remaining`).", cli=False,
              mcp=McpArg(default=DEFAULT_LIMIT, ge=1, le=1000))
SINCE = Param("since", default=None, help="The `next_cursor` of the last call: continue after it.", cli=False)


def listed(name: str, items: list[Any], limit: int | None, since: str | None, key: Callable[[Any], object] | None = None,
           **context: Any) -> Any:
    """`items` as a list operation returns them: the whole list when no `limit` is asked for (the command
    line), else the page of at most `limit` after the cursor `since`, under `name` in the list envelope
    (core/shapes.py `page`), with `context` (the room) beside it."""
    if limit is None:
        return items
    from rooms_cli.core.shapes import page

    return page(name, items, limit=limit, after=since, key=key, **context)
