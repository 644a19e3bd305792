"""Slash commands inside `rooms chat` (a person's message that starts with `/`).

Each does what the matching `rooms room …` subcommand does; the result is data (a `SlashResult`)
that the command line or interactive mode renders. Only people type slash commands: an agent's
reply is never parsed for them.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from rooms_cli.core.errors import UsageError
from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)

if TYPE_CHECKING:
    from collections.abc import Callable

    from rooms_cli.chat.coordinator import Event
    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project

COMMANDS: dict[str, str] = {
    "save": "write the transcript to .rooms/chat/<room>/<save-id>.md",
    "continue": "reset the turn budget and replay queued mentions",
    "handoff": "/handoff <agent>: summarise its session into a deliberation and start it fresh",
    "join": "/join <room> or /join chat/<room>: switch room, or rehydrate a saved transcript",
    "leave": "leave chat mode (the room keeps running)",
    "drop": "/drop [--no-save]: stop the room (saves first unless --no-save)",
    "halt": "stop the room without saving",
    "mute": "/mute <agent>: keep it out of open messages here (a mention still reaches it)",
    "unmute": "/unmute <agent>: lift the mute",
    "invite": "/invite <agent>: add it to the roster",
    "kick": "/kick <agent>: remove it and delete its session here",
    "whois": "/whois <agent>: model, capabilities, rooms, definition file",
    "rooms": "list live rooms",
    "list": "this room's roster, budget, mutes and queued mentions",
    "help": "this list",
    "quit": "leave chat mode (the room keeps running)",
}
NEEDS_AGENT = ("handoff", "mute", "unmute", "invite", "kick", "whois")


@dataclass
class SlashResult:
    """What a slash command did: its data, the room to go on in, whether to leave, any turn it ran."""

    command: str
    data: dict[str, Any] = field(default_factory=dict)
    room: str | None = None  # the room to continue in (after /join)
    leave: bool = False
    turn: Any = None  # a TurnResult when the command ran agents (/continue)

    def to_json(self) -> dict[str, Any]:
        data = {"command": self.command, "result": self.data}
        if self.turn is not None:
            data["turn"] = self.turn.to_json()
        return data


def parse(line: str) -> tuple[str, list[str]]:
    """`/mute  researcher` -> ("mute", ["researcher"]); unknown commands are a usage error."""
    try:
        words = shlex.split(line.strip()[1:])
    except ValueError as exc:
        raise UsageError(f"cannot read the slash command {line.strip()!r}: {exc}") from None
    if not words:
        raise UsageError("empty slash command; valid ones: " + ", ".join(f"/{c}" for c in COMMANDS))
    name, args = words[0].lower(), words[1:]
    if name not in COMMANDS:
        raise UsageError(f"unknown command /{name}; valid ones: " + ", ".join(f"/{c}" for c in COMMANDS))
    if name in NEEDS_AGENT and len(args) != 1:
        raise UsageError(f"/{name} takes one agent id, e.g. /{name} researcher")
    if name == "join" and len(args) != 1:
        raise UsageError("/join takes a room id or chat/<room>, e.g. /join chat/architecture-sync")
    if name == "drop" and args not in ([], ["--no-save"]):
        raise UsageError("/drop takes only --no-save")
    if name not in NEEDS_AGENT and name not in ("join", "drop") and args:
        raise UsageError(f"/{name} takes no arguments")
    return name, args


def refuse_agents(project: Project, me: str) -> None:
    """Only people type slash commands in `rooms chat`; an agent identity (`--as researcher`) may not."""
    from rooms_cli.agents.definitions import agent_ids
    from rooms_cli.core.errors import InvalidInput

    if me in agent_ids(project):
        raise InvalidInput(f"{me} is an agent: only people can use slash commands in `rooms chat` "
                           "(agents may @-mention agents; the `rooms room …` commands are still there)")


def run(project: Project, config: Config, room: str, me: str, line: str, *, on_event: Event | None = None,
        wait: bool = True, on_wait: Callable[[str], None] | None = None, chat_mode: bool = False) -> SlashResult:
    """Do the slash command `line` in `room` as `me` (`chat_mode`: typed in interactive chat mode,
    the only place /leave and /quit mean something)."""
    from rooms_cli.chat import handoff, lifecycle, membership
    from rooms_cli.chat.coordinator import continue_room, floor

    name, args = parse(line)
    result = SlashResult(command=name, room=room)
    agent = agent_id(project, args[0]) if name in NEEDS_AGENT else ""
    if name in ("leave", "quit"):
        if not chat_mode:
            raise UsageError(f"/{name} ends chat mode, and this is not chat mode: there is nothing to leave "
                             "(`rooms chat` without a message, on a terminal, starts chat mode)")
        result.leave = True
    elif name == "help":
        result.data = {"commands": {f"/{k}": v for k, v in COMMANDS.items()}}
    elif name == "save":
        result.data = lifecycle.save(project, room)
    elif name == "continue":
        with floor(project, room, wait=wait, on_wait=on_wait):
            result.turn = continue_room(project, config, room, me, on_event)
        result.data = {"budget": result.turn.to_json()["budget"], "replayed": result.turn.eligible}
    elif name == "handoff":
        result.data = handoff.handoff(project, config, room, agent)
    elif name == "join":
        result.data = lifecycle.join(project, args[0])
        result.room = result.data["room"]
    elif name in ("drop", "halt"):
        status = "dropped" if name == "drop" else "halted"
        result.data = lifecycle.stop(project, room, status, me, save_first=name == "drop" and not args)
    elif name in ("mute", "unmute"):
        result.data = membership.set_muted(project, room, agent, name == "mute", me)
    elif name == "invite":
        result.data = membership.invite(project, room, agent, me)
    elif name == "kick":
        result.data = membership.kick(project, room, agent, me)
    elif name == "whois":
        from rooms_cli.chat.directory import whois

        result.data = whois(project, config, agent)
    elif name == "rooms":
        result.data = {"rooms": membership.live_rooms(project)}
    elif name == "list":
        result.data = membership.show(project, config, room)
    return result


def agent_id(project: Project, word: str) -> str:
    """Slash commands accept agent ids the way mentions do (`@researcher`, `agents/researcher`, typos)."""
    from rooms_cli.agents.definitions import agent_ids
    from rooms_cli.chat.addressing import resolve_mention

    word = word.lstrip("@")
    found = resolve_mention(word, agent_ids(project))
    return found or word.lower()
