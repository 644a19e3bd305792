"""`rooms sync` with what every part adds to it (docs/git.md): the board's arbiter for `--sync` writes,
and the readers' checks for whole files. Every sync of a clone runs with these hooks — the command,
the MCP tool, `rooms tick`, the `--sync` task commands — so a claim waiting for its check is checked
by whichever of them pushes it.

What a whole file arriving from the remote must be before it touches `.rooms/`: what its reader takes.
Log lines are checked in the store (store/sync/engine.py, with store/schema.py's kinds); whole files
here, with the parts' readers: an agent definition must parse as one (agents/definitions.py), a spawn
record must hold what the spawn schema asks, a saved transcript must decode (chat/saved.py). Any other
file passes once it is UTF-8 text (checked by the store). What fails is quarantined by the sync, and
this clone's copy goes back to the remote.
"""

from __future__ import annotations

import re

from rooms_cli.core.errors import RoomsError
from rooms_cli.store.paths import Project
from rooms_cli.store.sync import engine

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def hooks() -> engine.Hooks:
    """Every part's hooks for a sync."""
    return engine.Hooks(gate=_gate, check_file=check_file)


def syncing(remote: str | None) -> engine.Syncing:
    """How a `--sync` task command syncs with `remote` (default origin)."""
    return engine.Syncing(remote or "origin", hooks())


def sync(project: Project, remote: str | None = None) -> engine.SyncResult:
    """Merge `.rooms/` with `remote` both ways (store/sync/engine.sync) with every part's hooks."""
    return engine.sync(project, remote, hooks=hooks())


def _gate(rel: str, outgoing: list[bytes], on_remote: Callable[[], list[bytes]]) -> list[dict[str, Any]]:
    if not rel.startswith("rooms/") or b'"sync": true' not in b"".join(outgoing):
        return []  # no `--sync` write in it: the board is not even imported
    from rooms_cli.board.arbiter import gate

    return gate(rel, outgoing, on_remote)


_AGENT = re.compile(r"agents/([^/]+)\.md")
_SPAWN = re.compile(r"spawns/[^/]+\.json")
_SAVE = re.compile(r"chat/[^/]+/[^/]+\.md")


def check_file(rel: str, data: bytes) -> str | None:
    """What is wrong with `data` as the file `rel` (a path under .rooms) for its reader, or None."""
    text = data.decode("utf-8", "replace")
    where = f".rooms/{rel} from the remote"
    try:
        if (agent := _AGENT.fullmatch(rel)) is not None:
            from rooms_cli.agents.definitions import parse_agent

            parse_agent(text, where, agent.group(1))
        elif _SPAWN.fullmatch(rel):
            return _spawn_problem(text)
        elif _SAVE.fullmatch(rel):
            from rooms_cli.chat.saved import decode

            decode(text, where)
    except RoomsError as exc:
        return str(exc)
    return None


def _spawn_problem(text: str) -> str | None:
    import json

    from rooms_cli.store import schema

    try:
        record = json.loads(text)
    except ValueError:
        return "is not valid JSON"
    return schema.problem("spawn", record, strict=False)
