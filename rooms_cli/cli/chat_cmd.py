"""`rooms chat`, `rooms transcript`, `rooms room …`: chat rooms (see docs/chat.md)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from rooms_cli.cli import output
from rooms_cli.cli.options import AsOpt, DirOpt, JsonOpt, RoomOpt

room_app = typer.Typer(help="Chat rooms: roster, budget, mutes, save and rehydrate.\n\nExample: rooms room create sync --agent researcher --agent architect", no_args_is_help=True)
AgentArg = Annotated[str, typer.Argument(help="Agent id (fuzzy: @researcher, agents/researcher, reseacher).")]


def _ctx(dir, as_=None, room=None):
    from rooms_cli.context import Context

    return Context.open(dir, as_=as_, room=room)


def chat_cmd(
    message: Annotated[str | None, typer.Argument(help="The message; `/cmd …` runs a slash command. Omit on a terminal for chat mode.")] = None,
    room: RoomOpt = None,
    as_: AsOpt = None,
    explain: Annotated[bool, typer.Option("--explain", "--dry-run", help="Show who would answer and why; call no model, write nothing.")] = False,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="Exit 3 at once if another turn holds the room's floor.")] = False,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Post a message to a room and print the replies as they arrive.

    Example: rooms chat '@researcher what is the rate limit on api.stripe.com?'
    """
    from rooms_cli.chat import coordinator, slash
    from rooms_cli.cli import chat_view

    ctx = _ctx(dir, as_, room)
    if message is None:
        if sys.stdin.isatty() and not json_ and not explain:
            from rooms_cli.cli.chat_interactive import run_interactive

            run_interactive(ctx, chat_view)
            return
        message = sys.stdin.read().strip()
    if not message.strip():
        raise typer.BadParameter("the message is empty", param_hint="MESSAGE")
    if explain:
        data = coordinator.explain(ctx.project, ctx.config, ctx.room, message)
        output.print_json(data) if json_ else chat_view.print_explain(data)
        return
    view = None if json_ else chat_view.TurnView()
    if message.lstrip().startswith("/"):
        slash.refuse_agents(ctx.project, ctx.me)
        result = slash.run(ctx.project, ctx.config, ctx.room, ctx.me, message, on_event=view, wait=not no_wait, on_wait=output.note)
        output.print_json(result) if json_ else chat_view.print_slash(result)
        return
    with coordinator.floor(ctx.project, ctx.room, wait=not no_wait, on_wait=output.note):
        turn = coordinator.run_message(ctx.project, ctx.config, ctx.room, ctx.me, message, on_event=view)
    output.print_json(turn) if json_ else chat_view.print_turn_footer(turn)


