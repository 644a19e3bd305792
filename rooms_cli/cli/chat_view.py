"""How the command line shows chat (operations/chat.py): streaming turn events, slash results, rooms, transcripts.

Agent text is always printed as plain text (rich markup in it is not interpreted).
"""

from __future__ import annotations

from collections.abc import Callable

from rooms_cli.cli import output
from rooms_cli.cli.views import listens, prepares, renders
from rooms_cli.core.text import count
from rooms_cli.operations import chat as ops

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.chat.coordinator import TurnResult
    from rooms_cli.chat.rooms import RoomState
    from rooms_cli.chat.slash import SlashResult
    from rooms_cli.chat.transcript import Message
    from rooms_cli.cli.shared import Run


class TurnView:
    """An `on_event` callback that prints replies as they arrive.

    A reply's label is printed with its first streamed piece, so a reply that turns out to be
    `/pass` (held back by the coordinator) leaves no empty label behind.
    """

    def __init__(self) -> None:
        self.pending: str | None = None  # prompted, nothing shown yet
        self.streaming: str | None = None  # the agent whose reply is being printed
        self.drafts: set[str] = set()  # @jam replies printed on arrival, before they are written

    def _write(self, text: str, style: str = "") -> None:
        output.write(text, style, end="")

    def _end_stream(self) -> None:
        if self.streaming is not None:
            self._write("\n")
            self.streaming = None

    def __call__(self, kind: str, data: dict[str, Any]) -> None:
        if kind == "start":
            self._end_stream()
            self.pending = data["agent"] if data.get("mode") != "jam" else None
        elif kind == "draft":
            self._end_stream()
            self._write(f"{data['agent']}: ", "bold")
            self._write(data["text"] + "\n")
            self.drafts.add(data["agent"])
        elif kind == "delta":
            if self.pending == data["agent"]:
                self._write(f"{data['agent']}: ", "bold")
                self.streaming, self.pending = data["agent"], None
            if self.streaming == data["agent"]:
                self._write(data["text"])
        elif kind in ("retry", "failed"):
            self._end_stream()
        elif kind == "note":
            output.note(data["text"])
        elif kind == "exhausted":
            self._end_stream()
            output.say(f"  {data['text']}", style="bold yellow")
        elif kind == "queued":
            self._end_stream()
            output.say(f"  queued {', '.join('@' + a for a in data['agents'])} for /continue", style="yellow")
        elif "record" in data:
            self.record(data["record"])

    def record(self, msg: Message) -> None:
        if msg.kind == "message" and msg.speaker in self.drafts:
            self.drafts.discard(msg.speaker)
            return
        if msg.kind == "message" and self.streaming == msg.speaker:
            self._end_stream()
            self._stored_note(msg)
            return
        self._end_stream()
        self.pending = None
        if msg.kind == "message":
            self._write(f"{msg.speaker}: ", "bold")
            self._write(msg.text + "\n")
        elif msg.kind in ("pass", "flavor", "repeat"):
            output.say(f"  * {msg.speaker} {msg.text} *", style="italic dim")
        elif msg.kind == "budget_exhausted":
            output.say(f"  {msg.text}", style="bold yellow")
        else:
            output.say(f"  · {msg.text}", style="dim")


    def _stored_note(self, msg: Message) -> None:
        """What hygiene changed in a reply that was shown as it streamed (the record says it too)."""
        if msg.meta.get("repeated"):
            output.say("  · it repeated itself: stored cut at the repetition", style="dim")
        elif msg.meta.get("cut"):
            output.say("  · stopped by its token limit: stored marked as cut", style="dim")


def print_turn_footer(result: TurnResult) -> None:
    for note in result.notes:
        if note.startswith("@jam"):
            output.note(note)
    if result.remaining <= 0 and not result.exhausted:
        output.say(f"  budget {result.remaining}/{result.total} — /continue to keep going", style="yellow")


def print_explain(data: dict[str, Any]) -> None:
    output.say(f"mode: {data['mode']}   budget: {data['budget']['remaining']}/{data['budget']['total']}", style="bold")
    if not data["eligible"]:
        output.say("  nobody would be prompted")
    for pos, agent in enumerate(data["eligible"], 1):
        score = data["scores"].get(agent)
        shown = f"  score {score:.3f}" if score is not None else ""
        output.say(f"  {pos}. {agent}{shown}")
    for agent, why in data["filtered"].items():
        score = data["scores"].get(agent)
        shown = f" (score {score:.3f})" if score is not None else ""
        output.say(f"  - {agent}: {why}{shown}", style="dim")
    for note in data["notes"]:
        output.say(f"  note: {note}", style="yellow")


