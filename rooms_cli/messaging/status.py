"""Who is around: status lines, when an agent was last seen, and the roster `rooms agents` shows.

Files:
    .rooms/status/<agent>.json   {"agent", "status", "updated", "announced"}: committed, written only
                                 by the agent itself (one file per agent, so clones never conflict)
    .rooms/run/seen/<agent>      the ISO time the agent last ran a messaging command (local state)

An agent is *idle* unless it is a spawn whose process is running, or it ran a messaging command
(`send`, `inbox`, `status set`, `attention`, `wait`, a hook) in the last IDLE_AFTER seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rooms_cli.errors import StorageError
from rooms_cli.store import atomic
from rooms_cli.store.clock import now, now_iso, parse_time
from rooms_cli.store.ids import is_valid_name, validate_name
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

IDLE_AFTER = 300.0
# finished spawns stay on the roster (idle) this long, so the parent sees who just reported back
RECENT_SPAWN = 3600.0


def status_path(project: Project, agent: str):
    return project.path("status", validate_name(agent, "agent id") + ".json")


def seen_path(project: Project, agent: str):
    return project.path("run", "seen", validate_name(agent, "agent id"))


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
    """Note that `agent` is active now: best effort (local presence, out of git), so that reading
    commands work on a read-only checkout or a full disk."""
    try:
        atomic.write_text(seen_path(project, agent), now_iso() + "\n")
    except StorageError:
        pass


def last_seen(project: Project, agent: str) -> str | None:
    try:
        value = seen_path(project, agent).read_text("utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return value or None


def _age(moment: str | None) -> float | None:
    if not moment:
        return None
    try:
        return (now() - parse_time(moment)).total_seconds()
    except Exception:
        return None


def _names_in(folder, suffix: str = "") -> list[str]:
    if not folder.is_dir():
        return []
    names = []
    for path in folder.iterdir():
        name = path.name[: -len(suffix)] if suffix and path.name.endswith(suffix) else path.name
        if (not suffix or path.name.endswith(suffix)) and is_valid_name(name):
            names.append(name)
    return names


@dataclass
class RosterEntry:
    name: str
    kind: str  # agent (defined in .rooms/agents), session (a person or coding-agent session), spawn
    status: str = ""
    idle: bool = True
    last_seen: str | None = None
    model: str | None = None
    spawn: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        data = {"name": self.name, "kind": self.kind, "status": self.status, "idle": self.idle, "last_seen": self.last_seen}
        if self.model:
            data["model"] = self.model
        if self.spawn:
            data["spawn"] = self.spawn
        return data


def roster(project: Project, config) -> list[RosterEntry]:
    """Every agent: defined ones, sessions that have spoken up, and running or recent spawns."""
    from rooms_cli.agents import agent_ids
    from rooms_cli.messaging.spawn import latest_by_alias

    spawns = latest_by_alias(project)
    defined = set(agent_ids(project))
    sessions = set(_names_in(project.path("status"), ".json")) | set(_names_in(project.path("run", "seen")))
    entries: list[RosterEntry] = []
    for name in sorted(defined | sessions | set(spawns)):
        spawn = spawns.get(name)
        if spawn is not None and name not in defined and not spawn.active:
            age = _age(spawn.finished)
            if age is not None and age > RECENT_SPAWN:
                continue
        record = read_status(project, name)
        seen = last_seen(project, name)
        age = _age(seen)
        entry = RosterEntry(
            name=name,
            kind="agent" if name in defined else "spawn" if spawn is not None else "session",
            status=record.get("status") or "",
            idle=not (age is not None and age <= IDLE_AFTER),
            last_seen=seen,
        )
        if name in defined:
            entry.model = _model_of(project, config, name)
        if spawn is not None:
            entry.spawn = {"id": spawn.id, "parent": spawn.parent, "status": spawn.status, "description": spawn.description}
            entry.idle = not spawn.active
            if not entry.status:
                entry.status = spawn.description or ""
        entries.append(entry)
    return entries


def _model_of(project: Project, config, name: str) -> str | None:
    from rooms_cli.agents import load_agent
    from rooms_cli.errors import RoomsError

    try:
        return load_agent(project, name).model_string(config.default_model)
    except RoomsError:
        return None  # a broken definition is reported by the commands that use it


def recipients_for_everyone(project: Project, config, sender: str) -> list[str]:
    """Who a message without --to reaches: every agent on the roster except the sender and finished spawns."""
    return [e.name for e in roster(project, config) if e.name != sender and not (e.kind == "spawn" and e.idle)]


def known_names(project: Project) -> set[str]:
    """Every name messaging has heard of: defined agents, sessions, inbox owners, spawn aliases."""
    from rooms_cli.agents import agent_ids
    from rooms_cli.messaging.inbox import inbox_owners
    from rooms_cli.messaging.spawn import list_spawns

    return (
        set(agent_ids(project)) | set(_names_in(project.path("status"), ".json"))
        | set(_names_in(project.path("run", "seen"))) | set(inbox_owners(project))
        | {s.alias for s in list_spawns(project)}
    )
