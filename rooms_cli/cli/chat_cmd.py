"""`rooms chat`, `rooms transcript`, `rooms room …`: chat rooms (see docs/chat.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli import output
from rooms_cli.cli.options import complete_agents, complete_rooms
from rooms_cli.cli.shared import Run, declared_command, shared
from rooms_cli.operations import hot as operations
from rooms_cli.operations import rooms as operations_rooms
from rooms_cli.operations.rooms import run_slash

room_app = typer.Typer(help="Chat rooms: roster, budget, mutes, save and rehydrate.\n\nExample: rooms room create sync --agent researcher --agent architect", no_args_is_help=True)
AgentArg = Annotated[str, typer.Argument(autocompletion=complete_agents, help="Agent id (fuzzy: @researcher, agents/researcher, reseacher).")]


chat_cmd = declared_command(operations.chat)
transcript_cmd = declared_command(operations.transcript)


room_app.command("create")(declared_command(operations_rooms.room_create))
room_app.command("list")(declared_command(operations_rooms.room_list))
room_app.command("show")(declared_command(operations_rooms.room_show))


@room_app.command("use")
@shared()
def use_cmd(run: Run, room_id: Annotated[str, typer.Argument(autocompletion=complete_rooms, help="A live room.")]) -> None:
    """Make a live room the current one.

    Example: rooms room use architecture-sync
    """
    from rooms_cli.chat.membership import use

    data = use(run.project, room_id)
    output.print_json(data) if run.json else output.say(f"Current room: {data['room']}")


def _agent_command(name: str, summary: str, example: str) -> None:
    @shared(as_=True, room=True)
    def command(run: Run, agent: AgentArg) -> None:
        run_slash(run, f"/{name} {agent}")

    command.__doc__ = f"{summary}\n\nExample: {example}"
    room_app.command(name)(command)


room_app.command("invite")(declared_command(operations_rooms.room_invite))
room_app.command("kick")(declared_command(operations_rooms.room_kick))
_agent_command("mute", "Keep an agent out of open messages in this room; mentions still reach it (= /mute).", "rooms room mute wildcard")
_agent_command("unmute", "Lift a mute (= /unmute).", "rooms room unmute wildcard")
_agent_command("handoff", "Summarise an agent's session into a deliberation and start it fresh (= /handoff).", "rooms room handoff researcher")


@room_app.command("continue")
@shared(as_=True, room=True)
def continue_cmd(
    run: Run,
                 no_wait: Annotated[bool, typer.Option("--no-wait", help="Exit 3 at once if a turn holds the floor.")] = False) -> None:
    """Reset the turn budget and replay queued mentions (= /continue).

    Example: rooms room continue --room architecture-sync
    """
    run_slash(run, "/continue", no_wait)


@room_app.command("save")
@shared(room=True)
def save_cmd(run: Run) -> None:
    """Write the transcript to .rooms/chat/<room>.md (class: transcript) (= /save).

    Example: rooms room save --room architecture-sync && git add .rooms/chat
    """
    run_slash(run, "/save")


@room_app.command("join")
@shared()
def join_cmd(run: Run, target: Annotated[str, typer.Argument(autocompletion=complete_rooms, help="A room id, or chat/<room> to rehydrate a saved transcript.")]) -> None:
    """Switch to a room (created if missing), or rebuild a live room from a saved transcript (= /join).

    Example: rooms room join chat/architecture-sync
    """
    run_slash(run, f"/join {target}")


@room_app.command("drop")
@shared(as_=True, room=True)
def drop_cmd(
    run: Run,
             no_save: Annotated[bool, typer.Option("--no-save", help="Do not save the transcript first.")] = False) -> None:
    """Stop a room, saving its transcript first (= /drop). Its files stay; `join` brings it back.

    Example: rooms room drop --room architecture-sync
    """
    run_slash(run, "/drop --no-save" if no_save else "/drop")


@room_app.command("halt")
@shared(as_=True, room=True)
def halt_cmd(run: Run) -> None:
    """Stop a room without saving (= /halt). Its files stay; `join` brings it back.

    Example: rooms room halt --room scratch
    """
    run_slash(run, "/halt")