def print_room(info: dict[str, Any]) -> None:
    output.say(f"room {info['id']} ({info['status']})  budget {info['budget']['remaining']}/{info['budget']['total']}", style="bold")
    for member in info["roster"]:
        flags = [f for f in ("muted", "handoff", "quiet", "missing") if member.get(f)]
        session = member["session"]
        output.say(f"  {member['id']:<14} {member.get('model', '?'):<18} {' '.join(flags):<14} "
                   f"session: {count(session['turns'], 'turn')}, {count(session['tokens'], 'token')}")
    if info["queued"]:
        output.say("  queued mentions:")
        for entry in info["queued"]:
            output.say(f"    {', '.join('@' + a for a in entry['agents'])} ← {entry['speaker']}: {entry['text'][:60]}")
    if info["rehydrated_from"]:
        output.say(f"  rehydrated from {info['rehydrated_from']}", style="dim")


def print_rooms(rooms: list[dict[str, Any]]) -> None:
    if not rooms:
        output.say("No live rooms. Create one with `rooms room create ID`.")
    for room in rooms:
        status = "" if room["status"] == "live" else f" ({room['status']})"
        output.say(f"{room['id']}{status}  {count(len(room['roster']), 'agent')}  budget {room['budget']['remaining']}/{room['budget']['total']}")


def print_transcript(messages: list[Message], *, ids: bool = False) -> None:
    """Each record on a line stamped with its time (UTC); a line with the date opens each day."""
    day = None
    for msg in messages:
        if msg.ts[:10] != day:
            day = msg.ts[:10]
            output.say(f"── {day} (UTC) ──", style="dim")
        stamp = msg.ts[11:19] + (f" {msg.id}" if ids else "")
        if msg.kind == "message":
            output.say(f"[{stamp}] {msg.speaker}: {msg.text}")
        elif msg.kind in ("pass", "flavor", "repeat"):
            output.say(f"[{stamp}]   * {msg.speaker} {msg.text} *", style="italic dim")
        else:
            output.say(f"[{stamp}]   · {msg.text}", style="dim")


def continue_text(budget: dict[str, Any], replayed: list[str]) -> str:
    """What /continue did to the budget, so that `6/8` after a replay reads as 8 minus the turns it took."""
    total, left = budget["total"], budget["remaining"]
    used = total - left
    if not used:
        return f"Budget reset to {left}/{total} turns" + ("" if replayed else " (no queued mentions to replay)")
    by = f"replaying the queued mentions of {', '.join(replayed)}" if replayed else "the replay"
    return f"Budget reset to {total} turns; {by} took {used}, so {left}/{total} are left"


def _show_help(data: dict[str, Any]) -> None:
    for cmd, text in data["commands"].items():
        output.say(f"  {cmd:<10} {text}")


def _show_handoff(data: dict[str, Any]) -> None:
    output.say(f"{data['agent']} handed off: {data['deliberation']['path']} "
               f"({count(data['session']['turns'], 'turn')}, {count(data['session']['tokens'], 'token')} summarised)")


def _show_join(data: dict[str, Any]) -> None:
    if data["outcome"] == "created" and data.get("saved_transcript") is None and data.get("from_saved"):
        output.say(f"No saved transcript in .rooms/chat/{data['room']}/: created a fresh room {data['room']} "
                   f"({count(len(data['roster']), 'agent')})")
    else:
        output.say(f"{data['outcome'].capitalize()} room {data['room']} ({count(len(data['roster']), 'agent')}, {count(data['messages'], 'message')})")
    if data["left_out"]:
        output.note(f"left out (no definition in .rooms/agents/): {', '.join(data['left_out'])}")
    if data.get("current_before") and data["current_before"] != data["room"]:
        output.note(f"{data['room']} is now the current room for rooms commands too (it was "
                    f"{data['current_before']}; rooms room use {data['current_before']} goes back)")


def _show_closed(data: dict[str, Any]) -> None:
    saved = f"; saved to {data['saved']['path']}" if data.get("saved") else ""
    output.say(f"Room {data['room']} is {data['status']}{saved}" + ("" if data["changed"] else " (it already was)"))


def _show_muted(data: dict[str, Any]) -> None:
    output.say(f"{data['agent']} {'muted' if data['muted'] else 'unmuted'} in {data['room']}"
               + ("" if data["changed"] else " (no change)"))


