"""The attention block: what an agent must know on every model call, compact enough for a prompt.

Every other agent with its status (idle ones too), the agent's running spawns, its unread messages
(marked read: once injected, the model has seen them), and the announce-yourself hint until the
agent has sent its first message. `build_attention` gives the data (the JSON of `rooms attention
--json`, shaped like the source's synthetic broadcast result); `render_attention` the text.
"""

from __future__ import annotations

from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.core.text import count
from rooms_cli.messaging.inbox import InboxMessage, take_unread, unread_messages
from rooms_cli.messaging.roster import roster
from rooms_cli.messaging.spawn import Spawn, reap_all, tree_of
from rooms_cli.messaging.status import has_announced, touch
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config

MESSAGE_LIMIT = 2_000  # characters of one message in a prompt; `rooms inbox` shows the rest

HINT = (
    "ACTION REQUIRED: announce yourself to the other agents — rooms send \"I'm {me}, working on …\" "
    "(without --to it reaches everyone); keep `rooms status set TEXT` current."
)

_LABELS = {"broadcast": "to all", "spawn_output": "spawn output", "spawn_error": "spawn error", "system": "system"}


def label(message: InboxMessage) -> str:
    """A short tag for how a message came: `to all`, `spawn output`, a group envelope's tag…"""
    if message.kind == "group":
        return message.tag or "group"
    if message.kind == "group_cancel":
        return f"{message.tag} · cancel" if message.tag else "group cancel"
    return _LABELS.get(message.kind, "")


def message_line(message: InboxMessage, limit: int | None = MESSAGE_LIMIT) -> str:
    """`#3 alice [to all]: text` (a reply shows what it answers)."""
    text = message.text.strip()
    if limit is not None and len(text) > limit:
        text = text[:limit] + f" … ({count(len(text) - limit, 'more character')}: rooms inbox --peek)"
    tag = label(message)
    quote = message.meta.get("quote") if message.reply_to is not None else None
    head = f"{message.label} {message.sender}" + (f" [{tag}]" if tag else "") + (f' (re "{quote[:60]}")' if quote else "")
    return f"{head}: {text}"


def message_json(message: InboxMessage) -> dict[str, Any]:
    """The inbox record as the attention block shows it: `id` is the inbox number, `content` the text,
    `ref` what `--reply-to` takes (the number, or an id prefix when a merge made the number shared),
    `message_id` the record's id."""
    data = message.to_json()
    message_id = data.pop("id")
    del data["to"]
    return {"id": data.pop("n"), "ref": message.ref or str(message.n), "message_id": message_id, "content": data.pop("text"), **data}


def _spawn_json(spawn: Spawn) -> dict[str, Any]:
    return {"id": spawn.id, "alias": spawn.alias, "parent": spawn.parent, "status": spawn.status, "description": spawn.description}


@dataclass
class Attention:
    """The attention block for one agent: the other agents, unread messages, running spawns, the hint."""

    agent: str
    hint: str | None
    agents: list[dict[str, Any]]
    messages: list[InboxMessage] = field(default_factory=list)
    spawns: list[Spawn] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """Nothing worth injecting: no other agent, no message, no running spawn, no hint."""
        return not (self.agents or self.messages or self.spawns or self.hint)

    def to_json(self) -> dict[str, Any]:
        return {
            "synthetic": True, "agent": self.agent, "hint": self.hint, "agents": self.agents,
            "messages": [message_json(m) for m in self.messages], "spawns": [_spawn_json(s) for s in self.spawns],
        }


def build_attention(project: Project, config: Config, me: str, *, mark_read: bool = True) -> Attention:
    """The attention block for `me`; unread messages are marked read unless `mark_read` is False."""
    touch(project, me)
    reap_all(project, tree_of(project, me))
    return Attention(
        agent=me,
        hint=None if has_announced(project, me) else HINT.format(me=me),
        agents=[e.to_json() for e in roster(project, config) if e.name != me],
        messages=take_unread(project, me) if mark_read else unread_messages(project, me),
        spawns=[s for s in tree_of(project, me) if s.active],
    )


def _agent_phrase(entry: dict[str, Any]) -> str:
    spawn = entry.get("spawn") or {}
    state = "idle" if entry["idle"] else "active"
    if spawn:
        state = f"spawn of {spawn['parent']}, {spawn['status']}"
    status = f' — "{entry["status"]}"' if entry.get("status") else ""
    return f"{entry['name']}{status} ({state})"


def render_attention(block: Attention) -> str:
    """The block as compact text for a prompt."""
    lines = [f"[rooms] You are {block.agent}."]
    if block.agents:
        lines.append(f"Other agents ({len(block.agents)}): " + "; ".join(_agent_phrase(a) for a in block.agents) + ".")
    else:
        lines.append("No other agents yet.")
    if block.spawns:
        names = ", ".join(f"{s.alias} ({s.description or s.id})" for s in block.spawns)
        lines.append(f"Your spawns still running: {names}. Their output arrives as messages; `rooms wait` blocks until then.")
    if block.messages:
        lines.append(f"Unread messages ({len(block.messages)}) — answer with: rooms send --reply-to N \"…\"")
        lines.extend("  " + message_line(m) for m in block.messages)
    if block.hint:
        lines.append(block.hint)
    return "\n".join(lines)
