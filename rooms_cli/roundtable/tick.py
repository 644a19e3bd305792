"""The roundtable steps of `rooms tick`: fire due schedule slots, then run pending roundtables.

Both return a list of {"action", "detail", "error"?}; an action with "error" makes `rooms tick` exit 1.
With `dry_run` they report what they would do and write
nothing (not even a lock file).
"""

from __future__ import annotations

from rooms_cli.core.errors import InvalidInput, RoomsError
from rooms_cli.core.text import count
from rooms_cli.store.clock import iso, now
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config
    from rooms_cli.roundtable.orchestrator import OnEvent, RoundtableRequest
    from rooms_cli.roundtable.schedule import Occurrence, ScheduleState, Slot

MAX_RUNS_PER_TICK = 20  # a runaway queue must not keep one tick busy forever


def _request_for(project: Project, config: Config, occ: Occurrence) -> RoundtableRequest:
    """The roundtable a slot occurrence asks for; `random:N` drawn now, fixed by slot + day (+ ROOMS_SEED),
    so a dry run names the participants the real tick will draw."""
    import os
    import random

    from rooms_cli.roundtable.formats import get_format
    from rooms_cli.roundtable.orchestrator import RoundtableRequest, talking_agents
    from rooms_cli.roundtable.speakers import resolve_participants

    slot = occ.slot
    fmt = get_format(config, slot.format)
    chance = random.Random("\x1f".join(["schedule", os.environ.get("ROOMS_SEED", ""), slot.id, occ.key]))
    participants = resolve_participants(list(slot.participants), list(talking_agents(project, config)), fmt, chance,
                                        config.get("leader"))
    return RoundtableRequest(fmt.name, topic=slot.topic, participants=participants, pace=slot.pace)


def fire_schedule(project: Project, config: Config, dry_run: bool = False) -> list[dict[str, Any]]:
    """Roll every due, not yet rolled slot occurrence once; enqueue the winners."""
    from rooms_cli.roundtable import schedule

    slots = schedule.load_slots(config)
    if not slots:
        return []
    catch = schedule.catch_up_seconds(config)
    if dry_run:
        return _fire(project, config, schedule.read_state(project), slots, catch, dry_run=True)
    with locked(schedule.state_path(project), what="the schedule state"):
        state = schedule.read_state(project)
        actions = _fire(project, config, state, slots, catch, dry_run=False)
        state.prune(now())
        if actions:
            schedule.write_state(project, state)
    return actions


def _fire(project: Project, config: Config, state: ScheduleState, slots: list[Slot], catch: float, *, dry_run: bool) -> list[dict[str, Any]]:
    from rooms_cli.roundtable import queue, schedule

    actions = []
    due = [occ for occ in schedule.due_occurrences(slots, now(), catch) if not state.has(occ)]
    latest = {occ.slot.id: occ for occ in due}  # due is oldest first
    for occ in due:
        if latest[occ.slot.id] is not occ:
            # a backlog of one slot (a busy cron, a long catch_up) fires once, at its latest time
            if not dry_run:
                state.record(occ, {"at": iso(occ.at), "superseded_by": latest[occ.slot.id].key})
            continue
        slot, roll = occ.slot, occ.roll
        where = f"{slot.name} ({slot.format}, {occ.key}): rolled {roll:.3f} vs p {slot.probability:g}"
        entry = {"at": iso(occ.at), "roll": round(roll, 6), "won": occ.wins, "fired": iso(now())}
        if not occ.wins:
            actions.append({"action": "skip", "detail": f"{where}, lost"})
        else:
            try:
                request = _request_for(project, config, occ)
            except RoomsError as err:
                entry["error"] = err.message
                actions.append({"action": "skip", "detail": f"{where}, won but cannot run: {err.message}",
                                "error": err.message})
            else:
                detail = f"{where}, won: {request.format} with {', '.join(request.participants or [])}"
                if not dry_run:
                    # keyed by slot + day: a crash between enqueue and the state write cannot fire it twice
                    item, _new = queue.enqueue(project, request, by="schedule", key=f"{slot.id}@{occ.key}")
                    entry["queued"] = item.id
                    detail += f" → {item.id}"
                actions.append({"action": "fire", "detail": detail})
        if not dry_run:
            state.record(occ, entry)
    return actions


def run_pending(project: Project, config: Config, dry_run: bool = False, on_event: OnEvent | None = None) -> list[dict[str, Any]]:
    """Retry items whose runner died, then claim and run pending roundtables one by one.

    `on_event(kind, data)` hears each roundtable's events as `rooms roundtable run` does.
    """
    from rooms_cli.roundtable import queue
    from rooms_cli.roundtable.orchestrator import own_room, run_roundtable_sync
    from rooms_cli.store.ids import new_id

    actions = [
        {"action": "retry", "detail": f"{item.id} ({item.request.format}): {reason}"}
        for item, reason in queue.recover_dead(project, dry_run=dry_run)
    ]
    if dry_run:
        moment = now()
        pending = [i for i in queue.list_items(project) if i.status == "pending" and queue.ready(i, moment)]
        return actions + [{"action": "run", "detail": f"{i.id} ({i.request.format})"} for i in pending]
    for _ in range(MAX_RUNS_PER_TICK):
        item = queue.claim_next(project)
        if item is None:
            break
        rt_id = new_id("rt")
        try:
            result = run_roundtable_sync(project, config, item.request, roundtable_id=rt_id, on_event=on_event,
                                         heartbeat=lambda item=item: queue.renew(project, item))
        except Exception as exc:  # noqa: BLE001 - a bug must not wedge the queue either: record it and go on
            message = exc.message if isinstance(exc, RoomsError) else f"internal error: {type(exc).__name__}: {exc}"
            # a request that cannot run as asked (too few agents, an unknown one) fails the same way again
            retry = not isinstance(exc, InvalidInput)
            retry_at = queue.mark_failed(project, item, message, rt_id, retry=retry)
            if item.by == "schedule" and item.request.room is None:
                end_own_room(project, own_room(item.request.format, rt_id))
            then = (f"retry {item.attempts + 1}/{queue.MAX_ATTEMPTS} after {retry_at}" if retry_at
                    else f"gave up after {count(item.attempts, 'attempt')}" if retry else "not retried")
            actions.append({"action": "run", "detail": f"{item.id} ({item.request.format}) failed: {message}; {then}",
                            "error": message})
            continue
        queue.mark_done(project, item, result.id, result.room)
        if item.by == "schedule" and item.request.room is None:
            end_own_room(project, result.room)
        said = len(result.turns)
        actions.append({"action": "run", "detail": f"{item.id} ({result.format}): {count(said, 'turn')} in room {result.room}"})
    return actions


def end_own_room(project: Project, room: str) -> None:
    """A roundtable's own room (none was asked for) is dropped once it is over, scheduled or run by
    hand: out of `rooms room list`, still readable (`rooms room list --all`, `rooms transcript --room
    ROOM` or `--room rt-…`); a day of 24 slots leaves no clutter."""
    from rooms_cli.chat.lifecycle import stop
    from rooms_cli.chat.rooms import room_exists

    if room_exists(project, room):  # a roundtable that failed early never made its room
        stop(project, room, "dropped", "rooms", save_first=False)