def _show_kick(data: dict[str, Any]) -> None:
    output.say(f"{data['agent']} left {data['room']}" + ("; its session was deleted" if data["session_deleted"] else ""))
    if data.get("warning"):
        output.warn(data["warning"])


def _show_whois(data: dict[str, Any]) -> None:
    output.say(f"{data['name']} ({data['id']}): model {data['effective_model']}; capabilities "
               f"{', '.join(data['capabilities']) or '-'}; rooms {', '.join(data['rooms']) or '-'}; [[{data['path']}]]")


# slash command -> how its result reads (a command not listed prints nothing)
_SLASH_VIEWS: dict[str, Callable[[dict[str, Any]], None]] = {
    "leave": lambda data: output.say("Left chat mode; the room keeps running."),
    "quit": lambda data: output.say("Left chat mode; the room keeps running."),
    "help": _show_help,
    "save": lambda data: output.say(f"Saved {count(data['messages'], 'message')} to {data['path']}"),
    "continue": lambda data: output.say(continue_text(data["budget"], data["replayed"])),
    "handoff": _show_handoff,
    "join": _show_join,
    "drop": _show_closed,
    "halt": _show_closed,
    "mute": _show_muted,
    "unmute": _show_muted,
    "invite": lambda data: output.say(f"{data['agent']} {'joined' if data['changed'] else 'is already in'} {data['room']}"),
    "kick": _show_kick,
    "whois": _show_whois,
    "rooms": lambda data: print_rooms(data["rooms"]),
    "list": print_room,
}


def print_slash(result: SlashResult) -> None:
    """Human output of a slash command (the turn of /continue has been streamed already)."""
    view = _SLASH_VIEWS.get(result.command)
    if view is not None:
        view(result.data)


# --- the chat operations (operations/chat.py) on the command line -------------------------------------------


@prepares(ops.chat)
def _message(run: Run, values: dict[str, Any]) -> dict[str, Any] | None:
    """No message: chat mode on a terminal, else the message read from stdin."""
    import sys

    if values["message"] is not None:
        return values
    if sys.stdin.isatty() and not run.json and not values["explain"]:
        from rooms_cli.cli import chat_view
        from rooms_cli.cli.chat_interactive import run_interactive

        run_interactive(run, chat_view)
        return None
    from rooms_cli.core import terminal

    message = terminal.read_stdin("the message").strip()
    if not message:
        import typer

        raise typer.BadParameter("the message is empty", param_hint="MESSAGE")
    return {**values, "message": message}


@listens(ops.chat)
def _turn_view(run: Run, values: dict[str, Any]) -> TurnView | None:
    return None if run.json or values["explain"] else TurnView()


@renders(ops.chat)
def _chat(run: Run, result: Any, values: dict[str, Any]) -> None:
    from rooms_cli.chat.slash import SlashResult

    if values["explain"]:
        output.print_json(result) if run.json else print_explain(result)
    elif isinstance(result, SlashResult):
        output.print_json(result) if run.json else print_slash(result)
    else:
        run.emit(result, lambda: print_turn_footer(result))
        if result.unanswered:
            from rooms_cli.core.errors import ProviderError

            raise ProviderError(f"no agent could answer ({', '.join(result.failed)} failed; the reasons are in the room's "
                                "transcript)", code="no_answer")


@renders(ops.transcript)
def _transcript(run: Run, messages: list[Message], values: dict[str, Any]) -> None:
    run.emit(messages, lambda: print_transcript(messages, ids=values["ids"]))


@renders(ops.room_create)
def _created(run: Run, state: RoomState, values: dict[str, Any]) -> None:
    run.emit(state, f"Created room {state.id} with {', '.join(state.roster) or 'no agents'} (budget {state.budget_total})")


@renders(ops.room_list)
def _rooms(run: Run, rooms: list[dict[str, Any]], values: dict[str, Any]) -> None:
    run.emit(rooms, lambda: print_rooms(rooms))


@renders(ops.room_show)
def _room(run: Run, info: dict[str, Any], values: dict[str, Any]) -> None:
    run.emit(info, lambda: print_room(info))


@renders(ops.room_invite)
def _invited(run: Run, data: dict[str, Any], values: dict[str, Any]) -> None:
    run.emit(data, lambda: _SLASH_VIEWS["invite"](data))


@renders(ops.room_kick)
def _kicked(run: Run, data: dict[str, Any], values: dict[str, Any]) -> None:
    run.emit(data, lambda: _show_kick(data))
