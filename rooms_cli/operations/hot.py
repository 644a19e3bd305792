"""The operations agents run in loops, each declared once (operations/declare.py): its parameters, its body, its MCP tool.

`rooms board`, `rooms task next|claim|renew|release|done|list`, `rooms send`, `rooms inbox`, `rooms chat`
with its message, `attention`, `transcript`, `watch`, `sync` and the Claude Code hooks are what a
coding-agent session or a worker script calls over and over. Each is declared here once; its typer
command (board_cmd.py, messaging_cmd.py, chat_cmd.py…), the fast path's parse (fast.py) and, where it is
an MCP tool too, the tool's input schema (mcp_server/tools.py) are derived from that declaration. So
there is one body and one list of options per command, whichever parser ran it.

Each body takes a `Run` (cli/shared.py) and every parameter of the command by name (the declared
defaults filled in), imports what it uses when it runs, and prints through cli/output.py. Its
docstring is the command's help.
"""

from __future__ import annotations

from rooms_cli.cli import output
from rooms_cli.cli.shared import Run
from rooms_cli.core.shapes import (
    BOOL,
    CLAIM,
    INT,
    MESSAGE,
    OVERVIEW,
    RESULT,
    SENT,
    STR,
    TASK,
    envelope,
    nullable,
    record,
)
from rooms_cli.operations.declare import REQUIRED, Mcp, McpArg, Param, operation
from rooms_cli.operations.search import search  # declared in its own module, on the fast path like the rest
from rooms_cli.operations.values import (
    choice_value,
    count_value,
    duration_value,
    name_value,
    text_value,
    time_value,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime
    from typing import Any

    from rooms_cli.operations.declare import Parser

AS_ROOM = ("as_", "room", "dir", "json_")  # the shared options (cli/shared.py) a board command takes
AS = ("as_", "dir", "json_")

# the MCP tools' results (their outputSchema)
BOARD = record({"room": STR, "counts": {"type": "object"}, "lanes": {"type": "array"}, "done": {"type": "array"}})
ATTENTION = record({"synthetic": BOOL, "agent": STR, "hint": nullable(STR), "agents": {"type": "array"},
                    "messages": {"type": "array"}, "text": STR})
CHAT_MESSAGE = record({"id": STR, "ts": STR, "room": STR, "speaker": STR, "kind": STR, "text": STR}, title="chat message")
SYNCED = record({"remote": STR, "received": INT, "sent": INT, "pushed": BOOL, "conflicts": {"type": "array"}})

DEFAULT_LIMIT = 50  # records a list tool returns unless `limit` says otherwise


def statuses() -> tuple[str, ...]:
    """What `--status` takes on the board: a task's statuses, and pending."""
    from rooms_cli.board.model import STATUSES

    return (*STATUSES, "pending")


def _status(flag: str) -> Parser:
    return choice_value(flag, statuses)


def _positive_duration(flag: str) -> Parser:
    from rooms_cli.store.clock import MAX_LEASE_S

    return duration_value(flag, positive=True, maximum=MAX_LEASE_S)


def named(what: str) -> Callable[[str], Parser]:
    """The `parse` of an option naming a `what` strictly (a lane, an agent): a bad name is exit 2."""
    return lambda flag: name_value(flag, what)


def nonblank(what: str) -> Callable[[str], Parser]:
    """The `parse` of required text (a title, a message, a summary): blank is exit 2, as chat's empty message."""
    return lambda flag: text_value(flag, what)


# --- parameters several operations take ------------------------------------------------------------------

TASK_ID = Param("task_id", help="Task id (any unique prefix, like git).", mcp=McpArg(help="Task id, or any unique prefix of it."))
LANE = Param("lane", default=None, help="Only this agent's lane.", flags=("--lane",), show_default=False, parse=named("lane"),
             metavar="LANE")
STATUS = Param("status", default=None, help="Only tasks with this status (or pending).", flags=("--status",), parse=_status,
               show_default=False, metavar="STATUS",
               mcp=McpArg(help="Only tasks with this status (todo, doing, done, blocked, failed, cancelled, pending)."))
LEASE = Param("lease", "duration", None, "Lease length, e.g. 90s, 15m, 1h (default 10m).", ("--lease",), parse=_positive_duration,
              metavar="DURATION", show_default=False, mcp=McpArg(help="Lease length such as 90s, 15m, 1h (default 10m)."))
# the lease to act under: the one claim printed, exported as ROOMS_LEASE; over MCP the one task_claim returned
LEASE_ID = Param("lease_id", default=None, flags=("--lease-id",), envvar="ROOMS_LEASE", show_default=False,
                 help="The lease id printed by claim (default: ROOMS_LEASE, else the lease you — ROOMS_AGENT or --as — hold on the task).",
                 mcp=McpArg(default=REQUIRED, help="The lease id that task_claim or task_next returned."))
SYNC = Param("sync", "bool", False, "Count it only once it is on the git remote (rooms sync; default: sync.claims in .rooms.yaml).",
             ("--sync",), mcp=McpArg(default=None, help="Count the claim only once it is on the git remote (rooms sync); "
                                                         "default: sync.claims in .rooms.yaml."))
LOCAL_SYNC = SYNC.replace(mcp=False)  # renew, release and done: the MCP tools do not sync
RESULT_REF = Param("result_ref", default=None, help="What the result is: file:<path>, msg:, task:, inbox:, group: or lesson:<id> (as rooms search prints it).", flags=("--result-ref",),
                   show_default=False)
LIMIT = Param("limit", "int", DEFAULT_LIMIT, "At most this many records (the rest are counted in `remaining`).", cli=False,
              mcp=McpArg(ge=1, le=1000))
SINCE = Param("since", default=None, help="The `next_cursor` of the last call: continue after it.", cli=False)


# --- the board ------------------------------------------------------------------------------------------


@operation("board", shared=("room", "dir", "json_"), params=(
    LANE, STATUS,
    Param("format", default="table", help="table (default) or md: compact markdown for prompts and commits.", flags=("--format",),
          mcp=False),
    Param("done", "int", 10, "Show the last N finished tasks.", ("--done",), parse=count_value, mcp=False),
    Param("all_", "bool", False, "Show every finished task (reads every task's log).", ("--all",), mcp=False),
), mcp=Mcp("board", "Show the board", BOARD, read_only=True))
def board(run: Run, lane: str | None, status: str | None, format: str, done: int, all_: bool) -> None:
    """Show the board: each lane's open tasks, then the last finished ones, then any conflicts.

    Example: rooms board --format md
    """
    from rooms_cli.board.render import board_view, markdown_from_view
    from rooms_cli.core.errors import UsageError

    if format not in ("table", "md"):
        raise UsageError(f"--format must be table or md, not {format!r}")
    view = board_view(run.project, run.room, lane=lane, status=status, done=done, all_=all_)
    if run.json:
        output.print_json(view)
    elif format == "md":
        output.say(markdown_from_view(view).rstrip() or f"The board of room {run.room} is empty.")
    else:
        output.print_board(view)


@operation("task", "list", shared=("room", "dir", "json_"), params=(
    LANE, STATUS,
    Param("holder", default=None, help="Only tasks this agent holds under a live lease.", flags=("--holder",), complete="agents",
          show_default=False, parse=named("holder"), metavar="AGENT"),
    LIMIT, SINCE,
), mcp=Mcp("task_list", "List tasks", envelope("tasks", TASK, room=STR), read_only=True))
def task_list(run: Run, lane: str | None, status: str | None, holder: str | None) -> None:
    """List the board's tasks, one a line, in lane order (archived ones left out); --json: a list.

    Example: rooms task list --holder frontend --status doing --json
    """
    from rooms_cli.board.render import list_tasks

    tasks = list_tasks(run.project, run.room, lane=lane, status=status, holder=holder)
    _print_tasks(run, tasks, f"No tasks match on the board of room {run.room}.")


def _print_tasks(run: Run, tasks: list[dict[str, Any]], none: str) -> None:
    """Tasks as a JSON list (--json), else one a line; `none` when there are none."""
    if run.json:
        output.print_json(tasks)
        return
    for task in tasks:
        output.say(output.task_line(task))
    if not tasks:
        output.say(none)


@operation("task", "ready", shared=("room", "dir", "json_"), params=(
    LANE, LIMIT, SINCE,
), mcp=Mcp("task_ready", "List ready tasks", envelope("tasks", TASK, room=STR), read_only=True))
def task_ready(run: Run, lane: str | None) -> None:
    """List the ready work across lanes: todo tasks whose dependencies are all done (what `task next`
    hands out), one a line in lane order; --json: a list.

    Example: rooms task ready --lane api --json
    """
    from rooms_cli.board.tasks import ready_tasks

    tasks = ready_tasks(run.project, run.room, lane=lane)
    _print_tasks(run, tasks, f"Nothing is ready on the board of room {run.room}" + (f" in lane {lane}." if lane else "."))


def _sync_of(run: Run, sync: bool) -> tuple[bool, str | None]:
    from rooms_cli.store.sync.settings import for_task_commands

    return for_task_commands(lambda: run.config, run.project.root, sync, None)


@operation("task", "claim", shared=AS_ROOM, params=(
    TASK_ID, LEASE,
    LEASE_ID.replace(help="Your lease on the task (default: ROOMS_LEASE): claiming a task you hold with it returns that lease.",
                     mcp=False),
    SYNC,
), mcp=Mcp("task_claim", "Claim a task", CLAIM))
def task_claim(run: Run, task_id: str, lease: float | None, lease_id: str | None, sync: bool) -> None:
    """Atomically move a task todo → doing under a lease, and print the lease id.

    A held task exits 3 with already_claimed, naming the holder, its lease id and when the lease ends:
    stop then. Presenting the task's current lease (--lease-id / ROOMS_LEASE) returns it unchanged.

    Example: rooms task claim t-01JD3Z --as researcher --lease 15m
    """
    from rooms_cli.board.claims import claim_task

    sync, remote = _sync_of(run, sync)
    claim = claim_task(run.project, run.room, task_id, agent=run.me, lease=lease, lease_id=lease_id, sync=sync, remote=remote)
    output.done(output.claim_done(claim))  # should printing fail, the error says the claim was made (cli/guard.py)
    run.emit(claim, output.claim_text(claim))


@operation("task", "next", shared=AS_ROOM, params=(LEASE, SYNC), mcp=Mcp("task_next", "Claim your next task", CLAIM))
def task_next(run: Run, lease: float | None, sync: bool) -> None:
    """Claim the first ready task (by order) in your lane; exit 0 with "nothing to claim" (JSON null) if none.

    Example: rooms task next --as researcher --json
    """
    from rooms_cli.board.claims import next_task

    sync, remote = _sync_of(run, sync)
    claim = next_task(run.project, run.room, agent=run.me, lease=lease, sync=sync, remote=remote)
    if claim:
        output.done(output.claim_done(claim))
    run.emit(claim, output.claim_text(claim) if claim else _nothing_to_claim(run))


def _nothing_to_claim(run: Run) -> str:
    """`nothing to claim in lane L of room R`, and how many of the lane's tasks wait on others."""
    from rooms_cli.board.tasks import waiting_in_lane

    text = f"nothing to claim in lane {run.me} of room {run.room}"
    waiting = waiting_in_lane(run.project, run.room, run.me)
    return text + (f" ({waiting} waiting on other tasks: rooms board --lane {run.me})" if waiting else "")


@operation("task", "renew", shared=AS_ROOM, params=(TASK_ID, LEASE_ID, LEASE, LOCAL_SYNC),
           mcp=Mcp("task_renew", "Renew a task lease", TASK))
def task_renew(run: Run, task_id: str, lease_id: str | None, lease: float | None, sync: bool) -> None:
    """Extend your lease (from now, by --lease, default 10m).

    Example: rooms task renew t-01JD3Z --lease-id l-01JD40… --lease 15m
    """
    from rooms_cli.board.claims import renew_lease, synced

    sync, remote = _sync_of(run, sync)
    task = renew_lease(run.project, run.room, task_id, lease_id, lease=lease, holder=run.me)
    output.done(f"renewed the lease of {task.id}")
    task = synced(run.project, task, remote) if sync else task
    run.emit(task, f"renewed: {output.task_line(task.to_json())}")


@operation("task", "release", shared=AS_ROOM, params=(TASK_ID, LEASE_ID, LOCAL_SYNC),
           mcp=Mcp("task_release", "Release a task", TASK))
def task_release(run: Run, task_id: str, lease_id: str | None, sync: bool) -> None:
    """Give the task back to its lane (todo); your lease ends.

    Example: rooms task release t-01JD3Z --lease-id l-01JD40…
    """
    from rooms_cli.board.claims import release_task, synced

    sync, remote = _sync_of(run, sync)
    task = release_task(run.project, run.room, task_id, lease_id, holder=run.me)
    output.done(f"released {task.id}")
    task = synced(run.project, task, remote) if sync else task
    run.emit(task, f"released: {output.task_line(task.to_json())}")


@operation("task", "done", shared=AS_ROOM, params=(
    TASK_ID,
    Param("summary", help="One line: what happened.", flags=("--summary",), parse=nonblank("summary")),
    Param("artifact", "strs", None, "file:<path>, msg:, task:, inbox:, group: or lesson:<id> (as rooms search prints it); repeatable.", ("--artifact",), show_default=False,
          mcp=McpArg(name="artifacts", help="References: file:<path>, msg:, task:, inbox:, group: or lesson:<id> (a search hit's ref).")),
    Param("next_", default=None, help="Optional one line: what should happen next.", flags=("--next",), show_default=False,
          mcp=McpArg(name="next_step")),
    RESULT_REF, LEASE_ID, LOCAL_SYNC,
), mcp=Mcp("task_done", "Finish a task", RESULT))
def task_done(run: Run, task_id: str, summary: str, artifact: list[str] | None, next_: str | None, result_ref: str | None,
              lease_id: str | None, sync: bool) -> None:
    """Finish a task you hold: doing → done with a compact record (not a narration).

    Example: rooms task done t-01JD3Z --summary 'spec written' --artifact file:specs/auth.md --result-ref file:specs/auth.md
    """
    from rooms_cli.board.claims import finish_task, synced

    sync, remote = _sync_of(run, sync)
    task = finish_task(run.project, run.room, task_id, lease_id, summary=summary, artifacts=artifact or [],
                       next_step=next_, result_ref=result_ref, holder=run.me)
    output.done(f"finished {task.id}")
    task = synced(run.project, task, remote) if sync else task
    run.emit(task.record, "\n".join([f"done: {task.id} {task.title}", *output.record_lines(task.record or {})]))


@operation("sync", shared=("dir", "json_"), params=(
    Param("remote", default=None, help="The git remote (default: sync.remote in .rooms.yaml, else origin).", flags=("--remote",),
          show_default=False),
), mcp=Mcp("sync", "Sync with the git remote", SYNCED, idempotent=True))
def sync(run: Run, remote: str | None) -> None:
    """Merge .rooms/ with a git remote both ways; your branches, index and work tree are never touched.

    Exit 1 when there is no git, no such remote, it cannot be reached, or its state was rewritten by
    hand; exit 3 when other clones kept pushing first. Nothing local is lost in any case.

    Example: rooms sync --remote origin
    """
    from rooms_cli.store.sync.engine import sync as sync_with
    from rooms_cli.store.sync.settings import for_task_commands

    if remote is None:
        remote = for_task_commands(lambda: run.config, run.project.root, True, None)[1]
    result = sync_with(run.project, remote)
    from rooms_cli.core.text import count

    conflicts = (f"; {count(len(result.conflicts), 'file conflict')} (the other side kept under .rooms/run/sync/conflicts)"
                 if result.conflicts else "")
    run.emit(result, f"synced with {result.remote}: {count(result.received, 'line')} in, {result.sent} out, "
                     f"{count(len(set(result.files_in)), 'file')} changed here, {len(set(result.files_out))} sent{conflicts}")


# --- chat -----------------------------------------------------------------------------------------------


def _chat_line(run: Run, message: str | None, explain: bool, no_wait: bool) -> None:
    """typer's `rooms chat`: no message opens chat mode on a terminal or reads it from stdin."""
    import sys

    if message is None:
        if sys.stdin.isatty() and not run.json and not explain:
            from rooms_cli.cli import chat_view
            from rooms_cli.cli.chat_interactive import run_interactive

            run_interactive(run, chat_view)
            return
        from rooms_cli.core import terminal

        message = terminal.read_stdin("the message").strip()
    if not message.strip():
        import typer

        raise typer.BadParameter("the message is empty", param_hint="MESSAGE")
    chat.body(run, message, explain, no_wait)


@operation("chat", shared=AS_ROOM, params=(
    Param("message", default=None, help="The message; `/cmd …` runs a slash command. Omit on a terminal for chat mode.",
          mcp=McpArg(default=REQUIRED, help="The message; @name addresses an agent.")),
    Param("explain", "bool", False, "Show who would answer and why; call no model, write nothing.", ("--explain", "--dry-run"),
          mcp=False),
    Param("no_wait", "bool", False, "Exit 3 at once if another turn holds the room's floor.", ("--no-wait",), mcp=False),
), mcp=Mcp("chat", "Post to a chat room", record({"message": {"type": "object"}, "replies": {"type": "array"}})),
    cli=_chat_line, nonblank=("message",))  # without its message (chat mode, stdin) or with a blank one: typer's
def chat(run: Run, message: str, explain: bool, no_wait: bool) -> None:
    """Post a message to a room and print the replies as they arrive.

    Example: rooms chat '@researcher what is the rate limit on api.stripe.com?'
    """
    from rooms_cli.chat import coordinator, slash
    from rooms_cli.cli import chat_view

    if explain:
        data = coordinator.explain(run.project, run.config, run.room, message)
        output.print_json(data) if run.json else chat_view.print_explain(data)
        return
    view = None if run.json else chat_view.TurnView()
    if message.lstrip().startswith("/"):
        slash.refuse_agents(run.project, run.me)
        result = slash.run(run.project, run.config, run.room, run.me, message, on_event=view, wait=not no_wait, on_wait=output.note)
        output.print_json(result) if run.json else chat_view.print_slash(result)
        return
    with coordinator.floor(run.project, run.room, wait=not no_wait, on_wait=output.note):
        turn = coordinator.run_message(run.project, run.config, run.room, run.me, message, on_event=view)
    run.emit(turn, lambda: chat_view.print_turn_footer(turn))
    if turn.unanswered:
        from rooms_cli.core.errors import ProviderError

        raise ProviderError(f"no agent could answer ({', '.join(turn.failed)} failed; the reasons are in the room's transcript)",
                            code="no_answer")


def _roundtable_room(run: Run) -> str | None:
    """`--room rt-…` (a roundtable's id) or `--room q-…` (its queue item's): the room it wrote into."""
    given = run.room_option or ""
    if not given.startswith(("rt-", "q-")):
        return None
    from rooms_cli.chat.rooms import room_exists
    from rooms_cli.roundtable.queue import roundtable_room
    from rooms_cli.store.ids import is_valid_name

    if is_valid_name(given) and room_exists(run.project, given):
        return None  # a room that happens to be named so
    return roundtable_room(run.project, given)


@operation("transcript", shared=("room", "dir", "json_"), params=(
    Param("last", "int", None, "Only the last N records.", ("--last", "-n"), min=1, mcp=False),
    Param("ids", "bool", False, "Show each message's id (what `msg:<id>` and replies name).", ("--ids",), mcp=False),
    LIMIT.replace(default=20), SINCE,
), mcp=Mcp("transcript", "Read a room's transcript", envelope("messages", CHAT_MESSAGE, room=STR), read_only=True))
def transcript(run: Run, last: int | None, ids: bool) -> None:
    """Print a room's messages (every record with --json); `--room` also takes a roundtable's id (rt-…).

    Example: rooms transcript --room sync --last 20 --json
    """
    from rooms_cli.chat.rooms import load_room
    from rooms_cli.chat.transcript import read_transcript, tail
    from rooms_cli.cli import chat_view

    room = _roundtable_room(run) or run.room
    load_room(run.project, room)
    messages = tail(run.project, room, last) if last else read_transcript(run.project, room)
    run.emit(messages, lambda: chat_view.print_transcript(messages, ids=ids))


# --- messaging ------------------------------------------------------------------------------------------


@operation("send", shared=AS, params=(
    Param("message", help="What to say.", parse=nonblank("message")),
    Param("to", default=None, help="One agent (default: every other agent).", flags=("--to",), complete="agents", show_default=False,
          parse=named("recipient"), metavar="AGENT",
          mcp=McpArg(help="One agent; leave out to reach every other agent.")),
    Param("reply_to", default=None, flags=("--reply-to",), show_default=False, mcp=False,
          help="Answer message N of your inbox (its number, or a unique prefix of its id): goes to its sender."),
    Param("wake", "bool", False, "Run LLM-backed recipients now; their replies land in your inbox.", ("--wake",)),
), mcp=Mcp("send", "Send a message", SENT))
def send(run: Run, message: str, to: str | None, reply_to: str | None, wake: bool) -> None:
    """Send a message to one agent, to everyone, or in reply to a message in your inbox.

    Example: rooms send --reply-to 3 "yes, take the API; I'm on the frontend"
    """
    from rooms_cli.messaging.send import send_message

    if message == "-":  # like `group reply -`: the message is on stdin
        from rooms_cli.core.terminal import read_stdin

        message = read_stdin("the message")

    result = send_message(run.project, run.config, run.me, message, to=to, reply_to=reply_to)
    output.done("sent " + ", ".join(f"{m.id} to {m.to}" for m in result.delivered))
    if wake:
        from rooms_cli.messaging.wake import wake_recipients

        result.woken = wake_recipients(run.project, run.config, result.delivered)
    if run.json:
        return output.print_json(result)
    for name in result.unknown:
        output.note(f"note: {name} is not a known agent yet; the message waits in its inbox")
    to_text = ", ".join(f"{m.to} ({m.label})" for m in result.delivered)
    output.say(f"sent to {to_text}" if result.kind == "direct" else f"sent to everyone: {to_text}")
    for woken in result.woken:
        output.say(f"{woken['agent']} woke and replied: {woken['text']}" if woken["replies"] else f"{woken['agent']} woke and passed")
    if wake and not result.woken:
        output.note("note: no recipient is an LLM-backed agent with something to answer; sessions read their inbox themselves")


@operation("inbox", shared=AS, params=(
    Param("unread", "bool", False, "Only messages not read yet.", ("--unread",),
          mcp=McpArg(name="unread_only", default=True, help="Only messages not read yet (false: read ones too).")),
    Param("peek", "bool", False, "Do not mark anything read.", ("--peek",)),
    Param("last", "int", 10, "Show the last N messages besides the unread ones.", ("--last",), parse=count_value, mcp=False),
    Param("all_", "bool", False, "Show every message (reads the whole inbox).", ("--all",), mcp=False),
    LIMIT, SINCE,
), mcp=Mcp("inbox", "Read your inbox", envelope("messages", MESSAGE, agent=STR, unread=INT, marked_read=BOOL)))
def inbox(run: Run, unread: bool, peek: bool, last: int, all_: bool) -> None:
    """Show your unread messages and the last few (unread marked *) and mark them read, unless --peek.

    Example: rooms inbox --unread
    """
    from rooms_cli.messaging import unread as cursor
    from rooms_cli.messaging.status import touch

    touch(run.project, run.me)
    # through the cursor: only what arrived since the last call is read (messaging/unread.py)
    if unread:
        view = cursor.open_unread(run.project, run.me, peek=peek)
    elif all_:
        from rooms_cli.messaging.inbox import open_inbox

        view = open_inbox(run.project, run.me, peek=peek)
    else:
        view = cursor.open_recent(run.project, run.me, last=last, peek=peek)
    if run.json:
        return output.print_json(view)
    if not view.messages:
        return output.say(f"No {'unread ' if unread else ''}messages for {run.me}.")
    output.show_messages(view.messages, view.unread_ids)
    older = f" · {view.remaining} older not shown (--last N, --all)" if view.remaining and not unread else ""
    output.note(f"{view.fresh} unread" + ("" if not view.marked_read else ", now marked read") + older
                + " · reply: rooms send --reply-to N 'text'")


@operation("status", shared=AS_ROOM, mcp=Mcp("status", "The project at a glance", OVERVIEW, read_only=True))
def status(run: Run) -> None:
    """Show the project at a glance: your unread messages and claims (lease time left), each lane's open /
    doing / blocked tasks, live groups, active rooms, the other agents' status lines. Nothing is marked read.

    `rooms status TEXT` sets your own status line, as `rooms status set TEXT` does.

    Example: rooms status --json
    """
    from rooms_cli.across.overview import lines, overview

    view = overview(run.project, run.config, run.me, run.room)
    run.emit(view.to_json(), "\n".join(lines(view)))


@operation("attention", shared=AS, params=(Param("peek", "bool", False, "Do not mark the messages read.", ("--peek",)),),
           mcp=Mcp("attention", "What needs your attention", ATTENTION))
def attention(run: Run, peek: bool) -> None:
    """Print the block to inject into a model call: other agents, your unread messages, your spawns.

    Example: rooms attention --as agentb --json
    """
    from rooms_cli.messaging.attention import build_attention, render_attention

    block = build_attention(run.project, run.config, run.me, mark_read=not peek)
    if run.json:
        return output.print_json(block)
    output.write(render_attention(block))


# --- watch ----------------------------------------------------------------------------------------------


@operation("watch", shared=("dir",), params=(
    Param("room", "strs", None, "Follow this room's transcript (repeatable; default: the current room).", ("--room", "-r"),
          metavar="ROOM", show_default=False),
    Param("all_", "bool", False, "Follow every room, board, group, inbox and spawn, new ones included.", ("--all",)),
    Param("inbox", "strs", None, "Follow this agent's inbox (repeatable).", ("--inbox",), metavar="AGENT", show_default=False),
    Param("board", "bool", False, "Follow the boards of the rooms given (default: the current room).", ("--board",)),
    Param("groups", "bool", False, "Follow every group log, new groups included.", ("--groups",)),
    Param("since", "datetime", None, "First print the events since this ISO time.", ("--since",), parse=time_value, metavar="ISO",
          show_default=False),
    Param("last", "int", None, "First print the last N events.", ("--last",), min=0, metavar="N", show_default=False),
    Param("timeout", "duration", None, "Stop after this long (e.g. 30, 30s, 5m); exit 0.", ("--timeout",), parse=duration_value,
          metavar="DURATION", show_default=False),
    Param("json_", "bool", False, "Print one JSON object a line (each with type and ts).", ("--json",)),
))
def watch(run: Run, room: list[str] | None, all_: bool, inbox: list[str] | None, board: bool, groups: bool, since: datetime | None,
          last: int | None,
          timeout: float | None, json_: bool) -> None:
    """Print each new event once, as it lands: messages, task, group, inbox and spawn events. Ctrl-C ends it.

    Under --json: one JSON object a line, each with `type` and `ts` (and room, group or agent).

    Example: rooms watch --all --json --timeout 60
    """
    import sys

    from rooms_cli.core.errors import UsageError
    from rooms_cli.watch import Selection, watch
    from rooms_cli.watch.wake import StopFlag, stop_on_sigint

    if since is not None and last is not None:
        raise UsageError("--since and --last cannot be combined; give one")
    selection = Selection.from_flags(
        rooms=room or (), all=all_, inboxes=inbox or (), board=board, groups=groups, current_room=run.room,
    )
    selection.check(run.project)
    if not json_ and sys.stderr.isatty():
        output.note(f"watching {selection.describe()} · Ctrl-C to stop")
    with stop_on_sigint(StopFlag()) as stop:
        for event in watch(run.project, selection, since=since, last=last, timeout=timeout, stop=stop):
            _show_event(event, json_)


def _show_event(event: dict[str, Any], as_json: bool) -> None:
    if as_json:
        output.print_json_line(event)
        return
    from rich.text import Text

    from rooms_cli.watch.render import line

    output.console().print(Text.assemble(*line(event)))


# --- Claude Code hooks: one process per prompt and per stop of a session ----------------------------------


def _run_hook(hook: str, run: Run, answer) -> None:
    """Read the hook's JSON, find the project (none: print nothing, never get in the session's way),
    and print `answer(project, config, me, payload)` as one JSON line when there is one."""
    import sys

    from rooms_cli.core import terminal
    from rooms_cli.messaging.hooks import find_hook_project, hook_event, parse_payload
    from rooms_cli.project.context import Context

    payload = parse_payload("" if sys.stdin.isatty() else terminal.read_stdin("the hook input"))
    if hook_event(hook, payload) is None:
        output.note(f"rooms: `hook claude-code {hook}` ignores a {payload.get('hook_event_name')} event")
        return
    project = find_hook_project(run.dir, payload)
    if project is None:
        return
    ctx = Context(project=project, as_=run.as_)
    result = answer(project, ctx.config, ctx.me, payload)
    if result:
        output.print_json_line(result)


@operation("hook", "claude-code", "stop", shared=("as_", "dir"), params=(
    Param("timeout", "duration", 50.0, "How long to wait for running spawns first (default 50s).", ("--timeout",),
          parse=duration_value, metavar="DURATION", show_default=False),
))
def claude_stop(run: Run, timeout: float) -> None:
    """Claude Code Stop hook: block the stop while spawns run or messages are unread (JSON on stdout).

    Wired as SubagentStop too, it lets a subagent finish: the session's messages are not its own.

    Example: rooms hook claude-code stop --timeout 9m < hook.json
    """
    from rooms_cli.messaging.hooks import claude_stop

    _run_hook("stop", run, lambda project, config, me, payload: claude_stop(project, config, me, payload, wait=timeout))


@operation("hook", "claude-code", "prompt", shared=("as_", "dir"))
def claude_prompt(run: Run) -> None:
    """Claude Code UserPromptSubmit hook: the attention block as additional context.

    Example: rooms hook claude-code prompt < hook.json
    """
    from rooms_cli.messaging.hooks import claude_prompt

    _run_hook("prompt", run, claude_prompt)


@operation("hook", "claude-code", "session-start", shared=("as_", "dir"))
def claude_session_start(run: Run) -> None:
    """Claude Code SessionStart hook: who you are, who else is here and what waits for you, as context.

    Runs for every source (startup, resume, clear, compact).

    Example: rooms hook claude-code session-start < hook.json
    """
    from rooms_cli.messaging.hooks import claude_session_start

    _run_hook("session-start", run, claude_session_start)


# every operation the fast path reads (cli/fast.py) and typer registers (the *_cmd modules)
OPERATIONS = (board, task_list, task_ready, task_claim, task_next, task_renew, task_release, task_done, sync, chat, transcript, send,
              inbox, status, attention, watch, claude_stop, claude_prompt, claude_session_start, search)
