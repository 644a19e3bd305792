"""Who is in a room and how: invite, kick, mute, unmute, show, use.

Mute is per room: the agent stays, keeps its session, and direct address / @everyone / @jam
bypass it. Kick removes the agent and deletes its per-room session; re-invited, it rebuilds its
context from the transcript. Kick refuses to remove the last agent of the default room; kicking the
last agent of another room warns (a chat there is an error until someone is invited). A kicked agent
stays out of the default room when agents defined later join it; inviting it back lifts that.
"""

from __future__ import annotations

from rooms_cli.chat import budget, sessions
from rooms_cli.chat.rooms import RoomState, list_room_states, load_room, update_room
from rooms_cli.chat.transcript import append_message
from rooms_cli.core.errors import Conflict, InvalidInput

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project

DEFAULT_ROOM = "default"


def invite(project: Project, room: str, agent_id: str, by: str) -> dict[str, Any]:
    from rooms_cli.agents.definitions import load_agent

    agent = load_agent(project, agent_id)
    added = [False]

    def join(state: RoomState) -> None:
        if agent.id in state.kicked:
            state.kicked.remove(agent.id)
        if agent.id not in state.roster:
            state.roster.append(agent.id)
            budget.resize(state)
            added[0] = True

    state = update_room(project, room, join)
    if added[0]:
        append_message(project, room, by, f"invited {agent.id}", kind="join", meta={"agent": agent.id})
    return {"room": room, "agent": agent.id, "changed": added[0], "roster": state.roster}


def kick(project: Project, room: str, agent_id: str, by: str) -> dict[str, Any]:
    def remove(state: RoomState) -> None:
        if agent_id not in state.roster:
            raise InvalidInput(f"{agent_id} is not in room {room!r} (roster: {', '.join(state.roster) or 'empty'})")
        if state.id == DEFAULT_ROOM and state.roster == [agent_id]:
            raise Conflict(f"{agent_id} is the last agent of the default room; invite another before kicking it",
                           code="last_agent")
        state.roster.remove(agent_id)
        if agent_id not in state.kicked:
            state.kicked.append(agent_id)
        for attr in ("muted", "handoff"):
            if agent_id in getattr(state, attr):
                getattr(state, attr).remove(agent_id)
        budget.resize(state)

    state = update_room(project, room, remove)
    had_session = sessions.delete_session(project, room, agent_id)
    append_message(project, room, by, f"kicked {agent_id}", kind="kick", meta={"agent": agent_id})
    result = {"room": room, "agent": agent_id, "session_deleted": had_session, "roster": state.roster}
    if not state.roster:
        result["warning"] = (f"room {room!r} has no agents left: nobody will answer there until you invite one "
                             f"(rooms room invite AGENT --room {room}, or /invite AGENT)")
    return result


def set_muted(project: Project, room: str, agent_id: str, muted: bool, by: str) -> dict[str, Any]:
    changed = [False]

    def change(state: RoomState) -> None:
        if agent_id not in state.roster:
            raise InvalidInput(f"{agent_id} is not in room {room!r}")
        if muted and agent_id not in state.muted:
            state.muted.append(agent_id)
            changed[0] = True
        elif not muted and agent_id in state.muted:
            state.muted.remove(agent_id)
            changed[0] = True

    state = update_room(project, room, change)
    if changed[0]:
        kind = "mute" if muted else "unmute"
        append_message(project, room, by, f"{kind}d {agent_id}", kind=kind, meta={"agent": agent_id})
    return {"room": room, "agent": agent_id, "muted": muted, "changed": changed[0], "mute_list": state.muted}


def show(project: Project, config: Config, room: str) -> dict[str, Any]:
    """Roster (with flags), budget, mutes, queued mentions, agents mid-handoff, session usage."""
    from rooms_cli.agents.definitions import load_agent
    from rooms_cli.core.errors import NotFound

    state = load_room(project, room)
    members = []
    for agent_id in state.roster:
        entry = {"id": agent_id, "muted": agent_id in state.muted, "handoff": agent_id in state.handoff}
        try:
            agent = load_agent(project, agent_id)
        except NotFound:
            entry["missing"] = True
        else:
            entry.update(name=agent.display_name, model=agent.model_string(config.default_model), quiet=agent.quiet)
        entry["session"] = sessions.summarize_session(project, room, agent_id).to_json()
        members.append(entry)
    return {
        "id": state.id, "status": state.status, "created": state.created, "roster": members,
        "budget": {"remaining": state.budget_remaining, "total": state.budget_total},
        "muted": state.muted, "queued": state.queued, "handoff": state.handoff,
        "rehydrated_from": state.rehydrated_from,
    }


def live_rooms(project: Project, include_stopped: bool = False) -> list[dict[str, Any]]:
    return [
        {"id": s.id, "status": s.status, "roster": s.roster, "budget": {"remaining": s.budget_remaining, "total": s.budget_total}}
        for s in list_room_states(project) if include_stopped or s.live
    ]


def use(project: Project, room: str) -> dict[str, Any]:
    """Make `room` the current room (it must be live)."""
    from rooms_cli.chat.coordinator import live_room
    from rooms_cli.project.context import write_current_room

    live_room(project, room)
    write_current_room(project, room)
    return {"room": room}
