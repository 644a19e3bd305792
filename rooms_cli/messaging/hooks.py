"""Host integrations: Claude Code's SessionStart, UserPromptSubmit, Stop and SubagentStop hooks.

Every hook reads the JSON Claude Code sends on stdin and first checks its `hook_event_name`: a
command given another event's payload does nothing (a payload without the field, from a hand test
or an older host, counts as the command's own event). The fields used:

    SessionStart      {"hook_event_name": "SessionStart", "source": "startup|resume|clear|compact", "cwd", …}
    UserPromptSubmit  {"hook_event_name": "UserPromptSubmit", "prompt": "…", "cwd", …}
    Stop              {"hook_event_name": "Stop", "stop_hook_active": false, "cwd", …}
    SubagentStop      {"hook_event_name": "SubagentStop", "stop_hook_active": false, "agent_id", "agent_type", …}

SessionStart (`rooms hook claude-code session-start`): the attention block as `additionalContext`
(`hookSpecificOutput`), on every source — a new session, a resumed one, after /clear and after a
compaction — so the session always learns who it is, who else is there and what waits for it.

UserPromptSubmit (`… prompt`): the attention block as `additionalContext`, when there is anything in it.

Stop (`… stop`): wait for the agent's running spawns (up to a timeout), then, if unread messages
remain, answer `{"decision": "block", "reason": …}` with the messages as the reason — Claude Code
then keeps working on them. The messages are marked read as they are handed over, so every block
makes progress and the loop ends when no new message comes. Spawns still running after the wait
block once more; when Claude Code says `stop_hook_active` (it is already continuing because of a
stop hook) and only running spawns remain, the agent may stop, so a spawn that never ends cannot
trap a session forever. Nothing printed: it may stop.

SubagentStop (the same `… stop` wired under SubagentStop): a subagent (Claude Code's Task tool) runs
under its session's identity, so the session's inbox is not addressed to it: it is let through at
once, and the session's messages stay unread for the session's own Stop.
"""

from __future__ import annotations

import json
from pathlib import Path

from rooms_cli.core.text import count
from rooms_cli.messaging.attention import build_attention, message_line, render_attention
from rooms_cli.messaging.inbox import take_unread
from rooms_cli.messaging.status import touch
from rooms_cli.messaging.wait import wait_for_spawns
from rooms_cli.store.paths import Project, find_project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.messaging.inbox import InboxMessage
    from rooms_cli.messaging.spawn import Spawn
    from rooms_cli.project.config import Config

# Claude Code kills a hook after its `timeout` (60 s unless the settings say otherwise)
DEFAULT_STOP_WAIT = 50.0

# the events each `rooms hook claude-code …` command handles; the first is assumed when a payload names none
HOOK_EVENTS = {
    "session-start": ("SessionStart",),
    "prompt": ("UserPromptSubmit",),
    "stop": ("Stop", "SubagentStop"),
}


def parse_payload(text: str) -> dict[str, Any]:
    """The hook's JSON input; empty or unreadable input counts as no fields (a hook must not fail)."""
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def hook_event(hook: str, payload: dict[str, Any]) -> str | None:
    """The event `payload` is for, when the command `hook` handles it; None: not this hook's event."""
    expected = HOOK_EVENTS[hook]
    name = payload.get("hook_event_name")
    if not isinstance(name, str) or not name:
        return expected[0]
    return name if name in expected else None


def find_hook_project(explicit: str | None, payload: dict[str, Any]) -> Project | None:
    """--dir / ROOMS_DIR, else upwards from the session's `cwd`, else from ours; None: not a rooms project."""
    cwd = payload.get("cwd")
    start = Path(cwd) if isinstance(cwd, str) and cwd else None
    return find_project(start, explicit)


def stop_reason(me: str, messages: list[InboxMessage], pending: list[Spawn]) -> str:
    lines = []
    if messages:
        lines.append(
            f"rooms: {count(len(messages), 'unread message')} for {me}. Act on them (reply with "
            "`rooms send --reply-to N \"…\"` where useful) before finishing:"
        )
        lines.extend(message_line(m, limit=None) for m in messages)
    if pending:
        names = ", ".join(f"{s.alias} ({s.description or s.id})" for s in pending)
        lines.append(f"rooms: spawns still running: {names}. Run `rooms wait` to wait for their output before finishing.")
    return "\n".join(lines)


def claude_stop(project: Project, config: Config, me: str, payload: dict[str, Any], *, wait: float = DEFAULT_STOP_WAIT) -> dict[str, Any] | None:
    """The Stop hook's answer: a block decision, or None when the agent may stop.

    A SubagentStop payload is always let through: the session's messages are not the subagent's."""
    if hook_event("stop", payload) != "Stop":
        return None
    touch(project, me)
    waited = wait_for_spawns(project, me, timeout=wait)
    messages = take_unread(project, me)
    if messages:
        return {"decision": "block", "reason": stop_reason(me, messages, waited.pending)}
    if waited.pending and not payload.get("stop_hook_active"):
        return {"decision": "block", "reason": stop_reason(me, [], waited.pending)}
    return None


def _context(event: str, text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def claude_prompt(project: Project, config: Config, me: str, payload: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The UserPromptSubmit hook's answer: the attention block as additional context (None: nothing to say)."""
    if hook_event("prompt", payload or {}) is None:
        return None
    block = build_attention(project, config, me)
    if block.empty:
        return None
    return _context("UserPromptSubmit", render_attention(block))


def claude_session_start(project: Project, config: Config, me: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The SessionStart hook's answer: the attention block as additional context, always (even an
    empty block says who the session is), for every source: startup, resume, clear, compact."""
    if hook_event("session-start", payload) is None:
        return None
    return _context("SessionStart", render_attention(build_attention(project, config, me)))
