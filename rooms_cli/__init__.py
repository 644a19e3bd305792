"""rooms: coordinate LLM agents, people and coding-agent sessions from the shell.

Everything lives in plain files under `.rooms/`. The package is also a library: the parts
(chat, board, roundtable, groups, messaging) are importable, and the group workflow API
(`spawn_group`, `broadcast`, `wait_all`, `wait_any`, `register_reducer`, `ephemeral_group`)
is re-exported here lazily so `import rooms_cli` stays cheap.
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


_GROUP_API = {"spawn_group", "broadcast", "wait_all", "wait_any", "register_reducer", "ephemeral_group", "GroupResult"}


def __getattr__(name: str) -> Any:
    if name in _GROUP_API:
        from rooms_cli.groups import api

        return getattr(api, name)
    raise AttributeError(f"module 'rooms_cli' has no attribute {name!r}")
