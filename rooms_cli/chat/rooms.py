"""Room state: `.rooms/rooms/<room>/room.yaml` (roster, mutes, budget, queued mentions, status).

The state file is small and replaced atomically under its lock; the transcript beside it is an
append-only log (transcript.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from rooms_cli.chat.budget import budget_for
from rooms_cli.errors import Conflict, InvalidData, NotFound
from rooms_cli.store import atomic, layout
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import validate_name
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

STATUSES = ("live", "dropped", "halted")


@dataclass
class RoomState:
    id: str
    status: str = "live"
    created: str = ""
    roster: list[str] = field(default_factory=list)
    muted: list[str] = field(default_factory=list)
    budget_total: int = 6
    budget_remaining: int = 6
    queued: list[dict] = field(default_factory=list)  # direct mentions posted at zero budget
    handoff: list[str] = field(default_factory=list)  # agents mid-handoff
    rehydrated_from: str | None = None

    @property
    def live(self) -> bool:
        return self.status == "live"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict, where: str) -> RoomState:
        if not isinstance(data, dict):
            raise InvalidData(f"{where}: expected a mapping")
        known = {f for f in cls.__dataclass_fields__}
        clean = {k: v for k, v in data.items() if k in known}
        for key in ("roster", "muted", "queued", "handoff"):
            if key in clean and not isinstance(clean[key], list):
                raise InvalidData(f"{where}: field {key!r} must be a list")
        for key in ("budget_total", "budget_remaining"):
            if key in clean and (isinstance(clean[key], bool) or not isinstance(clean[key], int)):
                raise InvalidData(f"{where}: field {key!r} must be a whole number")
        if clean.get("status", "live") not in STATUSES:
            raise InvalidData(f"{where}: field 'status' must be one of {', '.join(STATUSES)}")
        if "id" not in clean:
            raise InvalidData(f"{where}: field 'id' is missing")
        return cls(**clean)


room_dir = layout.room_dir
state_path = layout.room_file
transcript_path = layout.transcript_file


def room_exists(project: Project, room: str) -> bool:
    return state_path(project, room).exists()


def load_room(project: Project, room: str) -> RoomState:
    path = state_path(project, room)
    data = atomic.read_yaml(path, default=None)
    if data is None:
        raise NotFound(f"no room {room!r}; create it with `rooms room create {room}`")
    return RoomState.from_json(data, project.relative(path))


def save_room(project: Project, state: RoomState) -> None:
    atomic.write_yaml(state_path(project, state.id), state.to_json())


def list_room_states(project: Project) -> list[RoomState]:
    base = layout.rooms_dir(project)
    if not base.is_dir():
        return []
    states = []
    for child in sorted(base.iterdir()):
        if (child / "room.yaml").exists():
            states.append(load_room(project, child.name))
    return states


def default_roster(project: Project) -> list[str]:
    from rooms_cli.agents import list_agents

    return [a.id for a in list_agents(project) if not a.idle]


def create_room(project: Project, room: str, agents: list[str] | None = None, *, exist_ok: bool = False) -> RoomState:
    """Create a live room; without `agents` every non-idle agent joins."""
    from rooms_cli.agents import load_agent

    validate_name(room, "room id")
    roster = list(dict.fromkeys(agents)) if agents else default_roster(project)
    for agent_id in roster:
        load_agent(project, agent_id)
    path = state_path(project, room)
    with locked(path):
        if path.exists():
            if exist_ok:
                return load_room(project, room)
            raise Conflict(f"room {room!r} already exists", code="name_taken")
        total = budget_for(len(roster))
        state = RoomState(id=room, created=now_iso(), roster=roster, budget_total=total, budget_remaining=total)
        save_room(project, state)
    return state


def update_room(project: Project, room: str, change: Callable[[RoomState], object]) -> RoomState:
    """Read-modify-write the room state under its lock; `change` mutates the state in place."""
    path = state_path(project, room)
    with locked(path):
        state = load_room(project, room)
        change(state)
        save_room(project, state)
    return state
