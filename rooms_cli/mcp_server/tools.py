"""The tools of `rooms mcp`: one small function per tool, each calling one part's service.

A tool's docstring is its description, its annotated parameters are its JSON schema, and what it
returns (a record with `to_json`, a dict, a list) is its JSON result. The first parameter, the
`Session`, is filled by the server and is not part of the schema. Errors are the services' own
`RoomsError`s; server.py turns them into MCP tool errors. No logic lives here that the CLI does not
share: a rule that both need sits in the part.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field

from rooms_cli.core.shapes import (
    INT,
    STR,
    record,
)
from rooms_cli.operations import board as board_ops
from rooms_cli.operations import files as files_ops
from rooms_cli.operations import groups as groups_ops
from rooms_cli.operations import hot as declared
from rooms_cli.operations import messaging as messaging_ops
from rooms_cli.operations import rooms as rooms_ops
from rooms_cli.operations import roundtable as roundtable_ops
from rooms_cli.operations.declare import REQUIRED, ROOM_MCP_HELP, SAME, McpArg
from rooms_cli.operations.declare import Operation as Declared
from rooms_cli.operations.hot import DEFAULT_LIMIT
from rooms_cli.project.config import Config
from rooms_cli.store.paths import Project

WAIT_DEFAULT_S = messaging_ops.WAIT_DEFAULT_S  # how long wait blocks when no timeout_seconds is given


@dataclass(frozen=True)
class Operation:
    """One operation as MCP offers it: the function (its typed signature is the input schema, its
    docstring the description), a title, what it does to state, and the JSON Schema of its result."""

    name: str
    fn: Callable[..., Any]
    title: str
    returns: dict[str, Any]
    read_only: bool = False
    destructive: bool = False  # may delete or overwrite what others rely on
    idempotent: bool = False  # calling it twice with the same arguments changes nothing more
    long: bool = False  # blocks (wait, gather): reports progress while it runs
    declared: Declared | None = None  # the operation's one declaration (operations/hot.py), for a CLI command's twin
    # works on the project's files alone (no model, no process, no network, no waiting but for a file lock): the
    # server runs it on its event loop, not in a worker thread. A predicate of (session, arguments) when some
    # arguments make it slow (a claim synced through the git remote, a send that wakes its recipients).
    quick: bool | Callable[[Session, Any], bool] = False

    def runs_inline(self, session: Session, arguments: Any) -> bool:
        """Whether this call is quick (see `quick`): the server then runs it without a thread hand-off."""
        return self.quick(session, arguments) if callable(self.quick) else self.quick

    def arguments(self) -> dict[str, Any]:
        """Each argument's annotation (pydantic's: type, checks, description) and default, `...` when required:
        from the declaration of a declared operation, else from the function's typed signature after the session."""
        if self.declared is not None:
            return declared_arguments(self.declared)
        import inspect

        parameters = list(inspect.signature(self.fn, eval_str=True).parameters.values())[1:]
        return {p.name: (p.annotation, ... if p.default is inspect.Parameter.empty else p.default) for p in parameters}


TOOLS: dict[str, Operation] = {}


