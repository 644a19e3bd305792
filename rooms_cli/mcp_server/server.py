"""`rooms mcp`: the tools of tools.py served over stdio with the official MCP SDK (`mcp`, the extra
`rooms-cli[mcp]`).

Each tool runs in a worker thread (the services are synchronous and take the same file locks as the
CLI, so several servers — one per coding-agent session — can share a `.rooms/`). A result is the
tool's JSON as text, and as `structuredContent` when it is an object. Any failure is a tool error
(`isError`) whose text is the CLI's `--json` error document, `{"error": {"code", "message",
"exit_code"}}`, with the CLI's codes and one-sentence messages; bad arguments are the code `usage`
(exit code 2). The server itself never stops on a tool's failure.
"""

from __future__ import annotations

import functools
import inspect
import json
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ValidationError

from rooms_cli import __version__
from rooms_cli.errors import RoomsError, UsageError, as_rooms_error
from rooms_cli.mcp_server.tools import READ_ONLY, TOOLS, Session

INSTRUCTIONS = (
    "rooms coordinates agents through plain files under .rooms/. You act as {me} in {root}. "
    "Board: task_next / task_claim take a task under a lease (keep the lease_id; a lost race is the "
    "error already_claimed: move on), task_done finishes it with a one-line summary. Messages: "
    "attention shows who else is here and what waits for you; send / reply / inbox talk to other "
    "agents; spawn starts a helper whose output arrives in your inbox (wait blocks until it is done). "
    "events returns what happened since a cursor."
)


def _jsonable(value: Any) -> Any:
    from rooms_cli.jsonable import to_jsonable

    return to_jsonable(value)


def ok_result(data: Any) -> CallToolResult:
    data = _jsonable(data)
    text = json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=data if isinstance(data, dict) else None)


def error_result(err: RoomsError) -> CallToolResult:
    """The CLI's --json error document, with its exit code, as an MCP tool error."""
    doc = err.fold().to_json()
    doc["error"]["exit_code"] = err.exit_code
    if doc["error"].get("data") is not None:
        doc["error"]["data"] = _jsonable(doc["error"]["data"])
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(doc, ensure_ascii=False))],
                          structured_content=doc, is_error=True)


def bind(session: Session, fn) -> Any:
    """`fn` as an MCP tool: the session filled in, run in a worker thread, errors turned into results."""
    import anyio.to_thread

    signature = inspect.signature(fn, eval_str=True)

    async def call(**arguments):
        try:
            data = await anyio.to_thread.run_sync(functools.partial(fn, session, **arguments))
        except Exception as exc:  # never let a tool's failure reach (and stop) the server
            return error_result(as_rooms_error(exc))
        return ok_result(data)

    call.__name__ = fn.__name__
    call.__doc__ = fn.__doc__
    call.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:], return_annotation=CallToolResult,
    )
    return call


def _usage_message(name: str, exc: ToolError) -> str:
    cause = exc.__cause__
    if isinstance(cause, ValidationError) and cause.errors():
        first = cause.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "arguments"
        more = f" (and {len(cause.errors()) - 1} more)" if len(cause.errors()) > 1 else ""
        return f"{name}: argument {where}: {first['msg']}{more}"
    return str(exc).removeprefix(f"Error executing tool {name}: ")


class RoomsServer(MCPServer):
    """MCPServer whose argument and unknown-tool errors are rooms errors (code usage, exit code 2)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        if self._tool_manager.get_tool(name) is None:
            return error_result(UsageError(f"no tool {name!r}; tools/list names them"))
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            return error_result(UsageError(_usage_message(name, exc)))


def build_server(session: Session) -> MCPServer:
    """A server offering every tool of tools.py to `session`."""
    server = RoomsServer(name="rooms", version=__version__,
                         instructions=INSTRUCTIONS.format(me=session.me, root=session.project.root),
                         log_level="WARNING")
    for name, fn in TOOLS.items():
        annotations = ToolAnnotations(read_only_hint=True) if name in READ_ONLY else None
        server.add_tool(bind(session, fn), name=name, description=inspect.getdoc(fn), annotations=annotations)
    return server


def serve(dir: str | None, as_: str | None) -> None:
    """Run the stdio server for the project at `dir` (or found upwards), acting as `as_` (or ROOMS_AGENT…)."""
    from rooms_cli.context import Context

    ctx = Context.open(dir, as_=as_)
    session = Session(project=ctx.project, config=ctx.config, me=ctx.me, default_room=ctx.room)
    build_server(session).run("stdio")
