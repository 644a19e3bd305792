"""Options shared by many commands, declared once."""

from __future__ import annotations

from typing import Annotated

import typer

DirOpt = Annotated[
    str | None,
    typer.Option("--dir", help="Project directory or its .rooms/ (default: nearest .rooms/ upwards, or ROOMS_DIR).", show_default=False),
]
AsOpt = Annotated[
    str | None,
    typer.Option("--as", help="Act as this name (default: ROOMS_AGENT, user: in .rooms.yaml, $USER).", show_default=False),
]
RoomOpt = Annotated[
    str | None,
    typer.Option("--room", "-r", help="Room id (default: ROOMS_ROOM, `rooms room use`, else default).", show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


# Values we parse ourselves are checked while the command line is parsed, so a bad one is a usage
# error like any other (exit 2, "Invalid value for '--timeout': …"), never an exit 1 from deep inside.
def duration_value(value):
    """A duration option (`90`, `90s`, `15m`, `1h30m`) as seconds."""
    if value is None or isinstance(value, (int, float)):
        return value
    from rooms_cli.errors import InvalidInput
    from rooms_cli.store.clock import parse_duration

    try:
        return parse_duration(value)
    except InvalidInput as exc:
        raise typer.BadParameter(exc.message) from None


def positive_duration_value(value):
    """A duration option that must be longer than zero (a lease)."""
    seconds = duration_value(value)
    if seconds is not None and seconds <= 0:
        raise typer.BadParameter(f"must be longer than zero, not {value!r}")
    return seconds


def time_value(value):
    """An ISO 8601 time option, as an aware datetime."""
    if value is None or not isinstance(value, str):
        return value
    from rooms_cli.errors import InvalidInput
    from rooms_cli.store.clock import parse_time

    try:
        return parse_time(value)
    except InvalidInput as exc:
        raise typer.BadParameter(exc.message) from None


def finite_number(minimum: float | None = None):
    """A parser for a number option that must be finite (NaN and infinity are not JSON) and ≥ `minimum`."""

    def parse(value):
        if value is None:
            return None
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise typer.BadParameter(f"{value!r} is not a number") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise typer.BadParameter(f"must be a finite number, not {value!r}")
        if minimum is not None and number < minimum:
            raise typer.BadParameter(f"must be at least {minimum:g}, not {value!r}")
        return number

    return parse
