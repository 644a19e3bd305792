"""Broadcast, reply, cancel: the life of one four-field prompt in a group.

One broadcast is in flight at a time (`broadcast_in_flight`, exit 3) until it is gathered or
cancelled. Every member gets one envelope in its inbox tagged `group:<name>/broadcast:<id>` —
except in ephemeral groups, where only external members get one (rooms calls the others directly
and an ephemeral group leaves no trace). A member that is a group gets a sub-broadcast, and the
envelopes go to the sub-group's members.
"""

from __future__ import annotations

from dataclasses import dataclass

from rooms_cli.core.errors import Conflict, InvalidInput, NotFound
from rooms_cli.groups import log
from rooms_cli.groups.model import FIELDS, Broadcast, Group, Member, render_cancel, render_envelope
from rooms_cli.store.clock import now, parse_time
from rooms_cli.store.ids import new_id, resolve_prefix, validate_name
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config


def check_fields(fields: dict[str, Any]) -> dict[str, str]:
    """All four keys must be present (empty strings are fine); nothing else is accepted."""
    if not isinstance(fields, dict):
        raise InvalidInput(f"a broadcast needs the four fields {', '.join(FIELDS)}")
    missing = [k for k in FIELDS if k not in fields or fields[k] is None]
    if missing:
        raise InvalidInput(f"a broadcast needs all four fields; missing: {', '.join(missing)} (empty strings are allowed)")
    extra = [k for k in fields if k not in FIELDS]
    if extra:
        raise InvalidInput(f"unknown broadcast {'field' if len(extra) == 1 else 'fields'} {', '.join(map(repr, extra))}; the fields are {', '.join(FIELDS)}")
    bad = [k for k in FIELDS if not isinstance(fields[k], str)]
    if bad:
        raise InvalidInput(f"broadcast {'field' if len(bad) == 1 else 'fields'} {', '.join(bad)} must be text")
    return {k: fields[k] for k in FIELDS}


def in_flight_error(name: str, b: Broadcast) -> Conflict:
    return Conflict(
        f"group {name!r} already has broadcast {b.id} in flight; gather it (rooms group wait {name}) "
        f"or cancel it (rooms group cancel {name}) first",
        code="broadcast_in_flight",
    )


def is_external(project: Project, config: Config, profile: str) -> bool:
    from rooms_cli.agents.definitions import load_agent

    return load_agent(project, profile).is_external(config.default_model)


def send_broadcast(project: Project, config: Config, name: str, fields: dict[str, Any], sender: str) -> Broadcast:
    """Open a broadcast in `name` (and its sub-groups) and deliver the envelopes."""
    fields = check_fields(fields)
    group = log.load(project, name)
    if not group.members:
        raise InvalidInput(f"group {name!r} has no members; add one with rooms group spawn {name} --profile AGENT")
    subs = group.sub_groups
    bid = new_id("b")
    with log.locked_groups(project, name, *subs):
        group = log.load(project, name)
        if group.in_flight:
            raise in_flight_error(name, group.in_flight)
        if set(group.sub_groups) - set(subs):
            raise Conflict(f"the members of group {name!r} changed while broadcasting; try again", code="lock_busy")
        sub_ids: dict[str, str] = {}
        sub_events = []
        for m in group.members:
            if not m.sub_group:
                continue
            sub = log.load(project, m.sub_group)
            if sub.in_flight:
                raise in_flight_error(m.sub_group, sub.in_flight)
            if not sub.members:
                raise InvalidInput(f"member {m.handle!r} is group {m.sub_group!r}, which has no members")
            sub_ids[m.handle] = new_id("b")
            sub_events.append((sub, log.event(
                "broadcast", id=sub_ids[m.handle], fields=fields, members=[s.to_json() for s in sub.members],
                sender=sender, parent={"group": name, "broadcast_id": bid},
            )))
        for sub, ev in sub_events:
            log.append(project, sub.name, ev)
        ev = log.event("broadcast", id=bid, gid=group.gid, fields=fields, members=[m.to_json() for m in group.members], sender=sender, sub=sub_ids)
        log.append(project, name, ev)
    for sub, sev in sub_events:
        _deliver(project, config, sub, sev["id"], sub.members, fields, sender)
    _deliver(project, config, group, bid, [m for m in group.members if not m.sub_group], fields, sender)
    return log.load(project, name).require(bid)


def _deliver(project: Project, config: Config, group: Group, bid: str, members: list[Member], fields: dict[str, Any], sender: str) -> None:
    from rooms_cli.messaging.inbox import deliver

    for m in members:
        if group.ephemeral and not is_external(project, config, m.profile):
            continue
        deliver(
            project, to=m.profile, sender=sender, text=render_envelope(group.name, bid, m.handle, fields), kind="group",
            tag=f"group:{group.name}/broadcast:{bid}", meta={**fields, "group": group.name, "broadcast_id": bid, "handle": m.handle},
        )


@dataclass
class ReplyOutcome:
    """Whether a member's reply to a broadcast was accepted, or dropped (late or a second reply) and why."""

    group: str
    broadcast_id: str
    handle: str
    accepted: bool
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        data = {"group": self.group, "broadcast_id": self.broadcast_id, "handle": self.handle, "accepted": self.accepted}
        if not self.accepted:
            data["dropped"] = True
            data["reason"] = self.reason
        return data


