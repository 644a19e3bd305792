"""Records of the group part: members, broadcasts, groups, and the result of a gather."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rooms_cli.core.text import count

if TYPE_CHECKING:
    from rooms_cli.core.errors import RoomsError

FIELDS = ("objective", "output_format", "tool_guidance", "boundaries")
GROUP_PREFIX = "group:"

# statuses of a member in a result
OK, ERROR, TIMEOUT, CANCELLED = "ok", "error", "timeout", "cancelled"


@dataclass
class Member:
    """A member of a group: its handle in the group and the agent (or `group:<sub>`) that answers for it."""

    handle: str
    profile: str  # an agent id, or `group:<sub>` for a nested group

    @property
    def sub_group(self) -> str | None:
        return self.profile[len(GROUP_PREFIX):] if self.profile.startswith(GROUP_PREFIX) else None

    def to_json(self) -> dict[str, Any]:
        return {"handle": self.handle, "profile": self.profile}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Member:
        handle, profile = data["handle"], data["profile"]
        if not isinstance(handle, str) or not isinstance(profile, str):
            raise TypeError("a member's handle and profile must be strings")
        return cls(handle=handle, profile=profile)


@dataclass
class Reply:
    """A member's recorded reply to a broadcast: text, status, time taken, when, and where it came from."""

    handle: str
    text: str
    status: str  # ok | error
    elapsed_s: float
    ts: str
    source: str  # model | external | group
    cut: bool = False  # the model's max_tokens limit stopped it


@dataclass
class Broadcast:
    """One broadcast of a group: its four fields, the members it went to, their replies, status and result."""

    id: str
    fields: dict[str, str]
    members: list[Member]
    sender: str
    ts: str
    sub: dict[str, str] = field(default_factory=dict)  # handle of a group member -> its sub-broadcast id
    parent: dict[str, Any] | None = None  # {"group", "broadcast_id"} when this broadcast serves a parent group
    replies: dict[str, Reply] = field(default_factory=dict)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    status: str = "in_flight"  # in_flight | gathered | cancelled
    result: dict[str, Any] | None = None
    closed_ts: str | None = None

    @property
    def in_flight(self) -> bool:
        return self.status == "in_flight"

    def pending(self) -> list[Member]:
        """Members that have not replied yet."""
        return [m for m in self.members if m.handle not in self.replies]

    def member(self, handle: str) -> Member | None:
        return next((m for m in self.members if m.handle == handle), None)

    def summary(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "broadcast_id": self.id, "status": self.status, "ts": self.ts, "sender": self.sender,
            "objective": self.fields.get("objective", ""), "members": [m.handle for m in self.members],
            "replied": [h for h in self.replies], "dropped": [d["handle"] for d in self.dropped],
        }
        if self.result is not None:
            meta = self.result.get("metadata") or {}
            data["reducer"] = meta.get("reducer")
            if tally(meta):  # a vote or a rank: how many could be read, and why the others not
                data.update(tally=tally(meta), unparsed=dict(meta.get("unparsed") or {}))
        if self.parent:
            data["parent"] = self.parent
        return data


@dataclass
class Group:
    """A group as replayed from its log: members, broadcasts, and what merging clones' logs left behind."""

    name: str
    gid: str
    created: str
    ephemeral: bool = False
    members: list[Member] = field(default_factory=list)
    broadcasts: list[Broadcast] = field(default_factory=list)
    # what replay learnt from merged clones (see groups/log.py and groups/doctor.py)
    gone: str | None = None  # "renamed" | "dissolved": the log is a tombstone, the group is not listed
    renamed_to: list[str] = field(default_factory=list)
    renamed_from: list[str] = field(default_factory=list)
    dissolved_by: list[str] = field(default_factory=list)
    merge_notes: list[dict[str, Any]] = field(default_factory=list)
    event_count: int = 0  # events of this group (since its `created`), tombstones left out
    broadcast_count: int | None = None  # set when `broadcasts` holds only the newest (groups/log.py, load_head)

    @property
    def in_flight(self) -> Broadcast | None:
        return next((b for b in reversed(self.broadcasts) if b.in_flight), None)

    def broadcast(self, bid: str) -> Broadcast | None:
        return next((b for b in self.broadcasts if b.id == bid), None)

    def require(self, bid: str) -> Broadcast:
        """The broadcast `bid`; NotFound when the log has none."""
        from rooms_cli.core.errors import NotFound

        b = self.broadcast(bid)
        if b is None:
            raise NotFound(f"group {self.name!r} has no broadcast {bid}")
        return b

    def member(self, handle: str) -> Member | None:
        return next((m for m in self.members if m.handle == handle), None)

    @property
    def sub_groups(self) -> list[str]:
        return [m.sub_group for m in self.members if m.sub_group]