def tool(title: str, returns: dict[str, Any], *, read_only: bool = False, destructive: bool = False, idempotent: bool = False,
         long: bool = False, quick: Any = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the decorated function as the tool of its name."""
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        TOOLS[fn.__name__] = Operation(fn.__name__, fn, title, returns, read_only=read_only, destructive=destructive,
                                       idempotent=idempotent or read_only, long=long, quick=quick)
        return fn

    return register


def declared_tool(op: Declared, *, quick: Any = False) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare the decorated function as the MCP tool of a declared operation: its name, title, hints,
    result schema and arguments are the declaration's; the function takes the session, then every
    argument by its MCP name (all given: pydantic fills the declared defaults). `quick`: how the
    server runs it (Operation.quick), a property of serving it, so it is said here, beside the code."""
    assert op.mcp is not None, f"{op.name} declares no MCP tool"
    mcp = op.mcp

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        assert fn.__name__ == mcp.name, f"the tool of {op.name} is {mcp.name}, not {fn.__name__}"
        TOOLS[mcp.name] = Operation(mcp.name, fn, mcp.title, mcp.returns, read_only=mcp.read_only, destructive=mcp.destructive,
                                    idempotent=mcp.idempotent, long=mcp.long, declared=op, quick=quick)
        return fn

    return register


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
        default = param.default if arg.default is SAME else arg.default
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


Limit = Annotated[int, Field(description="At most this many records (the rest are counted in `remaining`).", ge=1, le=1000)]


def duration(value: str | None) -> str | None:
    """A duration argument checked as the CLI checks its options: a bad one is a usage error there and here.
    Its bound is left to the part, which reads it with the bound of what it is (a lease: 7d), as the CLI's
    option parser does: both surfaces name the same largest value."""
    from rooms_cli.core.errors import InvalidInput
    from rooms_cli.store.clock import parse_duration

    if value is not None:
        try:
            parse_duration(value, maximum=float("inf"))
        except InvalidInput as exc:
            raise ValueError(exc.message) from None
    return value



# -- board ---------------------------------------------------------------------------------------


@declared_tool(declared.board, quick=True)
def board(s: Session, lane: str | None, status: str | None, room: str | None):
    """The board of a room: each lane's open tasks (with leases), the done view with result records, and conflicts."""
    from rooms_cli.board.render import board_view

    return board_view(s.project, s.room(room), lane=lane, status=status)


@declared_tool(board_ops.task_show, quick=True)
def task_show(s: Session, task_id: str, room: str | None):
    """One task with its definition of done, lease, record and the history of its events."""
    from rooms_cli.board.tasks import load_task, task_history

    task = load_task(s.project, s.room(room), task_id)
    return {**task.to_json(), "history": task_history(s.project, s.room(room), task.id)}


@declared_tool(board_ops.task_add, quick=True)
def task_add(s: Session, title: str, lane: str, done: str, detail: str, depends_on: list[str] | None, room: str | None):
    """Add a task to a lane of the board (you are recorded as its author); `depends_on`: the tasks it
    waits on (task_next hands it out once they are all done)."""
    from rooms_cli.board.tasks import add_task

    return add_task(s.project, s.room(room), title, lane=lane, done=done, by=s.me, detail=detail, depends_on=depends_on)


def _sync_claims(s: Session, sync: bool | None) -> tuple[bool, str]:
    from rooms_cli.store.sync.settings import sync_settings

    settings = sync_settings(s.config)
    return (settings.claims if sync is None else sync), settings.remote


@declared_tool(declared.task_claim, quick=lambda s, a: not _sync_claims(s, a.sync)[0])
def task_claim(s: Session, task_id: str, lease: str | None, sync: bool | None, room: str | None):
    """Claim a todo task under a lease (todo → doing). Exactly one claimant wins a race; a loser gets
    the error already_claimed naming the holder: stop working on that task then. Keep the lease id."""
    from rooms_cli.board.claims import claim_task

    synced, remote = _sync_claims(s, sync)
    return claim_task(s.project, s.room(room), task_id, agent=s.me, lease=lease, sync=synced, remote=remote)


@declared_tool(declared.task_next, quick=lambda s, a: not _sync_claims(s, a.sync)[0])
def task_next(s: Session, lease: str | None, sync: bool | None, room: str | None):
    """Claim the first ready task (todo, every task it depends on done; by order) in your own lane; task, lease and lease_id
    are null when there is nothing to claim."""
    from rooms_cli.board.claims import next_task

    synced, remote = _sync_claims(s, sync)
    claim = next_task(s.project, s.room(room), agent=s.me, lease=lease, sync=synced, remote=remote)
    return claim if claim is not None else {"task": None, "lease": None, "lease_id": None}


@declared_tool(declared.task_renew, quick=True)
def task_renew(s: Session, task_id: str, lease_id: str, lease: str | None, room: str | None):
    """Extend your lease on a task, from now, by `lease` (default 10m)."""
    from rooms_cli.board.claims import renew_lease

    return renew_lease(s.project, s.room(room), task_id, lease_id, lease=lease)


@declared_tool(declared.task_release, quick=True)
def task_release(s: Session, task_id: str, lease_id: str, room: str | None):
    """Give a task you hold back to its lane (doing → todo); your lease ends."""
    from rooms_cli.board.claims import release_task

    return release_task(s.project, s.room(room), task_id, lease_id)


@declared_tool(declared.task_done, quick=True)
def task_done(s: Session, task_id: str, summary: str, artifacts: list[str] | None, next_step: str | None, result_ref: str | None,
              lease_id: str, room: str | None):
    """Finish a task you hold (doing → done) with a compact result record; returns the record."""
    from rooms_cli.board.claims import finish_task

    task = finish_task(s.project, s.room(room), task_id, lease_id, summary=summary, artifacts=artifacts or [],
                       next_step=next_step, result_ref=result_ref)
    return task.record


@declared_tool(board_ops.task_status, quick=True)
def task_status(s: Session, task_id: str, status: str, summary: str | None, result_ref: str | None, lease_id: str | None,
                room: str | None):
    """Move a task to todo, blocked, failed or cancelled (a claimed task needs its lease id)."""
    from rooms_cli.board.claims import set_status

    return set_status(s.project, s.room(room), task_id, status, by=s.me, lease_id=lease_id, summary=summary,
                      result_ref=result_ref)


@declared_tool(declared.task_list, quick=True)
def task_list(s: Session, lane: str | None, status: str | None, holder: str | None, limit: int, since: str | None,
              room: str | None):
    """The board's tasks (not archived) as one list in lane and order, filtered; at most `limit`."""
    from rooms_cli.board.render import list_tasks
    from rooms_cli.core.shapes import page

    room_id = s.room(room)
    return page("tasks", list_tasks(s.project, room_id, lane=lane, status=status, holder=holder), limit=limit,
                after=since, room=room_id)


@declared_tool(declared.task_ready, quick=True)
def task_ready(s: Session, lane: str | None, limit: int, since: str | None, room: str | None) -> dict[str, Any]:
    """The ready work across lanes: todo tasks whose dependencies are all done, in lane order; at most `limit`."""
    from rooms_cli.board.tasks import ready_tasks
    from rooms_cli.core.shapes import page

    room_id = s.room(room)
    return page("tasks", ready_tasks(s.project, room_id, lane=lane), limit=limit, after=since, room=room_id)


@declared_tool(board_ops.task_update, quick=True)
def task_update(s: Session, task_id: str, title: str | None, detail: str | None, done: str | None, order: float | None,
                depends_on: list[str] | None, room: str | None):
    """Change a task's title, detail, definition of done, order or the tasks it waits on (what is left
    out stays; depends_on replaces the list)."""
    from rooms_cli.board.tasks import update_task

    return update_task(s.project, s.room(room), task_id, by=s.me, title=title, detail=detail, done=done, order=order,
                       depends_on=depends_on)


@declared_tool(board_ops.task_archive, quick=True)
def task_archive(s: Session, task_id: str, room: str | None):
    """Archive a finished task: it leaves the board (its file stays; task_show still finds it)."""
    from rooms_cli.board.tasks import archive_task

    return archive_task(s.project, s.room(room), task_id, by=s.me)


@declared_tool(board_ops.task_assign, quick=True)
def task_assign(s: Session, task_id: str, to: str, room: str | None):
    """Move a task to another lane; across owners it becomes a proposal the new lane accepts or rejects."""
    from rooms_cli.board.proposals import assign_task

    return assign_task(s.project, s.room(room), task_id, to=to, by=s.me)


@declared_tool(board_ops.task_accept, quick=True)
def task_accept(s: Session, task_id: str, room: str | None):
    """Accept a task proposed to your lane (it becomes todo there)."""
    from rooms_cli.board.proposals import answer_proposal

    return answer_proposal(s.project, s.room(room), task_id, by=s.me, accept=True)


@declared_tool(board_ops.task_reject, quick=True)
def task_reject(s: Session, task_id: str, room: str | None):
    """Reject a task proposed to your lane (it goes back to the lane it came from)."""
    from rooms_cli.board.proposals import answer_proposal

    return answer_proposal(s.project, s.room(room), task_id, by=s.me, accept=False)


# -- messaging -----------------------------------------------------------------------------------


@declared_tool(declared.send, quick=lambda s, a: not a.wake)
def send(s: Session, message: str, to: str | None, wake: bool):
    """Send a message to one agent, or to every other agent. It lands in their inboxes."""
    from rooms_cli.messaging.send import send_message

    result = send_message(s.project, s.config, s.me, message, to=to)
    if wake:
        from rooms_cli.messaging.wake import wake_recipients

        result.woken = wake_recipients(s.project, s.config, result.delivered)
    return result


@declared_tool(messaging_ops.reply, quick=True)
def reply(s: Session, n: int | str, message: str):
    """Answer message n of your inbox (its number or its `ref`): the reply goes to its sender, quoting it."""
    from rooms_cli.messaging.send import send_message

    return send_message(s.project, s.config, s.me, message, reply_to=n)


@declared_tool(declared.inbox, quick=True)
def inbox(s: Session, unread_only: bool, peek: bool, limit: int, since: str | None):
    """Your inbox, oldest first: unread messages by default, at most `limit` (each has `n` to reply to and
    `read`). The unread ones returned are marked read unless peek; `remaining` counts the rest."""
    from rooms_cli.messaging.inbox import open_inbox
    from rooms_cli.messaging.status import touch
    from rooms_cli.messaging.unread import open_unread

    touch(s.project, s.me)
    if unread_only:  # through the cursor (messaging/unread.py): only what arrived since the last call is read
        return open_unread(s.project, s.me, peek=peek, limit=limit, after=since)
    return open_inbox(s.project, s.me, peek=peek, limit=limit, after=since)


@declared_tool(declared.status, quick=True)
def status(s: Session, room: str | None):
    """The project at a glance: your unread messages (not marked read) and claims with the time their
    leases have left, the room's lanes (open, doing, blocked), live groups, active rooms, the other agents'
    status lines."""
    from rooms_cli.across.overview import overview

    return overview(s.project, s.config, s.me, s.room(room)).to_json()


@declared_tool(declared.attention, quick=True)
def attention(s: Session, peek: bool):
    """What to know now: the other agents and their status, your unread messages (marked read unless
    peek), your running spawns, and a hint to announce yourself; `text` is the same as a prompt block."""
    from rooms_cli.messaging.attention import build_attention, render_attention

    block = build_attention(s.project, s.config, s.me, mark_read=not peek)
    return {**block.to_json(), "text": render_attention(block)}


@declared_tool(messaging_ops.status_set, quick=True)
def status_set(s: Session, text: str):
    """Set your status line, shown to every other agent."""
    from rooms_cli.messaging.status import set_status

    return set_status(s.project, s.me, text)


@declared_tool(messaging_ops.spawn)
def spawn(s: Session, prompt: str, description: str | None, profile: str | None):
    """Start a new agent on a prompt and return at once; its output arrives in your inbox (see wait)."""
    from rooms_cli.messaging.spawn import start_spawn

    return start_spawn(s.project, s.config, s.me, prompt, description=description, profile=profile)


@declared_tool(messaging_ops.wait)
def wait(s: Session, timeout_seconds: float, limit: int):
    """Block until all your spawns (and theirs) finished, then return your unread messages (at most
    `limit`, marked read). Progress is reported while it waits. Timing out is the error timed_out,
    listing what still runs."""
    from rooms_cli.messaging.status import touch
    from rooms_cli.messaging.unread import open_unread
    from rooms_cli.messaging.wait import wait_for_spawns

    touch(s.project, s.me)
    result = wait_for_spawns(s.project, s.me, timeout_seconds)
    if result.timed_out:
        raise result.timeout_error(timeout_seconds)
    view = open_unread(s.project, s.me, limit=limit)
    mail = view.to_json()
    return {**result.to_json(), "messages": mail["messages"], "remaining": mail["remaining"]}


# -- groups --------------------------------------------------------------------------------------


def _gathered(result):
    """A group result, or its problem (timed out, no winner) as the error, the result attached."""
    problem = result.problem()
    if problem is not None:
        problem.data = result.to_json()
        raise problem
    return result


@declared_tool(groups_ops.group_spawn)
def group_spawn(s: Session, name: str, profiles: list[str], handles: list[str | None] | None):
    """Add members to a group, creating it if new; returns the members with their handles."""
    from rooms_cli.groups import roster

    return {"group": name, "members": roster.spawn(s.project, name, profiles, handles)}


@declared_tool(groups_ops.group_broadcast)
def group_broadcast(s: Session, name: str, objective: str, output_format: str, tool_guidance: str, boundaries: str):
    """Send the four-field broadcast to every member of a group (one broadcast in flight at a time); gather with group_wait."""
    from rooms_cli.groups import broadcasts

    fields = {"objective": objective, "output_format": output_format, "tool_guidance": tool_guidance, "boundaries": boundaries}
    b = broadcasts.send_broadcast(s.project, s.config, name, fields, s.me)
    return {"group": name, "broadcast_id": b.id, "members": [m.handle for m in b.members], "sub_broadcasts": b.sub}


@declared_tool(groups_ops.group_wait)
def group_wait(s: Session, name: str, mode: str, timeout_seconds: float, reducer: str | None):
    """Gather the broadcast in flight: run model-backed members, wait for external ones, reduce.
    A timeout is the error timed_out with the partial result attached."""
    from rooms_cli.groups import gather

    async def run():
        try:
            return await gather.gather(s.project, s.config, name, any_=mode == "any", timeout=timeout_seconds,
                                       reducer=reducer, by=s.me)
        finally:
            await gather.drain()

    return _gathered(asyncio.run(run()))


@declared_tool(groups_ops.group_status)
def group_status(s: Session, name: str):
    """Members of a group and their state, the broadcast in flight (who is pending), and recent broadcasts."""
    from rooms_cli.groups.status import status

    return status(s.project, name)


@declared_tool(groups_ops.group_ask)
def group_ask(s: Session, profiles: list[str], objective: str, output_format: str, tool_guidance: str, boundaries: str,
              reducer: str | None, mode: str, timeout_seconds: float):
    """One-shot committee: an ephemeral group of these profiles gets the broadcast; returns the reduced
    result, and no file is left behind."""
    from rooms_cli.groups.api import ask

    fields = {"objective": objective, "output_format": output_format, "tool_guidance": tool_guidance, "boundaries": boundaries}
    _name, result = asyncio.run(ask(profiles, fields, any_=mode == "any", reducer=reducer, timeout=timeout_seconds,
                                    project=s.project))
    return _gathered(result)


@declared_tool(groups_ops.group_reply)
def group_reply(s: Session, name: str, text: str, handle: str | None, broadcast: str | None):
    """Answer a group broadcast as one of its (external) members; a late or duplicate reply is
    returned with accepted false and the reason."""
    from rooms_cli.groups import broadcasts

    return broadcasts.reply(s.project, s.config, name, handle or s.me, text, broadcast)


@declared_tool(groups_ops.group_cancel)
def group_cancel(s: Session, name: str):
    """Cancel the broadcast in flight in a group (members are told)."""
    from rooms_cli.groups import broadcasts

    b = broadcasts.cancel(s.project, s.config, name, s.me)
    return {"group": name, "broadcast_id": b.id, "status": b.status}


@declared_tool(groups_ops.group_list)
def group_list(s: Session, limit: int, since: str | None):
    """Every group: name, label, members, the broadcast in flight, how many broadcasts."""
    from rooms_cli.core.shapes import page
    from rooms_cli.groups.status import list_groups

    return page("groups", list_groups(s.project), limit=limit, after=since, key=lambda g: g["name"])


@declared_tool(groups_ops.group_dissolve)
def group_dissolve(s: Session, name: str):
    """Dissolve a group (cancelling its broadcast in flight); its log stays for the record."""
    from rooms_cli.groups import roster

    return roster.dissolve(s.project, s.config, name, s.me)


# -- chat ----------------------------------------------------------------------------------------


@declared_tool(declared.chat)
def chat(s: Session, message: str, room: str | None):
    """Post a message to a room and return the agents' replies (waits for the room's floor). From an
    agent identity only the agents it @-mentions answer."""
    from rooms_cli.chat import coordinator
    from rooms_cli.core.errors import InvalidInput

    if message.lstrip().startswith("/"):
        raise InvalidInput("slash commands are not run over MCP; post a message, or use the `rooms room …` commands")
    with coordinator.floor(s.project, s.room(room)):
        return coordinator.run_message(s.project, s.config, s.room(room), s.me, message)


@declared_tool(declared.transcript, quick=True)
def transcript(s: Session, limit: int, since: str | None, room: str | None):
    """The latest records of a room's transcript (at most `limit`, oldest first); with `since`, the records
    after that message id instead (the first `limit` of them)."""
    from rooms_cli.chat.rooms import load_room
    from rooms_cli.chat.transcript import read_transcript, tail
    from rooms_cli.core.jsonable import to_jsonable
    from rooms_cli.core.shapes import page

    room_id = s.room(room)
    load_room(s.project, room_id)
    if since is None:
        records = to_jsonable(tail(s.project, room_id, limit + 1))
        shown = records[-limit:]
        return {"room": room_id, "messages": shown, "count": len(shown), "remaining": 0, "next_cursor": None,
                "earlier": len(records) > limit}
    return page("messages", to_jsonable(read_transcript(s.project, room_id)), limit=limit, after=since, room=room_id)


@declared_tool(declared.search)
def search(s: Session, query: str, within: list[str] | None, room: str | None, who: str | None, since: str | None,
           limit: int) -> dict[str, Any]:
    """Search chat transcripts, inboxes, tasks, group broadcasts and lessons at once, best match first. A query is
    words (all must match), "a phrase", prefix*, -word, a OR b. Each hit has its kind, id, where it lives (room,
    inbox, lane, group), who wrote it, when, a snippet with the matches between ** and its `ref` (msg:, task:, inbox:,
    group: or lesson:<id>), which task_done takes as an artifact or result_ref.
    Not paged: `remaining` counts the matches left out; narrow the query or raise `limit`."""
    from rooms_cli.search.engine import search as search_project

    results = search_project(s.project, query, within=within, room=room, who=who, since=since, limit=limit)
    return {"hits": [hit.to_json() for hit in results.hits], "count": len(results.hits), "remaining": results.remaining,
            "next_cursor": None}


@declared_tool(rooms_ops.room_create, quick=True)
def room_create(s: Session, room: str, agents: list[str] | None):
    """Create a live chat room with these agents on its roster; chat posts to it with room=<id>."""
    from rooms_cli.chat.rooms import create_room

    return create_room(s.project, room, agents or None)


@declared_tool(rooms_ops.room_list, quick=True)
def room_list(s: Session, all: bool, limit: int, since: str | None):
    """The live rooms (with all: stopped ones too)."""
    from rooms_cli.chat.membership import live_rooms
    from rooms_cli.core.shapes import page

    return page("rooms", live_rooms(s.project, include_stopped=all), limit=limit, after=since)


@declared_tool(rooms_ops.room_show, quick=True)
def room_show(s: Session, room: str | None):
    """A room's roster, budget, mutes and queued mentions."""
    from rooms_cli.chat.membership import show

    return show(s.project, s.config, s.room(room))


@declared_tool(rooms_ops.room_invite, quick=True)
def room_invite(s: Session, agent: str, room: str | None):
    """Add an agent to a room's roster, so it answers there when addressed."""
    from rooms_cli.chat.membership import invite

    return invite(s.project, s.room(room), agent, s.me)


@declared_tool(rooms_ops.room_kick, quick=True)
def room_kick(s: Session, agent: str, room: str | None):
    """Remove an agent from a room's roster (its session in the room is deleted)."""
    from rooms_cli.chat.membership import kick

    return kick(s.project, s.room(room), agent, s.me)


# -- memory ----------------------------------------------------------------------------------------

@declared_tool(roundtable_ops.memory_list, quick=True)
def memory_list(s: Session, agent: str | None, limit: int, since: str | None):
    """The lessons agents learned in conversations, oldest first."""
    from rooms_cli.agents.memories import agents_with_lessons, list_lessons, require_agent
    from rooms_cli.core.shapes import page

    if agent:
        require_agent(s.project, agent)
    lessons = [r for a in ([agent] if agent else agents_with_lessons(s.project)) for r in list_lessons(s.project, a)]
    return page("lessons", lessons, limit=limit, after=since)


@declared_tool(roundtable_ops.memory_forget, quick=True)
def memory_forget(s: Session, agent: str, ids: list[str] | None, source: str | None, all: bool):
    """Remove lessons so they stop reaching the agent's prompts."""
    from rooms_cli.agents.memories import forget

    return {"agent": agent, "removed": forget(s.project, agent, ids or [], source=source, everything=all)}


# -- roundtable ----------------------------------------------------------------------------------

@declared_tool(roundtable_ops.roundtable_run)
def roundtable_run(s: Session, format: str, topic: str | None, participants: list[str] | None, room: str | None, turns: int | None,
                   max_chars: int, force: bool):
    """Run a roundtable now among a few agents, turn by turn; returns every turn and the lessons learned."""
    from rooms_cli.roundtable.orchestrator import run_roundtable_sync

    return run_roundtable_sync(s.project, s.config, roundtable_ops.request(format, topic, participants, room, turns, max_chars, force))


@declared_tool(roundtable_ops.roundtable_queue)
def roundtable_queue(s: Session, format: str, topic: str | None, participants: list[str] | None, turns: int | None, max_chars: int,
                     force: bool):
    """Enqueue a roundtable for the next `rooms tick` (roundtable_list shows the queue)."""
    from rooms_cli.roundtable import queue
    from rooms_cli.roundtable.formats import get_format

    get_format(s.config, format)
    item, _new = queue.enqueue(s.project, roundtable_ops.request(format, topic, participants, None, turns, max_chars, force), by=s.me)
    return item


@declared_tool(roundtable_ops.roundtable_list, quick=True)
def roundtable_list(s: Session, limit: int, since: str | None):
    """The roundtable queue, oldest first: pending, running and finished items."""
    from rooms_cli.core.jsonable import to_jsonable
    from rooms_cli.core.shapes import page
    from rooms_cli.roundtable import queue

    return page("items", to_jsonable(queue.list_items(s.project)), limit=limit, after=since)


# -- sync ----------------------------------------------------------------------------------------


@declared_tool(declared.sync)
def sync(s: Session, remote: str | None):
    """Merge .rooms/ with a git remote both ways (on refs/rooms/state; your branches and work tree are
    never touched): what other clones wrote arrives, what you wrote leaves. See docs/git.md."""
    from rooms_cli.store.sync.engine import sync as sync_with
    from rooms_cli.store.sync.settings import for_task_commands

    if remote is None:
        remote = for_task_commands(lambda: s.config, s.project.root, True, None)[1]
    return sync_with(s.project, remote)


# -- file reservations ---------------------------------------------------------------------------


@declared_tool(files_ops.reserve, quick=True)
def reserve_files(s: Session, patterns: list[str], ttl: str | None, shared: bool, reason: str):
    """Reserve files before editing them (exclusive unless shared). Refused with the error `reserved`
    (exit code 3) naming the holder when another agent holds an overlapping reservation; reserving the
    same patterns again renews yours."""
    from rooms_cli.reservations.ledger import reserve

    return reserve(s.project, s.me, patterns, ttl=ttl, exclusive=not shared, reason=reason)


@declared_tool(files_ops.release, quick=True)
def release_files(s: Session, patterns: list[str] | None, all: bool):
    """Release your reservations holding any of `patterns` (or with those ids), or all of them."""
    from rooms_cli.core.errors import InvalidInput
    from rooms_cli.reservations.ledger import release

    if bool(patterns) == all:
        raise InvalidInput("give patterns (or reservation ids) to release, or all=true, not both")
    released = release(s.project, s.me, patterns, all_=all)
    return {"released": released, "count": len(released), "remaining": 0, "next_cursor": None}


@declared_tool(files_ops.list_reservations, quick=True)
def list_reservations(s: Session, agent: str | None, limit: int, since: str | None):
    """The active file reservations, oldest first: agent, patterns, exclusive or shared, expiry."""
    from rooms_cli.core.shapes import page
    from rooms_cli.reservations.ledger import active_reservations

    held = [r for r in active_reservations(s.project) if agent is None or r.agent == agent]
    return page("reservations", held, limit=limit, after=since, key=lambda r: r.id)


@declared_tool(files_ops.check, quick=True)
def check_files(s: Session, paths: list[str]):
    """Whether another agent holds an exclusive reservation covering any of `paths`; `blocked` names
    the holders (ok is false then). Your own reservations do not count."""
    from rooms_cli.reservations.ledger import check_paths

    return check_paths(s.project, paths, agent=s.me)


# -- events --------------------------------------------------------------------------------------


@tool("Events since a cursor", record({"cursor": STR, "events": {"type": "array", "items": {"type": "object"}}, "count": INT,
                                      "remaining": INT}), read_only=True, quick=lambda s, a: not a.wait_seconds)
def events(s: Session,
           cursor: Annotated[str | None, Field(description="The cursor the last call returned; leave out to start.")] = None,
           rooms: Annotated[list[str] | None, Field(description="Follow these rooms' transcripts.")] = None,
           inboxes: Annotated[list[str] | None, Field(description="Follow these agents' inboxes.")] = None,
           boards: Annotated[bool, Field(description="Follow the boards of the rooms given.")] = False,
           groups: Annotated[bool, Field(description="Follow every group.")] = False,
           wait_seconds: Annotated[float, Field(description="When nothing is new, wait up to this long for an event.", ge=0, le=300)] = 0,
           last: Annotated[int, Field(description="On a first call, also return the last N past events.", ge=0, le=1000)] = 0,
           limit: Limit = DEFAULT_LIMIT):
    """New events since a cursor: chat messages, task, group, inbox and spawn events (as `rooms watch --json`).
    With no source named, everything is followed. The first call returns a cursor; pass it back to get
    only what happened since (the sources are those of the first call). At most `limit` events come
    back; `remaining` says how many more are ready for the next call."""
    from rooms_cli.mcp_server.cursors import poll_events

    return poll_events(s, cursor, rooms=rooms or (), inboxes=inboxes or (), boards=boards, groups=groups,
                       wait_seconds=wait_seconds, last=last, limit=limit)