def record_reply(project: Project, name: str, bid: str, handle: str, text: str, *, status: str = "ok",
                 elapsed_s: float | None = None, source: str = "external", cut: bool = False) -> ReplyOutcome:
    """Record a member's reply; one that comes after the result (or twice) is recorded as dropped.

    `cut`: the model's max_tokens limit stopped the reply (the event carries `cut: true`)."""
    with log.locked_groups(project, name):
        b = log.load(project, name).require(bid)
        if b.member(handle) is None:
            raise NotFound(f"{handle!r} was not a member of group {name!r} when broadcast {bid} went out")
        if b.in_flight and handle not in b.replies:
            if elapsed_s is None:
                elapsed_s = max(0.0, (now() - parse_time(b.ts)).total_seconds())
            extra = {"cut": True} if cut else {}
            log.append(project, name, log.event("reply", id=bid, handle=handle, text=text, status=status,
                                                elapsed_s=round(elapsed_s, 3), source=source, **extra))
            return ReplyOutcome(name, bid, handle, True)
        reason = f"broadcast {bid} was already {b.status}" if not b.in_flight else f"{handle!r} already replied to {bid}"
        log.append(project, name, log.event("dropped", id=bid, handle=handle, text=text, reason=reason))
        return ReplyOutcome(name, bid, handle, False, reason)


def reply(project: Project, config: Config, name: str, handle: str, text: str, bid: str | None = None) -> ReplyOutcome:
    """An external member answers (from any shell): `rooms group reply NAME --as HANDLE TEXT`."""
    validate_name(handle, "member handle")
    group = log.load(project, name)
    if not group.broadcasts:
        raise NotFound(f"group {name!r} has had no broadcast yet; nothing to reply to")
    if bid:
        b = group.require(resolve_prefix(bid, [x.id for x in group.broadcasts], "broadcast id"))
    else:
        b = group.in_flight or group.broadcasts[-1]
    member = b.member(handle)
    if member is None:
        handles = ", ".join(m.handle for m in b.members)
        raise NotFound(f"{handle!r} is not a member of broadcast {b.id} in group {name!r}; its members: {handles}")
    if member.sub_group:
        raise InvalidInput(f"member {handle!r} is group {member.sub_group!r}: its members reply with rooms group reply {member.sub_group} --as HANDLE")
    from rooms_cli.agents.definitions import load_agent

    agent = load_agent(project, member.profile)
    if not agent.is_external(config.default_model):
        raise InvalidInput(
            f"member {handle!r} (agent {member.profile}) runs on a model ({agent.model_string(config.default_model)}); "
            f"rooms answers for it when the broadcast is gathered. Only members whose agent has model: external reply by hand"
        )
    return record_reply(project, name, b.id, handle, text)


def cancel(project: Project, config: Config, name: str, by: str, reason: str | None = None) -> Broadcast:
    """Cancel the in-flight broadcast (and its sub-broadcasts); pending members get a cancel envelope."""
    group = log.load(project, name)
    b = group.in_flight
    if b is None:
        raise NotFound(f"group {name!r} has no broadcast in flight")
    reason = reason or f"cancelled by {by}"
    closed = close_cancelled(project, name, b.id, by, reason)
    for sub_name, sub_b in closed:
        notify_cancel(project, config, log.load(project, sub_name), sub_b, [m.handle for m in sub_b.pending()], reason)
    return log.load(project, name).require(b.id)


def close_cancelled(project: Project, name: str, bid: str, by: str, reason: str) -> list[tuple[str, Broadcast]]:
    """Record the cancellation of `bid` and of its in-flight sub-broadcasts; return what was closed."""
    b = log.load(project, name).require(bid)
    subs = [(m.sub_group, b.sub[m.handle]) for m in b.members if m.sub_group and m.handle in b.sub]
    closed: list[tuple[str, Broadcast]] = []
    with log.locked_groups(project, name, *[s for s, _ in subs if log.exists(project, s)]):
        current = log.load(project, name).require(bid)
        if current.in_flight:
            log.append(project, name, log.event("cancelled", id=bid, by=by, reason=reason))
            closed.append((name, current))
        for sub_name, sub_bid in subs:
            sub = log.load_optional(project, sub_name)
            sb = sub.broadcast(sub_bid) if sub else None
            if sb is not None and sb.in_flight:
                log.append(project, sub_name, log.event("cancelled", id=sub_bid, by=by, reason=reason))
                closed.append((sub_name, sb))
    return closed


def notify_cancel(project: Project, config: Config, group: Group, b: Broadcast, handles: list[str], reason: str) -> list[str]:
    """Send `group:<name>/cancel:<id>` envelopes to the given members that got a broadcast envelope."""
    from rooms_cli.messaging.inbox import deliver

    told = []
    for handle in handles:
        m = b.member(handle)
        if m is None or m.sub_group:
            continue
        try:
            external = is_external(project, config, m.profile)
        except NotFound:
            continue
        if group.ephemeral and not external:
            continue
        deliver(
            project, to=m.profile, sender="rooms", text=render_cancel(group.name, b.id, handle, reason), kind="group_cancel",
            tag=f"group:{group.name}/cancel:{b.id}", meta={"group": group.name, "broadcast_id": b.id, "handle": handle, "reason": reason},
        )
        told.append(handle)
    return told
