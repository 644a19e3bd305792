"""The sync step of `rooms tick`: when `.rooms.yaml` has a `sync:` section, cron keeps the clone in sync."""

from __future__ import annotations

from rooms_cli.core.text import count
from rooms_cli.store.sync.settings import sync_settings

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project
    from rooms_cli.store.sync.engine import Hooks


def sync_step(project: Project, config: Config, dry_run: bool, *, hooks: Hooks) -> list[dict[str, Any]]:
    """Sync with the configured remote (nothing when sync is not configured, or `sync: {tick: false}`),
    with every part's `hooks` (the registry passes them: rooms_cli/across/sync.py)."""
    settings = sync_settings(config)
    if not settings.configured or not settings.tick:
        return []
    if dry_run:
        return [{"action": "sync", "detail": f"would sync .rooms/ with {settings.remote}", "remote": settings.remote}]
    from rooms_cli.store.sync.engine import sync

    result = sync(project, settings.remote, hooks=hooks)
    detail = (f"synced with {settings.remote}: {count(result.received, 'line')} in, {result.sent} out"
              + (f", {count(len(result.conflicts), 'file conflict')} (kept under .rooms/run/sync/conflicts)" if result.conflicts else ""))
    return [{"action": "sync", "detail": detail, **result.to_json()}]
