"""The roster `rooms agents` shows: every agent, session and recent spawn, with status and idleness.

An agent is *idle* unless it is a spawn whose process is running, or it ran a messaging command
(`send`, `inbox`, `status set`, `attention`, `wait`, a hook) in the last IDLE_AFTER seconds.
"""

from __future__ import annotations

from rooms_cli.core.errors import RoomsError
from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.messaging.spawn import latest_by_alias, list_spawns
from rooms_cli.messaging.status import (
    IDLE_AFTER,
    RECENT_SPAWN,
    age_seconds,
    last_seen,
    names_in,
    read_status,
    session_names,
    status_names,
)
from rooms_cli.store import layout
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config


@dataclass
class RosterEntry:
    """Someone messages can go to: a defined agent, a session, or a spawn."""

    name: str
    kind: str  # agent (defined in .rooms/agents), session (a person or coding-agent session), spawn
    status: str = ""
    idle: bool = True
    last_seen: str | None = None
    model: str | None = None
    spawn: dict[str, Any] = field(default_factory=dict)
    problem: dict[str, Any] | None = None  # the error reading this agent's files (an unresolved merge…)

    def to_json(self) -> dict[str, Any]:
        data = {"name": self.name, "kind": self.kind, "status": self.status, "idle": self.idle, "last_seen": self.last_seen}
        if self.problem:
            data["problem"] = self.problem
        if self.model:
            data["model"] = self.model
        if self.spawn:
            data["spawn"] = self.spawn
        return data


def roster(project: Project, config: Config) -> list[RosterEntry]:
    """Every agent: defined ones, sessions that have spoken up, and running or recent spawns."""
    from rooms_cli.agents.definitions import agent_ids

    spawns = latest_by_alias(project)
    defined = set(agent_ids(project))
    sessions = set(status_names(project)) | set(names_in(layout.seen_dir(project)))
    entries: list[RosterEntry] = []
    for name in sorted(defined | sessions | set(spawns)):
        spawn = spawns.get(name)
        if spawn is not None and name not in defined and not spawn.active:
            age = age_seconds(spawn.finished)
            if age is not None and age > RECENT_SPAWN:
                continue
        problem = None
        try:
            record = read_status(project, name)
        except RoomsError as exc:
            # one agent's broken file (an unresolved merge…) must not hide every other agent
            record, problem = {}, exc.to_json()["error"]
        seen = last_seen(project, name)
        age = age_seconds(seen)
        entry = RosterEntry(
            name=name,
            kind="agent" if name in defined else "spawn" if spawn is not None else "session",
            status=record.get("status") or "",
            idle=not (age is not None and age <= IDLE_AFTER),
            last_seen=seen,
            problem=problem,
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


def _model_of(project: Project, config: Config, name: str) -> str | None:
    from rooms_cli.agents.definitions import load_agent
    from rooms_cli.core.errors import RoomsError

    try:
        return load_agent(project, name).model_string(config.default_model)
    except RoomsError:
        return None  # a broken definition is reported by the commands that use it


def recipients_for_everyone(project: Project, config: Config, sender: str) -> list[str]:
    """Who a message without --to reaches: every agent on the roster except the sender and finished spawns."""
    return [e.name for e in roster(project, config) if e.name != sender and not (e.kind == "spawn" and e.idle)]


def known_names(project: Project) -> set[str]:
    """Every name messaging has heard of: defined agents, sessions, inbox owners, spawn aliases."""
    return session_names(project) | {s.alias for s in list_spawns(project)}
