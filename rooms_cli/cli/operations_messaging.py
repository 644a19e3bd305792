"""Messaging's other operations, each declared once (cli/declare.py): `rooms status set`, `rooms spawn`.

As in cli/operations_board.py, each declaration gives the typer command (messaging_cmd.py) and the MCP
tool's input schema (mcp_server/tools.py); typer parses them (not on the fast path: cli/fast.py).
"""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.declare import Mcp, McpArg, Param, operation
from rooms_cli.cli.operations import AS
from rooms_cli.cli.shared import Run
from rooms_cli.shapes import STR, record


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
    Param("prompt", help="The task for the new agent."),
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


# every operation declared here: typer registers them (messaging_cmd.py), MCP serves their tools (tools.py)
OPERATIONS = (status_set, spawn)
