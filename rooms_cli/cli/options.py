"""Options shared by many commands, declared once."""

from __future__ import annotations

from typing import Annotated

import typer


def _name_listing(kind: str):
    """The function listing a project's agent, room or group names, imported plainly (a broken part
    fails loudly) and only for the kind being completed."""
    if kind == "agent":
        from rooms_cli.agents import agent_ids

        return agent_ids
    if kind == "room":
        from rooms_cli.chat.rooms import room_ids

        return room_ids
    from rooms_cli.groups.log import names

    return names


def _completer(kind: str):
    """Tab completion of agent, room or group names from the project found as every command finds it;
    nothing (never an error) outside a project."""

    def complete(incomplete: str) -> list[str]:
        from rooms_cli.store.paths import find_project

        listing = _name_listing(kind)
        try:
            project = find_project()
            names = listing(project) if project is not None else []
        except Exception:  # a completion must never print a traceback into the user's shell
            return []
        return [n for n in names if n.startswith(incomplete)]

    return complete


complete_agents, complete_rooms, complete_groups = _completer("agent"), _completer("room"), _completer("group")


def complete_agent_list(incomplete: str) -> list[str]:
    """`--participants analyst,hu<TAB>`: the agent after the last comma, the ones before kept."""
    head, _, last = incomplete.rpartition(",")
    done = set(head.split(",")) if head else set()
    return [f"{head},{n}" if head else n for n in complete_agents(last) if n not in done]

DirOpt = Annotated[
    str | None,
    typer.Option("--dir", help="Project directory or its .rooms/ (default: nearest .rooms/ upwards, or ROOMS_DIR).", show_default=False),
]
AsOpt = Annotated[
    str | None,
    typer.Option("--as", autocompletion=complete_agents, help="Act as this name (default: ROOMS_AGENT, user: in .rooms.yaml, $USER).", show_default=False),
]
RoomOpt = Annotated[
    str | None,
    typer.Option("--room", "-r", autocompletion=complete_rooms, help="Room id (default: ROOMS_ROOM, `rooms room use`, else default).", show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


# Values we parse ourselves are checked while the command line is parsed, and a bad one is a usage
# error (exit 2) in one sentence naming the option: `error: --timeout: invalid duration 'abc': …`
# (a JSON error under --json), never an exit 1 from deep inside the command.
def _bad(option: str, message: str) -> Exception:
    from rooms_cli.errors import UsageError

    return UsageError(f"{option}: {message}")


def duration_value(option: str, *, positive: bool = False):
    """A parser for a duration option (`90`, `90s`, `15m`, `1h30m`) giving seconds; `positive`: > 0."""

    def parse(value):
        if value is None or isinstance(value, (int, float)):
            return value
        from rooms_cli.errors import InvalidInput
        from rooms_cli.store.clock import parse_duration

        try:
            seconds = parse_duration(value)
        except InvalidInput as exc:
            raise _bad(option, exc.message) from None
        if positive and seconds <= 0:
            raise _bad(option, f"must be longer than zero, not {value!r}")
        return seconds

    return parse


def time_value(option: str):
    """A parser for an ISO 8601 time option, giving an aware datetime."""

    def parse(value):
        if value is None or not isinstance(value, str):
            return value
        from rooms_cli.errors import InvalidInput
        from rooms_cli.store.clock import parse_time

        try:
            return parse_time(value)
        except InvalidInput as exc:
            raise _bad(option, exc.message) from None

    return parse


def finite_number(option: str, minimum: float | None = None):
    """A parser for a number option that must be finite (NaN and infinity are not JSON) and ≥ `minimum`."""

    def parse(value):
        if value is None:
            return None
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise _bad(option, f"{value!r} is not a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise _bad(option, f"must be a finite number, not {value!r}")
        if minimum is not None and number < minimum:
            raise _bad(option, f"must be at least {minimum:g}, not {value!r}")
        return number

    return parse


def choice_value(option: str, choices):
    """A parser for an option that takes one of `choices()` (called only when the option is given)."""

    def parse(value):
        if value is None:
            return None
        allowed = list(choices())
        if value not in allowed:
            raise _bad(option, f"must be one of {', '.join(allowed)}, not {value!r}")
        return value

    return parse
