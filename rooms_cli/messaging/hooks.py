"""Host integrations: Claude Code's Stop and UserPromptSubmit hooks.

Stop (`rooms hook claude-code stop`, hook JSON on stdin): wait for the agent's running spawns (up
to a timeout), then, if unread messages remain, answer `{"decision": "block", "reason": …}` with the
messages as the reason — Claude Code then keeps working on them. The messages are marked read as
they are handed over, so every block makes progress and the loop ends when no new message comes.
Spawns still running after the wait block once more; when Claude Code says `stop_hook_active`
(it is already continuing because of a stop hook) and only running spawns remain, the agent may
stop, so a spawn that never ends cannot trap a session forever. Nothing printed: it may stop.

UserPromptSubmit (`… prompt`): the attention block as `additionalContext`.
"""

from __future__ import annotations

import json
from pathlib import Path

from rooms_cli.messaging.attention import build_attention, message_line, render_attention
from rooms_cli.messaging.inbox import take_unread
from rooms_cli.messaging.status import touch
from rooms_cli.messaging.wait import wait_for_spawns
from rooms_cli.store.paths import Project, find_project

# Claude Code kills a hook after its `timeout` (60 s unless the settings say otherwise)
DEFAULT_STOP_WAIT = 50.0


def parse_payload(text: str) -> dict:
    """The hook's JSON input; empty or unreadable input counts as no fields (a hook must not fail)."""
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def find_hook_project(explicit: str | None, payload: dict) -> Project | None:
    """--dir / ROOMS_DIR, else upwards from the session's `cwd`, else from ours; None: not a rooms project."""
    cwd = payload.get("cwd")
    start = Path(cwd) if isinstance(cwd, str) and cwd else None
    return find_project(start, explicit)


def stop_reason(me: str, messages, pending) -> str:
    lines = []
    if messages:
        lines.append(
            f"rooms: {len(messages)} unread message(s) for {me}. Act on them (reply with "
            "`rooms send --reply-to N \"…\"` where useful) before finishing:"
        )
        lines.extend(message_line(m, limit=None) for m in messages)
    if pending:
        names = ", ".join(f"{s.alias} ({s.description or s.id})" for s in pending)
        lines.append(f"rooms: spawns still running: {names}. Run `rooms wait` to wait for their output before finishing.")
    return "\n".join(lines)


def claude_stop(project: Project, config, me: str, payload: dict, *, wait: float = DEFAULT_STOP_WAIT) -> dict | None:
    """The Stop hook's answer: a block decision, or None when the agent may stop."""
    touch(project, me)
    waited = wait_for_spawns(project, me, timeout=wait)
    messages = take_unread(project, me)
    if messages:
        return {"decision": "block", "reason": stop_reason(me, messages, waited.pending)}
    if waited.pending and not payload.get("stop_hook_active"):
        return {"decision": "block", "reason": stop_reason(me, [], waited.pending)}
    return None


def claude_prompt(project: Project, config, me: str) -> dict | None:
    """The UserPromptSubmit hook's answer: the attention block as additional context (None: nothing to say)."""
    block = build_attention(project, config, me)
    if block.empty:
        return None
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": render_attention(block)}}
