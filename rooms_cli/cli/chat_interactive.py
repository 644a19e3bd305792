"""Interactive chat mode: `rooms chat` on a terminal without a message.

A line editor (stdlib readline) with history in `.rooms/run/chat-history` (local, gitignored) and
tab completion of slash commands and agent names; replies stream as they arrive; `/leave` or
`/quit` (or Ctrl-D) leaves — the room keeps running, it is files.
"""

from __future__ import annotations

import os

from rooms_cli.chat import slash
from rooms_cli.core.errors import RoomsError
from rooms_cli.store import files, layout

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from types import ModuleType

    from rooms_cli.project.context import Context
    from rooms_cli.store.paths import Project

HISTORY_LINES = 1000


class Completer:
    """Completes `/commands`, `@mentions` and the agent argument of /mute, /kick, …"""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.matches: list[str] = []

    def words(self, line: str, text: str) -> list[str]:
        from rooms_cli.agents.definitions import agent_ids

        agents = agent_ids(self.project)
        stripped = line.lstrip()
        if stripped.startswith("/") and " " not in stripped:
            return [f"/{c}" for c in slash.COMMANDS]
        if stripped.startswith("/"):
            head = stripped[1:].split(" ", 1)[0]
            if head in slash.NEEDS_AGENT:
                return agents
            if head == "join":
                from rooms_cli.chat.rooms import list_room_states

                return [s.id for s in list_room_states(self.project)] + [f"chat/{s.id}" for s in list_room_states(self.project)]
            return []
        if text.startswith("@"):
            return ["@everyone", "@channel", "@jam"] + [f"@{a}" for a in agents]
        return []

    def __call__(self, text: str, state: int) -> str | None:
        if state == 0:
            import readline

            line = readline.get_line_buffer()
            self.matches = [w + " " for w in self.words(line, text) if w.startswith(text)]
        return self.matches[state] if state < len(self.matches) else None


def _setup_readline(project: Project) -> str | None:
    try:
        import readline
    except ImportError:  # pragma: no cover - Windows without pyreadline
        return None
    history = layout.chat_history_file(project)
    files.make_folder(os.path.dirname(history))
    try:
        readline.read_history_file(history)
    except (FileNotFoundError, OSError):
        pass
    readline.set_history_length(HISTORY_LINES)
    readline.set_completer(Completer(project))
    readline.set_completer_delims(" \t\n")
    if "libedit" in (readline.__doc__ or ""):
        readline.parse_and_bind("bind ^I rl_complete")
    else:
        readline.parse_and_bind("tab: complete")
    return history


def _confirm(question: str) -> bool:
    try:
        return input(question).strip().lower() in ("y", "yes")
    except (EOFError, KeyboardInterrupt):
        return False


def run_interactive(ctx: Context, view: ModuleType) -> None:
    """The chat loop; `view` is the rendering module (TurnView, print_slash, print_turn_footer)."""
    from rooms_cli.chat.coordinator import NotInRoom, floor, live_room, run_message
    from rooms_cli.cli import output

    project, room = ctx.project, ctx.room
    live_room(project, room)
    history = _setup_readline(project)

    def send(line: str) -> None:
        with floor(project, room, on_wait=output.note):
            turn = run_message(project, ctx.config, room, ctx.me, line, on_event=view.TurnView())
        view.print_turn_footer(turn)

    output.say(f"Chat mode in room {room}. Type a message; /help lists commands; /leave or /quit leaves.", style="dim")
    try:
        while True:
            try:
                line = input(f"{room}> ")
            except EOFError:
                output.say("")
                break
            except KeyboardInterrupt:
                output.say("")
                continue
            if not line.strip():
                continue
            try:
                if line.lstrip().startswith("/"):
                    result = slash.run(project, ctx.config, room, ctx.me, line, on_event=view.TurnView(), on_wait=output.note,
                                       chat_mode=True)
                    view.print_slash(result)
                    if result.leave:
                        break
                    room = result.room or room
                    continue
                try:
                    send(line)
                except NotInRoom as err:
                    if _confirm(f"{', '.join(err.agents)} {'is' if len(err.agents) == 1 else 'are'} not in room "
                                f"{room}; invite and send? [y/N] "):
                        for agent in err.agents:
                            view.print_slash(slash.run(project, ctx.config, room, ctx.me, f"/invite {agent}"))
                        send(line)
                    else:
                        output.say("Not sent.", style="dim")
            except RoomsError as err:
                output.say(f"error: {err.message}", style="red")
            except KeyboardInterrupt:
                output.say("\n(interrupted; the room keeps what was already said)", style="dim")
    finally:
        if history is not None:
            import readline

            try:
                readline.write_history_file(history)
            except OSError:
                pass
