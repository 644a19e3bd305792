"""Every operation, declared once: its words, parameters, body and MCP tool (declare.py says how).

The command line (cli/), the MCP server (mcp_server/) and `rooms top` (tui/) are adapters over these
declarations; none of them imports another. One module a part: board.py, chat.py, messaging.py,
groups.py, files.py, roundtable.py, search.py, sync.py, watch.py; project.py (`rooms init`) and across.py (tick,
doctor, demo); common.py holds what several declare alike.

`of_command(word)` loads only the module of the command `rooms <word>` (the fast path runs one command
and imports one module); `every()` loads them all (typer's command tree, the MCP server's tools).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~2 ms); mypy reads the name
if TYPE_CHECKING:
    from collections.abc import Callable

    from rooms_cli.operations.declare import Operation


def _project() -> tuple[Operation, ...]:
    from rooms_cli.operations import project

    return project.OPERATIONS


def _across() -> tuple[Operation, ...]:
    from rooms_cli.operations import across

    return across.OPERATIONS


def _board() -> tuple[Operation, ...]:
    from rooms_cli.operations import board

    return board.OPERATIONS


def _chat() -> tuple[Operation, ...]:
    from rooms_cli.operations import chat

    return chat.OPERATIONS


def _messaging() -> tuple[Operation, ...]:
    from rooms_cli.operations import messaging

    return messaging.OPERATIONS


def _groups() -> tuple[Operation, ...]:
    from rooms_cli.operations import groups

    return groups.OPERATIONS


def _files() -> tuple[Operation, ...]:
    from rooms_cli.operations import files

    return files.OPERATIONS


def _roundtable() -> tuple[Operation, ...]:
    from rooms_cli.operations import roundtable

    return roundtable.OPERATIONS


def _search() -> tuple[Operation, ...]:
    from rooms_cli.operations import search

    return search.OPERATIONS


def _sync() -> tuple[Operation, ...]:
    from rooms_cli.operations import sync

    return sync.OPERATIONS


def _watch() -> tuple[Operation, ...]:
    from rooms_cli.operations import watch

    return watch.OPERATIONS


# each module of operations, loaded by a plain import -> the first words of its commands (`rooms <word> …`)
PARTS: dict[Callable[[], tuple[Operation, ...]], tuple[str, ...]] = {
    _project: ("init",),
    _across: ("tick", "doctor", "demo"),
    _board: ("board", "task"),
    _chat: ("chat", "transcript", "room"),
    _messaging: ("send", "inbox", "attention", "agents", "status", "spawn", "wait", "hook"),
    _groups: ("group",),
    _files: ("files",),
    _roundtable: ("roundtable", "memory"),
    _search: ("search",),
    _sync: ("sync",),
    _watch: ("watch",),
}


def of_command(word: str) -> tuple[Operation, ...]:
    """The operations of `rooms <word> …` (none: the command has no declared operation)."""
    return next((load() for load, words in PARTS.items() if word in words), ())


def every() -> tuple[Operation, ...]:
    """Every declared operation, part by part."""
    return tuple(op for load in PARTS for op in load())
