"""Records of the board: a lease, a task (the state replayed from its log), a conflict found by replay."""

from __future__ import annotations

from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

STATUSES = ("todo", "doing", "done", "blocked", "failed", "cancelled")
FINISHED = ("done", "cancelled")
DEFAULT_LEASE = "10m"
SUMMARY_MAX = 280
TITLE_MAX = 200


@dataclass(frozen=True)
class Lease:
    """A claim on a task: who holds it, until when, and its fencing number (grows with each claim).
    Never changed in place (a renew makes a new one): tasks copied from one replay share their leases."""

    lease_id: str
    fence: int
    holder: str
    plate: str
    claimed_at: str
    expires_at: str
    # When the claim or renewal that set `expires_at` was stamped more than the allowed skew ahead of a
    # reader's clock, its end counts only up to `ahead_end` for that reader (board/replay.bounded_expiry):
    # (that event's stamp, the end). Replay's own bookkeeping, never written out.
    ahead: tuple[str, str] | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "claimed_at": self.claimed_at,
            "expires_at": self.expires_at,
            "fence": self.fence,
            "holder": self.holder,
            "lease_id": self.lease_id,
            "plate": self.plate,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Lease:
        return cls(
            lease_id=str(data["lease_id"]),
            fence=int(data["fence"]),
            holder=str(data.get("holder", "")),
            plate=str(data.get("plate", "")),
            claimed_at=str(data.get("claimed_at", "")),
            expires_at=str(data["expires_at"]),
        )


@dataclass
class BoardConflict:
    """An event that replay could not apply: a double claim after a git merge, or a write it superseded."""

    kind: str  # double_claim | stale_write | invalid_event
    message: str
    event: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"event": self.event, "kind": self.kind, "message": self.message}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BoardConflict:
        return cls(kind=str(data["kind"]), message=str(data["message"]), event=dict(data.get("event") or {}))


@dataclass
class Task:
    """One task as replayed from its log, seen at one moment (a lapsed lease already reads as todo)."""

    id: str
    room: str
    lane: str
    title: str
    definition_of_done: str
    detail: str = ""
    order: float = 0
    status: str = "todo"
    lease: Lease | None = None
    lapsed_lease: Lease | None = None  # the last lease, when it lapsed without being released
    fence: int = 0  # highest fencing number issued for this task
    pending: dict[str, Any] | None = None  # a cross-owner assignment awaiting its owner: {from, to, owner, by, at}
    record: dict[str, Any] | None = None  # the compact record of the last done / set-status
    archived: bool = False
    created_at: str = ""
    created_by: str = ""
    updated_at: str = ""
    conflicts: list[BoardConflict] = field(default_factory=list)
    events: int = 0
    expiry_recorded: bool = False  # `rooms tick` wrote an expire event for lapsed_lease
    leases: dict[str, Lease] = field(default_factory=dict, repr=False)  # every lease ever issued, by id
    withdrawn: list[dict[str, Any]] = field(default_factory=list)  # claim events that lost the race for the remote (--sync)
    depends_on: list[str] = field(default_factory=list)  # the tasks it waits on (ids, sorted): replaced, never changed in place
    blocked_by: list[str] = field(default_factory=list)  # those not done yet: the board's to say (board/deps.py), not the log's

    @property
    def claimable(self) -> bool:
        return self.status == "todo" and not self.pending and not self.archived

    def copy(self) -> Task:
        """A copy that shares nothing replay changes in place (the lists and the dict of leases); the
        leases themselves are frozen, and the event dicts, `pending` and `record` are only ever replaced."""
        made = Task.__new__(Task)
        made.__dict__.update(self.__dict__)
        made.leases, made.conflicts, made.withdrawn = dict(self.leases), list(self.conflicts), list(self.withdrawn)
        return made

    def to_json(self) -> dict[str, Any]:
        return {
            "archived": self.archived,
            "blocked_by": list(self.blocked_by),
            "conflicts": [c.to_json() for c in self.conflicts],
            "created_at": self.created_at,
            "created_by": self.created_by,
            "definition_of_done": self.definition_of_done,
            "depends_on": list(self.depends_on),
            "detail": self.detail,
            "fence": self.fence,
            "id": self.id,
            "lane": self.lane,
            "lapsed_lease": self.lapsed_lease.to_json() if self.lapsed_lease else None,
            "lease": self.lease.to_json() if self.lease else None,
            "order": self.order,
            "pending": self.pending,
            "record": self.record,
            "room": self.room,
            "status": self.status,
            "title": self.title,
            "updated_at": self.updated_at,
            **({"withdrawn": self.withdrawn} if self.withdrawn else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Task:
        lease, lapsed = data.get("lease"), data.get("lapsed_lease")
        return cls(
            id=data["id"],
            room=data.get("room", ""),
            lane=data.get("lane", ""),
            title=data.get("title", ""),
            definition_of_done=data.get("definition_of_done", ""),
            detail=data.get("detail", ""),
            order=data.get("order", 0),
            status=data.get("status", "todo"),
            lease=Lease.from_json(lease) if lease else None,
            lapsed_lease=Lease.from_json(lapsed) if lapsed else None,
            fence=data.get("fence", 0),
            pending=data.get("pending"),
            record=data.get("record"),
            archived=data.get("archived", False),
            created_at=data.get("created_at", ""),
            created_by=data.get("created_by", ""),
            updated_at=data.get("updated_at", ""),
            conflicts=[BoardConflict.from_json(c) for c in data["conflicts"]] if data.get("conflicts") else [],
            withdrawn=list(data.get("withdrawn") or []),
            depends_on=list(data.get("depends_on") or []),
            blocked_by=list(data.get("blocked_by") or []),
        )
