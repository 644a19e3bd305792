"""Messaging's operations, each declared once (operations/declare.py): `rooms send` (and `reply`, its MCP
tool of `send --reply-to N MESSAGE`), `rooms inbox`, `rooms attention`, `rooms status set`, `rooms spawn`,
`rooms wait`, and the Claude Code hooks (docs/messaging.md)."""

from __future__ import annotations

from rooms_cli.core.shapes import BOOL, INT, MESSAGE, OVERVIEW, SENT, STR, envelope, nullable, record
from rooms_cli.operations.common import AS, AS_ROOM, LIMIT, SINCE, named, nonblank
from rooms_cli.operations.declare import REQUIRED, Mcp, McpArg, Param, operation
from rooms_cli.operations.values import count_value, duration_value

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from rooms_cli.across.overview import Overview
    from rooms_cli.messaging.inbox import InboxMessage, InboxView
    from rooms_cli.messaging.roster import RosterEntry
    from rooms_cli.messaging.send import SendResult
    from rooms_cli.messaging.spawn import Spawn
    from rooms_cli.messaging.wait import WaitResult
    from rooms_cli.project.config import Config
    from rooms_cli.project.context import Context
    from rooms_cli.store.paths import Project

    Answer = Callable[[Project, Config, str, dict[str, Any]], dict[str, Any] | None]  # a hook's answer

ATTENTION = record({"synthetic": BOOL, "agent": STR, "hint": nullable(STR), "agents": {"type": "array"},
                    "messages": {"type": "array"}, "text": STR})
WAITED = record({"agent": STR, "timed_out": BOOL, "spawns": {"type": "array"}, "pending": {"type": "array"},
                 "messages": {"type": "array", "items": MESSAGE}, "remaining": INT})
WAIT_DEFAULT_S = 300.0  # how long the MCP tool wait blocks when no timeout_seconds is given


@operation("send", shared=AS, params=(
    Param("message", help="What to say.", parse=nonblank("message")),
    Param("to", default=None, help="One agent (default: every other agent).", flags=("--to",), complete="agents", show_default=False,
          parse=named("recipient"), metavar="AGENT",
          mcp=McpArg(help="One agent; leave out to reach every other agent.")),
    Param("reply_to", default=None, flags=("--reply-to",), show_default=False, mcp=False,
          help="Answer message N of your inbox (its number, or a unique prefix of its id): goes to its sender."),
    Param("wake", "bool", False, "Run LLM-backed recipients now; their replies land in your inbox.", ("--wake",)),
), mcp=Mcp("send", "Send a message", SENT, quick=lambda ctx, values: not values["wake"],
           description="Send a message to one agent, or to every other agent. It lands in their inboxes."))
def send(ctx: Context, message: str, to: str | None, reply_to: str | int | None, wake: bool) -> SendResult:
    """Send a message to one agent, to everyone, or in reply to a message in your inbox.

    Example: rooms send --reply-to 3 "yes, take the API; I'm on the frontend"
    """
    from rooms_cli.messaging.send import send_message

    result = send_message(ctx.project, ctx.config, ctx.me, message, to=to, reply_to=reply_to)
    ctx.done("sent " + ", ".join(f"{m.id} to {m.to}" for m in result.delivered))
    if wake:
        from rooms_cli.messaging.wake import wake_recipients

        result.woken = wake_recipients(ctx.project, ctx.config, result.delivered)
    return result


# `rooms send --reply-to N MESSAGE` as its own MCP tool: send's command line and body, the tool taking N and the message
reply = send.tool(
    Mcp("reply", "Reply to a message", SENT, quick=True,
        description="Answer message n of your inbox (its number or its `ref`): the reply goes to its sender, quoting it."),
    reply_to=McpArg(name="n", kind="int_or_str", default=REQUIRED,
                    help="The message in your inbox: its number, or (when a git merge left a number shared) its `ref`, any unique "
                         "prefix of its id."),
    message=McpArg(help="Your answer."),
)


@operation("inbox", shared=AS, params=(
    Param("unread", "bool", False, "Only messages not read yet.", ("--unread",),
          mcp=McpArg(name="unread_only", default=True, help="Only messages not read yet (false: read ones too).")),
    Param("peek", "bool", False, "Do not mark anything read.", ("--peek",)),
    Param("last", "int", 10, "Show the last N messages besides the unread ones.", ("--last",), parse=count_value, mcp=False),
    Param("all_", "bool", False, "Show every message (reads the whole inbox).", ("--all",), mcp=False),
    LIMIT, SINCE,
), mcp=Mcp("inbox", "Read your inbox", envelope("messages", MESSAGE, agent=STR, unread=INT, marked_read=BOOL), quick=True,
           description="Your inbox, oldest first: unread messages by default, at most `limit` (each has `n` to reply to and "
                       "`read`). The unread ones returned are marked read unless peek; `remaining` counts the rest."))
