"""Options shared by many commands, declared once; and `commands`, the sub-app of a command group."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from rooms_cli.operations.values import name_value

if TYPE_CHECKING:
    from collections.abc import Callable

    from rooms_cli.operations.declare import Param
    from rooms_cli.store.paths import Project


def _name_listing(kind: str) -> Callable[[Project], list[str]]:
    """The function listing a project's agent, room or group names, imported plainly (a broken part
    fails loudly) and only for the kind being completed."""
    if kind == "agent":
        from rooms_cli.agents.definitions import agent_ids

        return agent_ids
    if kind == "room":
        from rooms_cli.chat.rooms import room_ids

        return room_ids
    from rooms_cli.groups.log import names

    return names


def _completer(kind: str) -> Callable[[str], list[str]]:
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


COMPLETIONS = {"agents": complete_agents, "rooms": complete_rooms, "groups": complete_groups, "agent_list": complete_agent_list}


def annotation(param: Param) -> Any:
    """The typer annotation of a declared parameter (operations/declare.py): its type, optional when its default
    is None, and the typer.Argument or typer.Option that carries its flags, help, parser and completion."""
    from datetime import datetime

    kind: Any = {"str": str, "int": int, "float": float, "bool": bool, "strs": list[str], "datetime": datetime,
                 "duration": float}[param.kind]
    if param.default is None:
        kind = kind | None
    complete = COMPLETIONS[param.complete] if param.complete else None
    parser = param.parser()
    # typer names a parser's value by its function (`<parse>`) and any other by its type (`<str>`); each parser
    # of operations/values.py says what it reads in its __name__ (N, DURATION, NAME…), any other value is its
    # flag's name (`--lease-id LEASE_ID`), unless the declaration names it
    metavar = param.metavar or (parser.__name__ if parser is not None and not param.argument else None)
    if metavar is None and not param.argument and param.kind != "bool" and param.flags:
        metavar = param.flags[0].lstrip("-").replace("-", "_").upper()
    if param.argument:
        return Annotated[kind, typer.Argument(help=param.help, parser=parser, autocompletion=complete, metavar=param.metavar,
                                              show_default=param.show_default)]
    return Annotated[kind, typer.Option(*param.flags, help=param.help, envvar=param.envvar, parser=parser,
                                        metavar=metavar, show_default=param.show_default, autocompletion=complete,
                                        min=param.min)]


DirOpt = Annotated[
    str | None,
    typer.Option("--dir", metavar="DIR", help="Project directory or its .rooms/ (default: nearest .rooms/ upwards, or ROOMS_DIR).", show_default=False),
]
AsOpt = Annotated[
    str | None,
    typer.Option("--as", autocompletion=complete_agents, parser=name_value("--as", "identity"), metavar="NAME", help="Act as this name (default: ROOMS_AGENT, user: in .rooms.yaml, $USER).", show_default=False),
]
RoomOpt = Annotated[
    str | None,
    typer.Option("--room", "-r", autocompletion=complete_rooms, metavar="ROOM", help="Room id (default: ROOMS_ROOM, `rooms room use`, else default).", show_default=False),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


def commands(help: str, *, no_args_is_help: bool = True, **settings: Any) -> typer.Typer:
    """A group of commands (`rooms task …`) as the root app's own settings have it: help text as written
    (no rich markup), no shell-completion options of its own (the root has them). cli/app.py converts
    each group on its own, when it is run (typer.main.get_command), so the settings travel with it."""
    return typer.Typer(help=help, no_args_is_help=no_args_is_help, add_completion=False, rich_markup_mode=None,
                       pretty_exceptions_enable=False, **settings)
