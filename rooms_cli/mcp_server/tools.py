"""The tools of `rooms mcp`: every declared operation with an MCP tool (rooms_cli/operations/), and `events`.

A declared operation is its tool: the name, title, description, hints and result schema are its `Mcp`,
the input schema comes from its parameters (`declared_arguments`), and a call runs its body — the body
the command line runs — in a Context of the session (its project, identity and config; the call's
`room`, else the session's). Each argument goes through the parameter's own value parser, as on the
command line, so a bad one is the same usage error (naming the argument: server.py). Nothing else is
written here per tool. The one tool declared apart is `events`, which has no command twin (`rooms watch
--json` follows the same events live; the tool answers a poll from a cursor).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field

from rooms_cli.core.shapes import INT, STR, record
from rooms_cli.operations import every
from rooms_cli.operations.common import DEFAULT_LIMIT
from rooms_cli.operations.declare import REQUIRED, ROOM_MCP_HELP, McpArg
from rooms_cli.operations.declare import Operation as Declared
from rooms_cli.operations.messaging import WAIT_DEFAULT_S
from rooms_cli.project.config import Config
from rooms_cli.project.context import Context
from rooms_cli.store.paths import Project

__all__ = ["DEFAULT_LIMIT", "TOOLS", "WAIT_DEFAULT_S", "Operation", "Session", "declared_arguments"]


@dataclass
class Session:
    """The project and identity a server was started with (--dir, --as / ROOMS_AGENT), and its event cursors."""

    project: Project
    config: Config
    me: str
    default_room: str
    cursors: dict[str, Any] = field(default_factory=dict)  # cursor token -> its watch Follower (cursors.py)

    def room(self, room: str | None) -> str:
        from rooms_cli.store.ids import validate_name

        return self.default_room if room is None else validate_name(room, "room id")

    def context(self, room: str | None = None) -> Context:
        """The Context of one call: the session's project, identity and config, in `room` (else the session's)."""
        return Context(self.project, as_=self.me, room=self.default_room if room is None else room, config=self.config)


@dataclass(frozen=True)
class Operation:
    """One tool as the server offers it: its name, title, description, hints and result schema, and
    `fn(session, **arguments)`, what a call runs (arguments by the tool's names, validated)."""

    name: str
    fn: Callable[..., Any]
    title: str
    description: str
    returns: dict[str, Any]
    read_only: bool = False
    destructive: bool = False  # may delete or overwrite what others rely on
    idempotent: bool = False  # calling it twice with the same arguments changes nothing more
    long: bool = False  # blocks (wait, gather): reports progress while it runs
    declared: Declared | None = None  # the operation it is the tool of (None: events)
    # works on the project's files alone (no model, no process, no network, no waiting but for a file lock): the
    # server runs it on its event loop, not in a worker thread. A predicate of (session, arguments) when some
    # arguments make it slow (a claim synced through the git remote, a send that wakes its recipients).
    quick: bool | Callable[[Session, Any], bool] = False

    def runs_inline(self, session: Session, arguments: BaseModel) -> bool:
        """Whether this call is quick (see `quick`): the server then runs it without a thread hand-off."""
        return self.quick(session, arguments) if callable(self.quick) else self.quick

    def arguments(self) -> dict[str, Any]:
        """Each argument's annotation (pydantic's: type, checks, description) and default, `...` when required:
        from the declaration of a declared operation, else from the function's typed signature after the session."""
        if self.declared is not None:
            return declared_arguments(self.declared)
        parameters = list(inspect.signature(self.fn, eval_str=True).parameters.values())[1:]
        return {p.name: (p.annotation, ... if p.default is inspect.Parameter.empty else p.default) for p in parameters}


_KINDS: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "strs": list[str], "duration": str,
                          "int_or_str": int | str, "optional_strs": list[str | None]}


def declared_arguments(op: Declared) -> dict[str, tuple[Any, Any]]:
    """The MCP arguments of a declared operation: its parameters the tool takes (`mcp` not False), by
    their MCP name, kind and default (an McpArg's where it says otherwise), and `room` where the command
    takes --room. A duration is a string checked as the CLI checks it; a None default makes it nullable."""
    fields: dict[str, tuple[Any, Any]] = {}
    for param in op.params:
        if param.mcp is False:
            continue
        arg = param.mcp if isinstance(param.mcp, McpArg) else McpArg()
        kind = arg.kind or param.kind
        default = param.mcp_default
        annotation = _KINDS[kind]
        if arg.choices:  # a value, or each value of a list, one of these
            one: Any = Literal[arg.choices]
            annotation = list[one] if kind == "strs" else one
        annotation = annotation if default is not None else annotation | None
        checks: list[Any] = [AfterValidator(duration)] if kind == "duration" else []
        finite = False if kind == "float" else None  # NaN and infinity are not JSON (the CLI's finite_number)
        checks.append(Field(description=arg.help or param.help, ge=arg.ge, le=arg.le, allow_inf_nan=finite, min_length=arg.min_length,
                            max_length=arg.max_length))
        fields[arg.name or param.name] = (Annotated[(annotation, *checks)], ... if default is REQUIRED else default)
    if "room" in op.shared:
        fields["room"] = (Annotated[str | None, Field(description=ROOM_MCP_HELP)], None)
    return fields


