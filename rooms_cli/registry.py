"""Where every part plugs in, in one visible place.

Each table names its entries by import path (`module:attribute`), so that start-up stays lazy: the
CLI imports only the command being run, `rooms tick` only its steps. `resolve` imports an entry and
fails loudly — a broken or missing part is an ImportError (or AttributeError) at the first use,
never silently skipped — and `tests/test_architecture.py` resolves every entry of every table.

To add a part: write its module, then add one line to the table it belongs in.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

# `rooms <name>`: a typer command function or a typer sub-app (a group of commands)
COMMANDS: dict[str, str] = {
    "init": "rooms_cli.cli.project_cmd:init_cmd",
    "config": "rooms_cli.cli.project_cmd:config_app",
    "demo": "rooms_cli.cli.project_cmd:demo_cmd",
    "tick": "rooms_cli.cli.project_cmd:tick_cmd",
    "doctor": "rooms_cli.cli.project_cmd:doctor_cmd",
    "agent": "rooms_cli.cli.agent_cmd:agent_app",
    "models": "rooms_cli.cli.models_cmd:models_app",
    "chat": "rooms_cli.cli.chat_cmd:chat_cmd",
    "transcript": "rooms_cli.cli.chat_cmd:transcript_cmd",
    "room": "rooms_cli.cli.chat_cmd:room_app",
    "board": "rooms_cli.cli.board_cmd:board_cmd",
    "task": "rooms_cli.cli.board_cmd:task_app",
    "roundtable": "rooms_cli.cli.roundtable_cmd:roundtable_app",
    "schedule": "rooms_cli.cli.roundtable_cmd:schedule_app",
    "memory": "rooms_cli.cli.roundtable_cmd:memory_app",
    "group": "rooms_cli.cli.group_cmd:group_app",
    "send": "rooms_cli.cli.messaging_cmd:send_cmd",
    "inbox": "rooms_cli.cli.messaging_cmd:inbox_cmd",
    "status": "rooms_cli.cli.messaging_cmd:status_app",
    "agents": "rooms_cli.cli.messaging_cmd:agents_cmd",
    "spawn": "rooms_cli.cli.messaging_cmd:spawn_cmd",
    "wait": "rooms_cli.cli.messaging_cmd:wait_cmd",
    "attention": "rooms_cli.cli.messaging_cmd:attention_cmd",
    "hook": "rooms_cli.cli.messaging_cmd:hook_app",
    "watch": "rooms_cli.cli.watch_cmd:watch_cmd",
    "mcp": "rooms_cli.cli.mcp_cmd:mcp_cmd",
    "files": "rooms_cli.cli.files_cmd:files_app",
    "sync": "rooms_cli.cli.sync_cmd:sync_cmd",
    "top": "rooms_cli.cli.top_cmd:top_cmd",
}

# `rooms tick`: run in this order; each is `(project, config, dry_run) -> list[dict]` (what it did)
TICK_STEPS: dict[str, str] = {
    "schedule": "rooms_cli.roundtable.tick:fire_schedule",
    "roundtables": "rooms_cli.roundtable.tick:run_pending",
    "leases": "rooms_cli.board.tick:expire_leases",
    "reservations": "rooms_cli.reservations.tick:expire_reservations",
    "spawns": "rooms_cli.messaging.tick:reap_spawns",
    "wake": "rooms_cli.messaging.tick:wake_agents",
    "sync": "rooms_cli.sync.tick:sync_step",
}

# `rooms doctor`: each part's own checks, `(project, config) -> list[Finding]`
DOCTOR_CHECKS: dict[str, str] = {
    "chat": "rooms_cli.chat.doctor:check",
    "board": "rooms_cli.board.doctor:check",
    "messaging": "rooms_cli.messaging.doctor:check",
    "groups": "rooms_cli.groups.doctor:check",
    "roundtable": "rooms_cli.roundtable.doctor:check",
    "reservations": "rooms_cli.reservations.doctor:check",
    "sync": "rooms_cli.sync.doctor:check",
}

# `rooms demo`: one section a part, `(project, show) -> None`, run in this order
DEMO_SECTIONS: dict[str, str] = {
    "chat": "rooms_cli.chat.demo:run",
    "board": "rooms_cli.board.demo:run",
    "roundtable": "rooms_cli.roundtable.demo:run",
    "groups": "rooms_cli.groups.demo:run",
    "messaging": "rooms_cli.messaging.demo:run",
}

# what a chat prompt is told about its room by other parts, `(project, room) -> str` (markdown, may be "")
PROMPT_SECTIONS: dict[str, str] = {
    "board": "rooms_cli.board.render:board_markdown",
}


def resolve(target: str) -> Any:
    """The object a table entry names; raises ImportError/AttributeError when it is broken or missing."""
    module, _, attribute = target.partition(":")
    return getattr(import_module(module), attribute)
