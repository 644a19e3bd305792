"""Messaging's other operations, each declared once (operations/declare.py): `rooms status set`, `rooms spawn`,
`rooms wait`, and `reply`, the MCP tool of `rooms send --reply-to N MESSAGE`.

As in operations/board.py, each declaration gives the typer command (messaging_cmd.py) and the MCP
tool's input schema (mcp_server/tools.py); typer parses them (not on the fast path: cli/fast.py).
"""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run
from rooms_cli.core.shapes import BOOL, INT, MESSAGE, SENT, STR, record
from rooms_cli.operations import hot as operations
from rooms_cli.operations.declare import REQUIRED, Mcp, McpArg, Param, operation
from rooms_cli.operations.hot import AS, LIMIT, nonblank
from rooms_cli.operations.values import duration_value

WAIT_DEFAULT_S = 300.0  # how long the MCP tool wait blocks when no timeout_seconds is given
WAITED = record({"agent": STR, "timed_out": BOOL, "spawns": {"type": "array"}, "pending": {"type": "array"},
                 "messages": {"type": "array", "items": MESSAGE}, "remaining": INT})


@operation("status", "set", shared=AS, params=(
    Param("text", help="One line, e.g. 'Working on frontend' ('' clears it).",
          mcp=McpArg(help="One line, e.g. 'Working on the login form' ('' clears it).")),
), mcp=Mcp("status_set", "Set your status line", record({"agent": STR, "status": STR}), idempotent=True))
def status_set(run: Run, text: str) -> None:
    """Set your status line.

    Example: rooms status set "Working on the login form"
    """
    from rooms_cli.messaging.status import set_status

    status = set_status(run.project, run.me, text)
    run.emit(status, f"{run.me}: {status['status'] or '(status cleared)'}")


@operation("spawn", shared=AS, params=(
    Param("prompt", help="The task for the new agent.", parse=nonblank("spawn prompt")),
    Param("description", default=None, help="3-5 words; also names the agent.", flags=("--description",), show_default=False),
    Param("profile", default=None, help="Run it as this agent definition (its model and directive).", flags=("--profile",),
          complete="agents", show_default=False),
), mcp=Mcp("spawn", "Spawn a helper agent", record({"id": STR, "alias": STR, "parent": STR, "status": STR})))
def spawn(run: Run, prompt: str, description: str | None, profile: str | None) -> None:
    """Start a new agent on PROMPT and return at once; its output arrives in your inbox.

    Example: rooms spawn "Write the API for the login form" --description "API work"
    """
    from rooms_cli.messaging.spawn import start_spawn

    started = start_spawn(run.project, run.config, run.me, prompt, description=description, profile=profile)
    if run.json:
        return output.print_json(started)
    how = " ".join(started.runner) if started.runner else started.model
    output.say(f"spawned {started.alias} ({started.id}) via {how}; its output will arrive in {run.me}'s inbox (rooms wait)")


@operation("wait", shared=AS, params=(
    Param("timeout", "duration", None, "Give up after this long (90, 90s, 15m); exit 4.", ("--timeout",), parse=duration_value,
          metavar="DURATION", show_default=False,
          mcp=McpArg(name="timeout_seconds", kind="float", default=WAIT_DEFAULT_S, help="Give up after this many seconds.", ge=0,
                     le=3600)),
    LIMIT,
), mcp=Mcp("wait", "Wait for your spawns", WAITED, long=True))
def wait(run: Run, timeout: float | None) -> None:
    """Block until all your spawns (and theirs) finished, then print your unread messages.

    Example: rooms wait --timeout 10m
    """
    from rooms_cli.cli import progress
    from rooms_cli.messaging.inbox import take_unread
    from rooms_cli.messaging.status import touch
    from rooms_cli.messaging.wait import wait_for_spawns

    touch(run.project, run.me)
    with progress.live_line_sync(progress.spawns_line(run.project, run.me), progress.wanted(run.json)):
        result = wait_for_spawns(run.project, run.me, timeout)
    if result.timed_out:
        raise result.timeout_error(timeout)
    messages = take_unread(run.project, run.me)
    if run.json:
        return output.print_json({**result.to_json(), "messages": [m.shown(read=False) for m in messages]})
    if result.finished:
        output.note("spawns finished: " + ", ".join(f"{s.alias} ({s.status})" for s in result.finished))
    output.show_messages(messages)
    if not messages:
        output.say("Nothing left to do: no running spawns, no unread messages.")


# `rooms send --reply-to N MESSAGE` as its own MCP tool: send's command line and body, the tool taking N and the message
reply = operations.send.tool(
    Mcp("reply", "Reply to a message", SENT),
    reply_to=McpArg(name="n", kind="int_or_str", default=REQUIRED,
                    help="The message in your inbox: its number, or (when a git merge left a number shared) its `ref`, any unique "
                         "prefix of its id."),
    message=McpArg(help="Your answer."),
)

# every operation declared here: typer registers them (messaging_cmd.py; reply's command is send's), MCP serves their
# tools (tools.py)
OPERATIONS = (status_set, spawn, wait, reply)
