"""Who is in which group: spawn, spawn-mixed, move-member, rename, dissolve, list.

Members are records, not processes: a model-backed member is called when a broadcast is gathered;
an external member answers with `rooms group reply`. Nesting is one level deep: a member may be a
group (`group:<sub>`), but a sub-group cannot contain a group.
"""

from __future__ import annotations

from rooms_cli.core.errors import Conflict, InvalidInput, NotFound
from rooms_cli.groups import log
from rooms_cli.groups.model import GROUP_PREFIX, Group, Member
from rooms_cli.store import eventlog
from rooms_cli.store.ids import new_id, validate_name
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config


def parents_of(project: Project, name: str) -> list[str]:
    """The groups that have group `name` as a member."""
    found = []
    for other in log.log_names(project):
        if other == name:
            continue
        group = log.load_optional(project, other)
        if group and any(m.sub_group == name for m in group.members):
            found.append(other)
    return found


def check_profile(project: Project, group_name: str, profile: str) -> None:
    """The profile must name an agent, or a group that may nest here (one level deep)."""
    if not isinstance(profile, str) or not profile:
        raise InvalidInput("a member needs a profile: an agent id, or group:NAME")
    if not profile.startswith(GROUP_PREFIX):
        from rooms_cli.agents.definitions import load_agent

        load_agent(project, profile)
        return
    sub = validate_name(profile[len(GROUP_PREFIX):], "group name")
    if sub == group_name:
        raise InvalidInput(f"group {group_name!r} cannot be a member of itself")
    sub_group = log.load_optional(project, sub)
    if sub_group is None:
        raise NotFound(f"no group {sub!r} to nest; create it first with rooms group spawn {sub} --profile AGENT")
    if sub_group.sub_groups:
        raise InvalidInput(
            f"group {sub!r} contains {'group' if len(sub_group.sub_groups) == 1 else 'groups'} {', '.join(sub_group.sub_groups)}; groups nest one level deep, "
            f"so a sub-group cannot contain a group"
        )
    parents = parents_of(project, group_name)
    if parents:
        raise InvalidInput(
            f"group {group_name!r} is itself a member of {', '.join(parents)}; groups nest one level deep, "
            f"so it cannot contain group {sub!r}"
        )


def _free_handle(group: Group, wanted: str, explicit: bool) -> str:
    taken = {m.handle for m in group.members}
    if wanted not in taken:
        return wanted
    if explicit:
        raise Conflict(f"group {group.name!r} already has a member {wanted!r}; choose another --handle", code="name_taken")
    n = 2
    while f"{wanted}-{n}" in taken:
        n += 1
    return f"{wanted}-{n}"


def spawn(project: Project, name: str, profiles: list[str], handles: list[str | None] | None = None,
          *, ephemeral: bool = False) -> list[Member]:
    """Add members (creating the group if new); return the members added, with their handles.

    A handle defaults to the profile (the sub-group's name for `group:NAME`); a repeated profile
    gets `-2`, `-3`… (`writer`, `writer-2`). An explicit handle that is taken is a conflict.
    """
    log.validate_group_name(name)
    if not profiles:
        raise InvalidInput("give at least one profile")
    handles = list(handles or [None] * len(profiles))
    for profile in profiles:
        check_profile(project, name, profile)
    for h in handles:
        if h is not None:
            validate_name(h, "member handle")
    with log.locked_groups(project, name):
        group = log.load_optional(project, name)
        events = []
        if group is None:
            events.append(log.event("created", name=name, gid=new_id("g"), ephemeral=ephemeral))
            group = Group(name=name, gid="", created="")
        group.name = name
        added = []
        for profile, handle in zip(profiles, handles, strict=True):
            default = profile[len(GROUP_PREFIX):] if profile.startswith(GROUP_PREFIX) else profile
            member = Member(handle=_free_handle(group, handle or default, handle is not None), profile=profile)
            group.members.append(member)
            added.append(member)
            events.append(log.event("member_added", **member.to_json()))
        log.append(project, name, *events)
    return added