def inbox(ctx: Context, unread: bool, peek: bool, last: int, all_: bool, limit: int | None, since: str | None) -> InboxView:
    """Show your unread messages and the last few (unread marked *) and mark them read, unless --peek.

    Example: rooms inbox --unread
    """
    from rooms_cli.messaging import unread as cursor
    from rooms_cli.messaging.status import touch

    touch(ctx.project, ctx.me)
    # through the cursor: only what arrived since the last call is read (messaging/unread.py)
    if unread:
        return cursor.open_unread(ctx.project, ctx.me, peek=peek, limit=limit, after=since)
    if all_ or limit is not None:
        from rooms_cli.messaging.inbox import open_inbox

        return open_inbox(ctx.project, ctx.me, peek=peek, limit=limit, after=since)
    return cursor.open_recent(ctx.project, ctx.me, last=last, peek=peek)


@operation("attention", shared=AS, params=(Param("peek", "bool", False, "Do not mark the messages read.", ("--peek",)),),
           mcp=Mcp("attention", "What needs your attention", ATTENTION, quick=True,
                   description="What to know now: the other agents and their status, your unread messages (marked read "
                               "unless peek), your running spawns, and a hint to announce yourself; `text` is the same as "
                               "a prompt block."))
def attention(ctx: Context, peek: bool) -> dict[str, Any]:
    """Print the block to inject into a model call: other agents, your unread messages, your spawns.

    Example: rooms attention --as agentb --json
    """
    from rooms_cli.messaging.attention import build_attention, render_attention

    block = build_attention(ctx.project, ctx.config, ctx.me, mark_read=not peek)
    return {**block.to_json(), "text": render_attention(block)}


@operation("agents", shared=("dir", "json_"))
def agents(ctx: Context) -> list[RosterEntry]:
    """List every agent with its status and whether it is idle (spawns included).

    Example: rooms agents --json
    """
    from rooms_cli.messaging.roster import roster
    from rooms_cli.messaging.spawn import reap_all

    reap_all(ctx.project)
    return roster(ctx.project, ctx.config)


@operation("status", "set", shared=AS, params=(
    Param("text", help="One line, e.g. 'Working on frontend' ('' clears it).",
          mcp=McpArg(help="One line, e.g. 'Working on the login form' ('' clears it).")),
), mcp=Mcp("status_set", "Set your status line", record({"agent": STR, "status": STR}), idempotent=True, quick=True,
           description="Set your status line, shown to every other agent."))
def status_set(ctx: Context, text: str) -> dict[str, Any]:
    """Set your status line.

    Example: rooms status set "Working on the login form"
    """
    from rooms_cli.messaging.status import set_status

    return set_status(ctx.project, ctx.me, text)


@operation("status", shared=AS_ROOM, mcp=Mcp("status", "The project at a glance", OVERVIEW, read_only=True, quick=True,
                                           description="The project at a glance for you: unread messages, your claims with "
                                                       "lease time left, each lane's open/doing/blocked counts, live groups, "
                                                       "active rooms, the other agents' status lines. Marks nothing read."))
def status(ctx: Context) -> Overview:
    """Show the project at a glance: your unread messages and claims (lease time left), each lane's open /
    doing / blocked tasks, live groups, active rooms, the other agents' status lines. Nothing is marked read.

    `rooms status TEXT` sets your own status line, as `rooms status set TEXT` does.

    Example: rooms status --json
    """
    from rooms_cli.across.overview import overview

    return overview(ctx.project, ctx.config, ctx.me, ctx.room)


@operation("spawn", shared=AS, params=(
    Param("prompt", help="The task for the new agent.", parse=nonblank("spawn prompt")),
    Param("description", default=None, help="3-5 words; also names the agent.", flags=("--description",), show_default=False),
    Param("profile", default=None, help="Run it as this agent definition (its model and directive).", flags=("--profile",),
          complete="agents", show_default=False),
), mcp=Mcp("spawn", "Spawn a helper agent", record({"id": STR, "alias": STR, "parent": STR, "status": STR}),
           description="Start a new agent on a prompt and return at once; its output arrives in your inbox (see wait)."))
def spawn(ctx: Context, prompt: str, description: str | None, profile: str | None) -> Spawn:
    """Start a new agent on PROMPT and return at once; its output arrives in your inbox.

    Example: rooms spawn "Write the API for the login form" --description "API work"
    """
    from rooms_cli.messaging.spawn import start_spawn

    return start_spawn(ctx.project, ctx.config, ctx.me, prompt, description=description, profile=profile)


def spawns_line(project: Project, agent: str) -> Callable[[float], str]:
    """While `rooms wait` blocks: `waiting for 2 spawns · 4s · running: b, c · done: a`."""
    from rooms_cli.core.text import count
    from rooms_cli.messaging.spawn import tree_of
    from rooms_cli.messaging.wait import running_tree

    def describe(elapsed: float) -> str:
        running = running_tree(project, agent, set())
        done = [s.alias for s in tree_of(project, agent) if s not in running and not s.active]
        return (f"waiting for {count(len(running), 'spawn')} · {elapsed:.0f}s · running: {', '.join(s.alias for s in running) or '-'}"
                + (f" · done: {', '.join(done)}" if done else ""))

    return describe


