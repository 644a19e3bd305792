"""Room state (roster, mutes, budget, queued mentions, handoff flags, status): `.rooms/rooms/<room>/state.jsonl`.

Every change appends what it did as operations — `created {state}`, `set {field, value}`, `add` /
`remove {field, value}` on the roster, mutes, handoff flags and queued mentions (one per message
and agent), `spend {value}` on the budget — each with an `eid` and an `hlc` stamp
(store/eventlog.py). Replay in the one order of every log (store/order.py) gives the state; so a mute in one clone and a
kick in another merge in git (`merge=union`) with both effects kept, the same whichever way the
merge went. Replay keeps mutes and handoff flags to roster agents (a kick clears both) and the
budget within 0..total.

The transcript beside it is an append-only log (transcript.py).
"""

from __future__ import annotations

from collections.abc import Callable

from rooms_cli.chat.budget import budget_for, resize
from rooms_cli.core import terminal
from rooms_cli.core.errors import Conflict, InvalidData, NotFound
from rooms_cli.core.records import asdict, dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.store import eventlog, files, jsonl, layout
from rooms_cli.store.clock import now_iso
from rooms_cli.store.ids import is_valid_name, validate_name
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

STATUSES = ("live", "dropped", "halted")


@dataclass
class RoomState:
    """A room as its state log replays: roster, mutes, budget, queued mentions, status."""

    id: str
    status: str = "live"
    created: str = ""
    roster: list[str] = field(default_factory=list)
    muted: list[str] = field(default_factory=list)
    budget_total: int = 6
    budget_remaining: int = 6
    queued: list[dict[str, Any]] = field(default_factory=list)  # direct mentions posted at zero budget
    handoff: list[str] = field(default_factory=list)  # agents mid-handoff
    kicked: list[str] = field(default_factory=list)  # kicked and not invited back: new agents stay out
    rehydrated_from: str | None = None

    @property
    def live(self) -> bool:
        return self.status == "live"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> RoomState:
        """The state in `data`, the `state` of a `created` event that `event_problem` checked already
        against `schema.SCHEMAS["room"]` (a negative budget, `queued: [1]` never get here)."""
        known = {f for f in cls.__dataclass_fields__}
        clean = {k: v for k, v in data.items() if k in known}
        if "id" not in clean:
            raise InvalidData(f"{where}: field 'id' is missing")
        clean["queued"] = [dict(q) for q in clean.get("queued", [])]
        state = cls(**clean)
        state.budget_remaining = min(state.budget_remaining, state.budget_total)
        return state


room_dir = layout.room_dir
transcript_path = layout.transcript_file


state_log_path = layout.room_state_log
room_exists = layout.room_exists


# room state is an event log replayed in the one order (store/order.py), so two clones' changes merge in git
_SCALARS = ("status", "budget_total", "rehydrated_from", "created")
_LISTS = ("roster", "muted", "handoff", "kicked")
_MEMBERS_ONLY = ("muted", "handoff")  # only roster agents can be muted or mid-handoff


def load_room(project: Project, room: str) -> RoomState:
    """The room as its state log says."""
    state: RoomState | None = None
    log = state_log_path(project, room)
    where = project.relative(log)
    for ev in eventlog.ordered(jsonl.read(log)):
        wrong = event_problem(ev)
        if wrong is not None:
            raise InvalidData(f"{where}: {ev.get('op')!r} event {ev.get('eid', '?')}: {wrong}")
        try:
            state = _apply(state, ev, where)
        except (KeyError, TypeError, ValueError):
            raise InvalidData(f"{where}: malformed {ev.get('op')!r} event: {ev!r}") from None
    if state is None:
        raise NotFound(f"no room {room!r}; create it with `rooms room create {room}`")
    return state


def event_problem(ev: dict[str, Any]) -> str | None:
    """What is wrong with one state-log event, or None: the check doctor makes (store/schema.py,
    "room-event"), but an event of an op or field this version does not know is ignored."""
    from rooms_cli.store import schema

    return schema.problem("room-event", ev, strict=False)


