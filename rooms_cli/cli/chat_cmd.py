"""`rooms chat`, `rooms transcript`, `rooms room …`: chat rooms (see docs/chat.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from rooms_cli.cli import output
from rooms_cli.cli.dispatch import declared_command
from rooms_cli.cli.help import GROUPS
from rooms_cli.cli.options import commands, complete_agents, complete_rooms
from rooms_cli.cli.shared import Run, shared
from rooms_cli.operations import chat as ops

room_app = commands(GROUPS["room"])
AgentArg = Annotated[str, typer.Argument(autocompletion=complete_agents, help="Agent id (fuzzy: @researcher, agents/researcher, reseacher).")]


chat_cmd = declared_command(ops.chat)
transcript_cmd = declared_command(ops.transcript)


def run_slash(run: Run, line: str, no_wait: bool = False) -> None:
    """Run a `rooms room …` command through its slash command (one implementation for both)."""
    from rooms_cli.chat import slash
    from rooms_cli.cli import chat_view

    view = None if run.json else chat_view.TurnView()
    result = slash.run(run.project, run.config, run.room, run.me, line, on_event=view, wait=not no_wait, on_wait=output.note)
    run.emit(result.data if result.turn is None else result, lambda: chat_view.print_slash(result))


for _op in (ops.room_create, ops.room_list, ops.room_show):
    room_app.command(_op.words[-1])(declared_command(_op))


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


room_app.command("invite")(declared_command(ops.room_invite))
room_app.command("kick")(declared_command(ops.room_kick))
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