@dataclass
class MemberResult:
    """A member's part of a gather result, as reducers read it: reply text, status, seconds taken,
    and whether the model's max_tokens limit cut the reply (`"cut": true` in JSON, only then)."""

    text: str
    status: str
    elapsed_s: float
    cut: bool = False

    def to_json(self) -> dict[str, Any]:
        data = {"text": self.text, "status": self.status, "elapsed_s": round(self.elapsed_s, 3)}
        if self.cut:
            data["cut"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MemberResult:
        return cls(text=str(data.get("text", "")), status=str(data.get("status", "")), elapsed_s=float(data.get("elapsed_s", 0.0)),
                   cut=data.get("cut") is True)


@dataclass
class GroupResult:
    """What a gather returns: every member's reply, the reducer's output, timing, arrival order."""

    broadcast_id: str
    by_member: dict[str, MemberResult]
    reduced: Any
    metadata: dict[str, Any]
    order: list[str]

    @property
    def timed_out(self) -> bool:
        return bool(self.metadata.get("timed_out"))

    def problem(self) -> RoomsError | None:
        """Why this result is not a success, as a RoomsError whose exit code the CLI uses (the result
        itself is still shown): a timeout (4), a wait-any that no member won (1), or no result
        although members replied (1: a vote nobody won, ballots nobody could read). None: a success."""
        from rooms_cli.core.errors import RoomsError, TimedOut

        meta = self.metadata
        if self.timed_out:
            return TimedOut(f"timed out: {meta.get('replied', 0)}/{meta.get('members', 0)} members replied")
        if meta.get("mode") == "any" and not meta.get("winner_handle"):
            return RoomsError("no member replied successfully, so wait-any has no winner", code="no_winner")
        if self.reduced is None and meta.get("replied"):
            return RoomsError(f"no result although {count(meta['replied'], 'member')} replied: {no_result_reason(meta)}", code="no_result")
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "broadcast_id": self.broadcast_id,
            "by_member": {h: r.to_json() for h, r in self.by_member.items()},
            "reduced": _jsonable(self.reduced),
            "metadata": _jsonable(self.metadata),
            "order": list(self.order),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GroupResult:
        return cls(
            broadcast_id=str(data["broadcast_id"]),
            by_member={h: MemberResult.from_json(r) for h, r in (data.get("by_member") or {}).items()},
            reduced=data.get("reduced"), metadata=dict(data.get("metadata") or {}), order=list(data.get("order") or []),
        )


def tally(metadata: dict[str, Any]) -> str | None:
    """"3/4 votes parsed" / "2/3 ballots parsed" for a vote or a rank, else None."""
    parsed = metadata.get("parsed")
    if not isinstance(parsed, int):
        return None
    kind = "ballots" if metadata.get("reducer") == "rank" else "votes"
    unread = sum(len(metadata.get(key) or {}) for key in ("unparsed", "uninformative", "ballot_errors"))
    return f"{parsed}/{parsed + unread} {kind} parsed"


def no_result_reason(metadata: dict[str, Any]) -> str:
    """Why a reducer gave no result although members replied, in words."""
    counted = tally(metadata)
    if counted is None:
        return f"reducer {metadata.get('reducer')!r} returned nothing"
    if metadata.get("no_result"):
        return f"{counted}: {metadata['no_result']}"
    if metadata.get("reducer") == "rank":
        return f"{counted}, so the replies cannot be ordered" if metadata.get("parsed") == 0 else counted
    votes = metadata.get("votes") or {}
    if not votes:
        return f"{counted}: no reply named one of {', '.join(metadata.get('options') or [])}"
    return f"{counted} and no option got two votes ({', '.join(f'{o} {n}' for o, n in votes.items())})"


def _jsonable(value: Any) -> Any:
    """Reducers may return anything; keep what JSON can hold and show the rest as text."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_jsonable(v) for v in value]
    return repr(value)


def render_fields(fields: dict[str, str]) -> str:
    """The four labelled fields, one a line (multi-line values indented)."""
    lines = []
    for key in FIELDS:
        value = (fields.get(key) or "").strip().replace("\n", "\n  ")
        lines.append(f"{key}: {value}")
    return "\n".join(lines)


def render_envelope(group: str, bid: str, handle: str, fields: dict[str, str]) -> str:
    """The text of a broadcast envelope as it appears in a member's inbox."""
    return (
        f"[group {group} · broadcast {bid}] you are member {handle!r}\n{render_fields(fields)}\n"
        f"Reply with: rooms group reply {group} --as {handle} \"…\""
    )


def render_cancel(group: str, bid: str, handle: str, reason: str) -> str:
    return f"[group {group} · broadcast {bid}] stop working on it, member {handle!r}: {reason}. A reply now is dropped."