class Waited:
    """What `rooms wait` returns: how the wait ended, then the unread messages (marked read now)."""

    def __init__(self, result: WaitResult, messages: list[InboxMessage]) -> None:
        self.result, self.messages = result, messages

    def to_json(self) -> dict[str, Any]:
        return {**self.result.to_json(), "messages": [m.shown(read=False) for m in self.messages]}


@operation("wait", shared=AS, params=(
    Param("timeout", "duration", None, "Give up after this long (90, 90s, 15m); exit 4.", ("--timeout",), parse=duration_value,
          metavar="DURATION", show_default=False,
          mcp=McpArg(name="timeout_seconds", kind="float", default=WAIT_DEFAULT_S, help="Give up after this many seconds.", ge=0,
                     le=3600)),
    LIMIT,
), mcp=Mcp("wait", "Wait for your spawns", WAITED, long=True,
           description="Block until all your spawns (and theirs) finished, then return your unread messages (at most "
                       "`limit`, marked read). Progress is reported while it waits. Timing out is the error timed_out, "
                       "listing what still runs."))
def wait(ctx: Context, timeout: float | None, limit: int | None) -> Waited | dict[str, Any]:
    """Block until all your spawns (and theirs) finished, then print your unread messages.

    Example: rooms wait --timeout 10m
    """
    from rooms_cli.messaging.status import touch
    from rooms_cli.messaging.wait import wait_for_spawns

    touch(ctx.project, ctx.me)
    with ctx.waiting(spawns_line(ctx.project, ctx.me)):
        result = wait_for_spawns(ctx.project, ctx.me, timeout)
    if result.timed_out:
        raise result.timeout_error(timeout)
    if limit is None:  # every unread message (the command line)
        from rooms_cli.messaging.inbox import take_unread

        messages = take_unread(ctx.project, ctx.me)
        result.name_outcomes(ctx.project, messages)
        return Waited(result, messages)
    from rooms_cli.messaging.unread import open_unread

    view = open_unread(ctx.project, ctx.me, limit=limit)
    result.name_outcomes(ctx.project, view.messages)
    mail = view.to_json()
    return {**result.to_json(), "messages": mail["messages"], "remaining": mail["remaining"]}


# --- Claude Code hooks: one process per prompt and per stop of a session ----------------------------------

def _hook(ctx: Context, hook: str, answer: Answer) -> dict[str, Any] | None:
    """Read the hook's JSON from stdin, find the project (none: no answer, never get in the session's way),
    and return `answer(project, config, me, payload)`, the hook's one JSON line when there is one."""
    import sys

    from rooms_cli.core import terminal
    from rooms_cli.messaging.hooks import find_hook_project, hook_event, parse_payload
    from rooms_cli.project.context import Context

    payload = parse_payload("" if sys.stdin.isatty() else terminal.read_stdin("the hook input"))
    if hook_event(hook, payload) is None:
        ctx.note(f"rooms: `hook claude-code {hook}` ignores a {payload.get('hook_event_name')} event")
        return None
    project = find_hook_project(ctx.dir, payload)
    if project is None:
        return None
    found = Context(project, as_=ctx.as_)
    return answer(project, found.config, found.me, payload)


@operation("hook", "claude-code", "stop", shared=("as_", "dir"), params=(
    Param("timeout", "duration", 50.0, "How long to wait for running spawns first (default 50s).", ("--timeout",),
          parse=duration_value, metavar="DURATION", show_default=False),
))
def claude_stop(ctx: Context, timeout: float) -> dict[str, Any] | None:
    """Claude Code Stop hook: block the stop while spawns run or messages are unread (JSON on stdout).

    Wired as SubagentStop too, it lets a subagent finish: the session's messages are not its own.

    Example: rooms hook claude-code stop --timeout 9m < hook.json
    """
    from rooms_cli.messaging.hooks import claude_stop

    return _hook(ctx, "stop", lambda project, config, me, payload: claude_stop(project, config, me, payload, wait=timeout))


@operation("hook", "claude-code", "prompt", shared=("as_", "dir"))
def claude_prompt(ctx: Context) -> dict[str, Any] | None:
    """Claude Code UserPromptSubmit hook: the attention block as additional context.

    Example: rooms hook claude-code prompt < hook.json
    """
    from rooms_cli.messaging.hooks import claude_prompt

    return _hook(ctx, "prompt", claude_prompt)


@operation("hook", "claude-code", "session-start", shared=("as_", "dir"))
def claude_session_start(ctx: Context) -> dict[str, Any] | None:
    """Claude Code SessionStart hook: who you are, who else is here and what waits for you, as context.

    Runs for every source (startup, resume, clear, compact).

    Example: rooms hook claude-code session-start < hook.json
    """
    from rooms_cli.messaging.hooks import claude_session_start

    return _hook(ctx, "session-start", claude_session_start)


OPERATIONS = (send, reply, inbox, attention, agents, status, status_set, spawn, wait, claude_stop, claude_prompt, claude_session_start)
