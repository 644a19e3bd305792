"""The board's typed errors. Every conflict exits 3 and names who holds the task and until when."""

from __future__ import annotations

from rooms_cli.core.errors import Conflict, InvalidInput, RoomsError


class AlreadyClaimed(Conflict):
    """The task is held under a live lease by someone else."""

    code = "already_claimed"


class LeaseMismatch(Conflict):
    """The lease id presented is not the task's current lease."""

    code = "lease_mismatch"


class LeaseExpired(Conflict):
    """The lease presented was the current one but has lapsed (or was recorded as expired)."""

    code = "lease_expired"


class LeaseFenced(Conflict):
    """The lease presented is older than the task's newest claim: its holder was overtaken."""

    code = "lease_fenced"


class InvalidTransition(Conflict):
    """The status change is not one of those allowed from the task's current status."""

    code = "invalid_transition"


class NotOwner(RoomsError):
    """Only the owner of the target lane may accept or reject a proposal."""

    code = "not_owner"


class Blocked(Conflict):
    """The task waits on tasks that are not done yet (its `blocked_by`): it cannot be claimed until they are."""

    code = "blocked"


class DependencyCycle(InvalidInput):
    """The dependencies asked for would make a task wait, through others or directly, on itself."""

    code = "dependency_cycle"
