"""Sync's checks for `rooms doctor`: local changes never synced for too long, a remote out of reach."""

from __future__ import annotations

from rooms_cli.core.findings import Finding
from rooms_cli.store.sync.settings import sync_settings


def check(project, config) -> list[Finding]:
    settings = sync_settings(config)
    if not settings.configured:
        return []
    from rooms_cli.store.sync import engine as gitsync

    findings = []
    reach = gitsync.reachable(project, settings.remote)
    if reach is not None:
        findings.append(Finding("warning", "sync", reach, f"check the remote (git remote -v), then rooms sync --remote {settings.remote}"))
    waiting = gitsync.unsynced_age(project, settings.remote)
    if waiting is not None and waiting > settings.warn_after:
        from rooms_cli.store.clock import describe_duration

        last = gitsync.last_synced(project, settings.remote)
        since = f"last synced at {last['at']}" if last else "never synced"
        findings.append(Finding("warning", "sync",
                                f"local changes under .rooms/ have waited {describe_duration(waiting)} for a sync with "
                                f"{settings.remote} ({since}; sync.warn_after is {describe_duration(settings.warn_after)})",
                                f"rooms sync --remote {settings.remote}   (or add sync to cron: rooms tick)"))
    return findings
