"""Who is around: status lines and when an agent was last seen (the roster is in roster.py).

Files:
    .rooms/status/<agent>.json   {"agent", "status", "updated", "announced"}: committed, written only
                                 by the agent itself (one file per agent, so clones never conflict)
    .rooms/run/seen/<agent>      the ISO time the agent last ran a messaging command (local state)

An agent is *idle* unless it is a spawn whose process is running, or it ran a messaging command
(`send`, `inbox`, `status set`, `attention`, `wait`, a hook) in the last IDLE_AFTER seconds.
"""

from __future__ import annotations

from rooms_cli.store import atomic, layout
from rooms_cli.store.clock import now, now_iso, parse_time
from rooms_cli.store.ids import is_valid_name
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

IDLE_AFTER = 300.0
# finished spawns stay on the roster (idle) this long, so the parent sees who just reported back
RECENT_SPAWN = 3600.0


def status_path(project: Project, agent: str):
    return layout.status_file(project, agent)


def seen_path(project: Project, agent: str):
    return layout.seen_file(project, agent)


def read_status(project: Project, agent: str) -> dict:
    return atomic.read_json(status_path(project, agent), default={}) or {}


def _update_status(project: Project, agent: str, change) -> dict:
    path = status_path(project, agent)
    with locked(path):
        record = read_status(project, agent)
        record.setdefault("agent", agent)
        if change(record) is False:
            return record
        atomic.write_json(path, record)
    return record


def set_status(project: Project, agent: str, text: str) -> dict:
    """Set `agent`'s status line ("Working on frontend"); an empty text clears it."""
    from rooms_cli.errors import InvalidInput

    text = " ".join(str(text).split())
    if len(text) > 200:
        raise InvalidInput("status is too long: keep it under 200 characters (one line)")

    def change(record):
        record["status"] = text
        record["updated"] = now_iso()

    touch(project, agent)
    return _update_status(project, agent, change)


def mark_announced(project: Project, agent: str) -> None:
    """Remember that `agent` has sent a message (the announce-yourself hint stops)."""
    if read_status(project, agent).get("announced"):
        return

    def change(record):
        if record.get("announced"):
            return False
        record["announced"] = now_iso()

    _update_status(project, agent, change)


def has_announced(project: Project, agent: str) -> bool:
    return bool(read_status(project, agent).get("announced"))


def touch(project: Project, agent: str) -> None:
    """Note that `agent` is active now."""
    atomic.write_text(seen_path(project, agent), now_iso() + "\n")


def last_seen(project: Project, agent: str) -> str | None:
    try:
        value = seen_path(project, agent).read_text("utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return value or None


def age_seconds(moment: str | None) -> float | None:
    if not moment:
        return None
    try:
        return (now() - parse_time(moment)).total_seconds()
    except Exception:
        return None


def names_in(folder, suffix: str = "") -> list[str]:
    if not folder.is_dir():
        return []
    names = []
    for path in folder.iterdir():
        name = path.name[: -len(suffix)] if suffix and path.name.endswith(suffix) else path.name
        if (not suffix or path.name.endswith(suffix)) and is_valid_name(name):
            names.append(name)
    return names


def session_names(project: Project) -> set[str]:
    """Every name messaging has heard of apart from spawns: defined agents, sessions, inbox owners."""
    from rooms_cli.agents import agent_ids
    from rooms_cli.messaging.inbox import inbox_owners

    return (
        set(agent_ids(project)) | set(names_in(layout.status_dir(project), ".json"))
        | set(names_in(layout.seen_dir(project))) | set(inbox_owners(project))
    )
