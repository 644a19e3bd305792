"""What a whole file arriving by `rooms sync` must be before it touches `.rooms/`: what its reader takes.

Log lines are checked in the store (store/gitsync.py, with store/schema.py's kinds); whole files here,
with the readers of the parts: an agent definition must parse as one (agents.py), a spawn record must
hold what the spawn schema asks, a saved transcript must decode (chat/saved.py). Any other file passes
once it is UTF-8 text (checked by the store). What fails is quarantined by the sync, and this clone's copy goes back to the remote.
"""

from __future__ import annotations

import re

from rooms_cli.errors import RoomsError

_AGENT = re.compile(r"agents/([^/]+)\.md")
_SPAWN = re.compile(r"spawns/[^/]+\.json")
_SAVE = re.compile(r"chat/[^/]+/[^/]+\.md")


def check_file(rel: str, data: bytes) -> str | None:
    """What is wrong with `data` as the file `rel` (a path under .rooms) for its reader, or None."""
    text = data.decode("utf-8", "replace")
    where = f".rooms/{rel} from the remote"
    try:
        if (agent := _AGENT.fullmatch(rel)) is not None:
            from rooms_cli.agents import parse_agent

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
