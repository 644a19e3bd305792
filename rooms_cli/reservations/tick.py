"""The reservations' step of `rooms tick`: record every lapsed reservation as an explicit expire event."""

from __future__ import annotations

from rooms_cli.reservations.ledger import record_expiries

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project


def expire_reservations(project: Project, config: Config, dry_run: bool) -> list[dict[str, Any]]:
    """Append `expire` for each reservation that lapsed unrecorded; one action per reservation."""
    return [{"action": "expire", "detail": f"reservation {r.id} of {r.agent} ({' '.join(r.patterns)}) lapsed at {r.expires_at}",
             "reservation_id": r.id, "agent": r.agent, "expired_at": r.expires_at}
            for r in record_expiries(project, dry_run=dry_run)]