def duration(value: str | None) -> str | None:
    """A duration argument checked as the CLI checks its options: a bad one is a usage error there and here.
    Its bound is the parameter's own value parser's, applied next (call_values), as on the command line:
    both surfaces name the same largest value."""
    from rooms_cli.core.errors import InvalidInput
    from rooms_cli.store.clock import parse_duration

    if value is not None:
        try:
            parse_duration(value, maximum=float("inf"))
        except InvalidInput as exc:
            raise ValueError(exc.message) from None
    return value


def call_values(op: Declared, arguments: dict[str, Any]) -> dict[str, Any]:
    """The body's values of a call: each argument under its parameter's name, through the parameter's
    value parser when the tool takes it as the command line does (not when an McpArg gives it another
    kind: a list, a number), and the declared MCP default of every parameter the tool does not take."""
    values: dict[str, Any] = {}
    for param in op.params:
        name = param.mcp_name
        if name is None or name not in arguments:
            continue
        value = arguments[name]
        retyped = isinstance(param.mcp, McpArg) and param.mcp.kind is not None
        parser = None if retyped else param.parser()
        values[param.name] = value if parser is None else parser(value)
    return op.body_values(values, mcp=True)


def _result(op: Declared, result: Any) -> Any:
    """The body's result as the tool returns it: an object (`Mcp.empty` for None, a list in the envelope
    `Mcp.listed_as`), or the result's problem as the tool's error, the result attached (`Mcp.problem_fails`)."""
    mcp = op.mcp
    assert mcp is not None
    if result is None and mcp.empty is not None:
        return dict(mcp.empty)
    if mcp.listed_as is not None and isinstance(result, list):
        return {mcp.listed_as: result, "count": len(result), "remaining": 0, "next_cursor": None}
    if mcp.problem_fails:
        problem = result.problem()
        if problem is not None:
            problem.data = result.to_json()
            raise problem
    return result


def tool_of(op: Declared) -> Operation:
    """The tool of a declared operation."""
    mcp = op.mcp
    assert mcp is not None, f"{op.name} declares no MCP tool"

    def run(session: Session, **arguments: Any) -> Any:
        return _result(op, op.body(session.context(arguments.get("room")), **call_values(op, arguments)))

    quick: bool | Callable[[Session, Any], bool] = mcp.quick if not callable(mcp.quick) else (
        lambda session, arguments, decide=mcp.quick: decide(session.context(getattr(arguments, "room", None)),
                                                            call_values(op, dict(arguments))))
    return Operation(mcp.name, run, mcp.title, mcp.description, mcp.returns, read_only=mcp.read_only, destructive=mcp.destructive,
                     idempotent=mcp.idempotent, long=mcp.long, declared=op, quick=quick)


TOOLS: dict[str, Operation] = {op.mcp.name: tool_of(op) for op in every() if op.mcp is not None}

Limit = Annotated[int, Field(description="At most this many records (the rest are counted in `remaining`).", ge=1, le=1000)]


def events(s: Session,
           cursor: Annotated[str | None, Field(description="The cursor the last call returned; leave out to start.")] = None,
           rooms: Annotated[list[str] | None, Field(description="Follow these rooms' transcripts.")] = None,
           inboxes: Annotated[list[str] | None, Field(description="Follow these agents' inboxes.")] = None,
           boards: Annotated[bool, Field(description="Follow the boards of the rooms given.")] = False,
           groups: Annotated[bool, Field(description="Follow every group.")] = False,
           wait_seconds: Annotated[float, Field(description="When nothing is new, wait up to this long for an event.", ge=0, le=300)] = 0,
           last: Annotated[int, Field(description="On a first call, also return the last N past events.", ge=0, le=1000)] = 0,
           limit: Limit = DEFAULT_LIMIT) -> dict[str, Any]:
    """New events since a cursor: chat messages, task, group, inbox and spawn events (as `rooms watch --json`).
    With no source named, everything is followed. The first call returns a cursor; pass it back to get
    only what happened since (the sources are those of the first call). At most `limit` events come
    back; `remaining` says how many more are ready for the next call."""
    from rooms_cli.mcp_server.cursors import poll_events

    return poll_events(s, cursor, rooms=rooms or (), inboxes=inboxes or (), boards=boards, groups=groups,
                       wait_seconds=wait_seconds, last=last, limit=limit)


TOOLS["events"] = Operation(
    "events", events, "Events since a cursor", inspect.cleandoc(events.__doc__ or ""),
    record({"cursor": STR, "events": {"type": "array", "items": {"type": "object"}}, "count": INT, "remaining": INT}),
    read_only=True, idempotent=True, quick=lambda s, a: not a.wait_seconds)