def _apply(state: RoomState | None, ev: dict[str, Any], where: str = "room state") -> RoomState | None:
    """`state` after one event: `created` makes the room (or merges a second creation into it); any
    other event goes to the handler `_HANDLERS` names for its op and the kind of its field (an op or
    field this version does not know changes nothing)."""
    op, name = ev.get("op"), ev.get("field")
    if op == "created":
        return _created(state, RoomState.from_json(ev["state"], where))
    if state is None:
        return None
    kind = "budget" if op == "spend" else _FIELD_KINDS.get(name) if isinstance(name, str) else None
    handler = _HANDLERS.get((op, kind)) if isinstance(op, str) else None
    if handler is not None:
        handler(state, str(name), ev["value"])
    return state


def _created(state: RoomState | None, created: RoomState) -> RoomState:
    if state is None:
        return created
    for agent in created.roster:  # created in two clones: one room with both rosters
        _add(state, "roster", agent)
    return state


def _set(state: RoomState, name: str, value: Any) -> None:
    setattr(state, name, value)


def _refill(state: RoomState, name: str, value: Any) -> None:
    state.budget_remaining = max(0, min(state.budget_total, int(value)))


def _spend(state: RoomState, name: str, value: Any) -> None:
    state.budget_remaining = max(0, min(state.budget_total, state.budget_remaining - int(value)))


def _add(state: RoomState, name: str, value: Any) -> None:
    items = getattr(state, name)
    if value not in items and (name not in _MEMBERS_ONLY or value in state.roster):
        items.append(value)


def _remove(state: RoomState, name: str, value: Any) -> None:
    for attr in (name, *_MEMBERS_ONLY) if name == "roster" else (name,):
        if value in getattr(state, attr):
            getattr(state, attr).remove(value)


def _queue(state: RoomState, name: str, value: Any) -> None:
    value = dict(value)
    agent = value.pop("agent")
    entry = next((q for q in state.queued if q.get("id") == value["id"]), None)
    if entry is None:
        state.queued.append({**value, "agents": [agent]})
    elif agent not in entry.setdefault("agents", []):
        entry["agents"].append(agent)


def _unqueue(state: RoomState, name: str, value: Any) -> None:
    for entry in list(state.queued):
        if entry.get("id") == value["id"]:
            entry["agents"] = [a for a in entry.get("agents", []) if a != value["agent"]]
            if not entry["agents"]:
                state.queued.remove(entry)


_FIELD_KINDS = {**{name: "scalar" for name in _SCALARS}, **{name: "list" for name in _LISTS},
                "budget_remaining": "budget", "queued": "queued"}
# (op, kind of field) -> what it does to the state; `spend` applies to the budget whatever field it names
_HANDLERS: dict[tuple[object, object], Callable[[RoomState, str, object], None]] = {
    ("set", "scalar"): _set, ("set", "budget"): _refill, ("spend", "budget"): _spend,
    ("add", "list"): _add, ("remove", "list"): _remove, ("add", "queued"): _queue, ("remove", "queued"): _unqueue,
}


def _queued_pairs(state: RoomState) -> dict[tuple[str, str], dict[str, Any]]:
    pairs = {}
    for entry in state.queued:
        rest = {k: v for k, v in entry.items() if k != "agents"}
        for agent in entry.get("agents", []):
            pairs[(str(entry.get("id")), agent)] = {**rest, "agent": agent}
    return pairs


def _changes(before: RoomState, after: RoomState) -> list[dict[str, Any]]:
    """The events that turn `before` into `after`: what one update did, as operations that commute
    well with another clone's (list items added/removed, budget spent, fields set)."""
    events = []

    def ev(op: str, name: str, value: Any) -> None:
        events.append(eventlog.event("op", op, prefix="e", field=name, value=value))

    for name in _SCALARS:
        if getattr(after, name) != getattr(before, name):
            ev("set", name, getattr(after, name))
    for name in _LISTS:
        old, new = getattr(before, name), getattr(after, name)
        for item in old:
            if item not in new:
                ev("remove", name, item)
        for item in new:
            if item not in old:
                ev("add", name, item)
    if after.budget_remaining != before.budget_remaining or after.budget_total != before.budget_total:
        if after.budget_remaining == after.budget_total:
            ev("set", "budget_remaining", after.budget_remaining)  # a refill
        else:
            ev("spend", "budget_remaining", before.budget_remaining - after.budget_remaining)
    old_q, new_q = _queued_pairs(before), _queued_pairs(after)
    for key in old_q.keys() - new_q.keys():
        ev("remove", "queued", {"id": key[0], "agent": key[1]})
    for key, value in new_q.items():
        if key not in old_q:
            ev("add", "queued", value)
    return events


