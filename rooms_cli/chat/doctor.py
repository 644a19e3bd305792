"""The chat checks for `rooms doctor`: every room's state (`room.yaml` base and `state.jsonl` events)
replays, each field of the type `store/schema.py` says (a list for `queued`, a budget from 0…)."""

from __future__ import annotations

from rooms_cli.errors import InvalidData
from rooms_cli.findings import Finding
from rooms_cli.store import layout
from rooms_cli.store.ids import is_valid_name


def check(project, config) -> list[Finding]:
    from rooms_cli.chat.rooms import load_room, room_exists

    base = layout.rooms_dir(project)
    findings = []
    for child in sorted(base.iterdir()) if base.is_dir() else []:
        if not (is_valid_name(child.name) and room_exists(project, child.name)):
            continue
        try:
            load_room(project, child.name)
        except InvalidData as err:
            rel = err.message.partition(":")[0]
            findings.append(Finding("error", "room", f"room {child.name}: {err.message}",
                                    f"fix the field named in {rel} (or restore it from git); "
                                    f"commands on other rooms are unaffected", rel))
    return findings
