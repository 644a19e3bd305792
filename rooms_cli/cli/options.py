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