def move_member(project: Project, handle: str, src: str, dst: str) -> Member:
    """Move a member from group `src` to group `dst` (created if new). Added first, then removed:
    a crash in between leaves it in both groups, never in neither."""
    if src == dst:
        raise InvalidInput("--from and --to name the same group")
    log.validate_group_name(dst)
    member = log.load(project, src).member(handle)
    if member is None:
        raise NotFound(f"group {src!r} has no member {handle!r}")
    if member.sub_group:
        check_profile(project, dst, member.profile)
    with log.locked_groups(project, src, dst):
        source = log.load(project, src)
        member = source.member(handle)
        if member is None:
            raise NotFound(f"group {src!r} has no member {handle!r}")
        b = source.in_flight
        if b and b.member(handle) and handle not in b.replies:
            raise Conflict(f"{handle!r} is working on broadcast {b.id} of {src!r}; gather or cancel it first", code="broadcast_in_flight")
        target = log.load_optional(project, dst)
        if target and target.member(handle):
            raise Conflict(f"group {dst!r} already has a member {handle!r}", code="name_taken")
        events = [] if target else [log.event("created", name=dst, gid=new_id("g"), ephemeral=False)]
        log.append(project, dst, *events, log.event("member_added", **member.to_json(), **{"from": src}))
        log.append(project, src, log.event("member_removed", handle=handle, to=dst))
    return member


def rename(project: Project, old: str, new: str) -> None:
    """Rename a group: the new log gets a copy of the old one's events plus a `renamed` event; the old
    log keeps its events and gets the same `renamed` event as a tombstone (deleting it would conflict
    in git with a clone that appends to it; what such a clone appends follows the group, see
    `log.gather_events`). A name whose log exists, even of a group that is gone, is not reused."""
    log.validate_group_name(new)
    with log.locked_groups(project, old, new):
        group = log.load(project, old)
        if log.exists(project, new):
            raise Conflict(f"a group named {new!r} already exists", code="name_taken")
        if log.has_log(project, new):
            raise Conflict(f"the name {new!r} belonged to a group that was renamed or dissolved; its log "
                           f"{project.relative(log.log_path(project, new))} is kept so that clones merge; choose another name",
                           code="name_taken")
        if group.in_flight:
            raise Conflict(f"group {old!r} has broadcast {group.in_flight.id} in flight; gather or cancel it first", code="broadcast_in_flight")
        parents = parents_of(project, old)
        if parents:
            raise Conflict(f"group {old!r} is a member of {', '.join(parents)}; move it out before renaming it", code="conflict")
        log.append(project, new, *eventlog.ordered(log.gather_events(project, old)), log.event("renamed", **{"from": old, "to": new}))
        log.append(project, old, log.event("renamed", **{"from": old, "to": new}))


def dissolve(project: Project, config: Config, name: str, by: str) -> dict[str, Any]:
    """Drop the group: cancel its broadcast in flight (pending members are told), then end its log with
    a `dissolved` tombstone (an ephemeral group's log is deleted: it was never shared)."""
    from rooms_cli.groups import broadcasts

    group = log.load(project, name)
    parents = parents_of(project, name)
    if parents:
        raise Conflict(f"group {name!r} is a member of {', '.join(parents)}; move it out before dissolving it", code="conflict")
    cancelled = None
    if group.in_flight:
        cancelled = broadcasts.cancel(project, config, name, by, reason="the group was dissolved").id
    with log.locked_groups(project, name):
        if group.ephemeral:
            log.remove(project, name)  # never shared: leaves no trace
        else:
            # a tombstone, not a deletion: a clone that appends meanwhile must still merge
            log.append(project, name, log.event("dissolved", by=by, seen=log.load(project, name).event_count))
    return {"group": name, "dissolved": True, "members": [m.handle for m in group.members], "cancelled_broadcast": cancelled}