def _record(project: Project, state: RoomState, before: RoomState | None) -> None:
    """Append what changed (the caller holds the state log's lock)."""
    if before is None:
        events = [eventlog.event("op", "created", prefix="e", state=state.to_json())]
    else:
        events = _changes(before, state)
    if events:
        from rooms_cli.store import schema

        for ev in events:  # what the reader (and doctor) would refuse is never written
            schema.validate("room-event", ev, project.relative(state_log_path(project, state.id)))
        eventlog.append(state_log_path(project, state.id), events, lock=False)


def save_room(project: Project, state: RoomState) -> None:
    """Record `state` as the room's whole state: a new room, or one rebuilt from a saved transcript."""
    with locked(state_log_path(project, state.id)):
        before = load_room(project, state.id) if room_exists(project, state.id) else None
        _record(project, state, before)


def room_ids(project: Project) -> list[str]:
    """The ids of every room, without reading their state (tab completion)."""
    return [name for name in files.names(layout.rooms_dir(project)) if is_valid_name(name) and room_exists(project, name)]


def list_room_states(project: Project, *, quiet: bool = False) -> list[RoomState]:
    """Every readable room's state; an unreadable one is skipped with a warning (none when `quiet`)."""
    states = []
    for name in files.names(layout.rooms_dir(project)):
        if is_valid_name(name) and room_exists(project, name):
            try:
                states.append(load_room(project, name))
            except (InvalidData, NotFound) as err:  # e.g. a field of the wrong type: this room only
                if not quiet:
                    _warn_unreadable(project, name, err)
    return states


_warned_rooms: set[str] = set()


def _warn_unreadable(project: Project, room: str, err: InvalidData | NotFound) -> None:
    if room not in _warned_rooms:
        _warned_rooms.add(room)
        terminal.warn(f"room {room!r} skipped: {err.message}")


def default_roster(project: Project) -> list[str]:
    from rooms_cli.agents.definitions import list_agents

    return [a.id for a in list_agents(project) if not a.idle]


def create_room(project: Project, room: str, agents: list[str] | None = None, *, exist_ok: bool = False) -> RoomState:
    """Create a live room; without `agents` every non-idle agent joins."""
    from rooms_cli.agents.definitions import load_agent

    validate_name(room, "room id")
    roster = list(dict.fromkeys(agents)) if agents else default_roster(project)
    for agent_id in roster:
        load_agent(project, agent_id)
    with locked(state_log_path(project, room)):
        if room_exists(project, room):
            if exist_ok:
                return load_room(project, room)
            raise Conflict(f"room {room!r} already exists", code="name_taken")
        total = budget_for(len(roster))
        state = RoomState(id=room, created=now_iso(), roster=roster, budget_total=total, budget_remaining=total)
        _record(project, state, None)
    return state


def admit_new_agents(project: Project, room: str) -> list[str]:
    """Agents defined after `room` was made join it — every non-idle agent belongs in the default
    room — unless they were kicked from it. Returns who joined (usually nobody)."""
    state = load_room(project, room)
    missing = [a for a in default_roster(project) if a not in state.roster and a not in state.kicked]
    if not missing:
        return []
    joined: list[str] = []

    def join(state: RoomState) -> None:
        joined[:] = [a for a in missing if a not in state.roster and a not in state.kicked]
        state.roster.extend(joined)
        resize(state)

    update_room(project, room, join)
    return joined


def update_room(project: Project, room: str, change: Callable[[RoomState], object]) -> RoomState:
    """Read-modify-write the room state under its lock; `change` mutates the state in place."""
    with locked(state_log_path(project, room)):
        state = load_room(project, room)
        before = RoomState(**asdict(state))  # a deep copy (asdict copies the lists), without the copy module

        change(state)
        _record(project, state, before)
    return state