def transcript_cmd(
    room: RoomOpt = None,
    last: Annotated[int | None, typer.Option("--last", "-n", min=1, help="Only the last N records.")] = None,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Print a room's messages (every record with --json).

    Example: rooms transcript --room sync --last 20 --json
    """
    from rooms_cli.chat.rooms import load_room
    from rooms_cli.chat.transcript import read_transcript, tail
    from rooms_cli.cli import chat_view

    ctx = _ctx(dir, room=room)
    load_room(ctx.project, ctx.room)
    messages = tail(ctx.project, ctx.room, last) if last else read_transcript(ctx.project, ctx.room)
    output.print_json(messages) if json_ else chat_view.print_transcript(messages)


def _slash(dir, as_, room, json_, line: str, no_wait: bool = False) -> None:
    """Run a `rooms room …` subcommand through its slash command (one implementation for both)."""
    from rooms_cli.chat import slash
    from rooms_cli.cli import chat_view

    ctx = _ctx(dir, as_, room)
    view = None if json_ else chat_view.TurnView()
    result = slash.run(ctx.project, ctx.config, ctx.room, ctx.me, line, on_event=view, wait=not no_wait, on_wait=output.note)
    output.print_json(result.data if result.turn is None else result) if json_ else chat_view.print_slash(result)


@room_app.command("create")
def create_cmd(
    room_id: Annotated[str, typer.Argument(help="Room id.")],
    agent: Annotated[list[str] | None, typer.Option("--agent", "-a", help="An agent to join (repeat). Default: every non-idle agent.")] = None,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """Create a live room.

    Example: rooms room create architecture-sync --agent architect --agent researcher
    """
    from rooms_cli.chat.rooms import create_room

    state = create_room(_ctx(dir).project, room_id, agent or None)
    if json_:
        output.print_json(state)
    else:
        output.say(f"Created room {state.id} with {', '.join(state.roster) or 'no agents'} (budget {state.budget_total})")


@room_app.command("list")
def list_cmd(
    all_: Annotated[bool, typer.Option("--all", help="Include dropped and halted rooms.")] = False,
    dir: DirOpt = None,
    json_: JsonOpt = False,
) -> None:
    """List live rooms (= /rooms).

    Example: rooms room list --json
    """
    from rooms_cli.chat.membership import live_rooms
    from rooms_cli.cli import chat_view

    rooms = live_rooms(_ctx(dir).project, include_stopped=all_)
    output.print_json(rooms) if json_ else chat_view.print_rooms(rooms)


@room_app.command("show")
def show_cmd(room_id: Annotated[str | None, typer.Argument(help="Room id (default: the current room).")] = None,
             dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Roster, budget, mutes and queued mentions of a room (= /list).

    Example: rooms room show architecture-sync
    """
    from rooms_cli.chat.membership import show
    from rooms_cli.cli import chat_view

    ctx = _ctx(dir, room=room_id)
    info = show(ctx.project, ctx.config, ctx.room)
    output.print_json(info) if json_ else chat_view.print_room(info)


@room_app.command("use")
def use_cmd(room_id: Annotated[str, typer.Argument(help="A live room.")], dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Make a live room the current one.

    Example: rooms room use architecture-sync
    """
    from rooms_cli.chat.membership import use

    data = use(_ctx(dir).project, room_id)
    output.print_json(data) if json_ else output.say(f"Current room: {data['room']}")


def _agent_command(name: str, summary: str, example: str) -> None:
    def command(agent: AgentArg, room: RoomOpt = None, as_: AsOpt = None, dir: DirOpt = None, json_: JsonOpt = False) -> None:
        _slash(dir, as_, room, json_, f"/{name} {agent}")

    command.__doc__ = f"{summary}\n\nExample: {example}"
    room_app.command(name)(command)


_agent_command("invite", "Add an agent to the room's roster (= /invite).", "rooms room invite judge")
_agent_command("kick", "Remove an agent and delete its session in this room (= /kick).", "rooms room kick hustler")
_agent_command("mute", "Keep an agent out of open messages in this room; mentions still reach it (= /mute).", "rooms room mute wildcard")
_agent_command("unmute", "Lift a mute (= /unmute).", "rooms room unmute wildcard")
_agent_command("handoff", "Summarise an agent's session into a deliberation and start it fresh (= /handoff).", "rooms room handoff researcher")


@room_app.command("continue")
def continue_cmd(room: RoomOpt = None, as_: AsOpt = None,
                 no_wait: Annotated[bool, typer.Option("--no-wait", help="Exit 3 at once if a turn holds the floor.")] = False,
                 dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Reset the turn budget and replay queued mentions (= /continue).

    Example: rooms room continue --room architecture-sync
    """
    _slash(dir, as_, room, json_, "/continue", no_wait)


@room_app.command("save")
def save_cmd(room: RoomOpt = None, dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Write the transcript to .rooms/chat/<room>.md (class: transcript) (= /save).

    Example: rooms room save --room architecture-sync && git add .rooms/chat
    """
    _slash(dir, None, room, json_, "/save")


@room_app.command("join")
def join_cmd(target: Annotated[str, typer.Argument(help="A room id, or chat/<room> to rehydrate a saved transcript.")],
             dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Switch to a room (created if missing), or rebuild a live room from a saved transcript (= /join).

    Example: rooms room join chat/architecture-sync
    """
    _slash(dir, None, None, json_, f"/join {target}")


@room_app.command("drop")
def drop_cmd(room: RoomOpt = None, as_: AsOpt = None,
             no_save: Annotated[bool, typer.Option("--no-save", help="Do not save the transcript first.")] = False,
             dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Stop a room, saving its transcript first (= /drop). Its files stay; `join` brings it back.

    Example: rooms room drop --room architecture-sync
    """
    _slash(dir, as_, room, json_, "/drop --no-save" if no_save else "/drop")


@room_app.command("halt")
def halt_cmd(room: RoomOpt = None, as_: AsOpt = None, dir: DirOpt = None, json_: JsonOpt = False) -> None:
    """Stop a room without saving (= /halt). Its files stay; `join` brings it back.

    Example: rooms room halt --room scratch
    """
    _slash(dir, as_, room, json_, "/halt")
