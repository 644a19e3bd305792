"""Sync's checks for `rooms doctor`: local changes never synced for too long, a remote out of reach, and
`refs/rooms/state` naming something that is not a commit (a hand `git update-ref`, a hostile push)."""

from __future__ import annotations

from rooms_cli.core.findings import Finding
from rooms_cli.store.sync.settings import sync_settings

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from rooms_cli.project.config import Config
    from rooms_cli.store.paths import Project



def check(project: Project, config: Config) -> list[Finding]:
    findings = _state_ref(project)
    settings = sync_settings(config)
    if not settings.configured:
        return findings
    from rooms_cli.store.sync import engine as gitsync

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


def _state_ref(project: Project) -> list[Finding]:
    """An error when `refs/rooms/state` exists and names anything but a commit: every `rooms sync` of
    this clone would fail on it (none without git, or without the ref)."""
    import subprocess

    from rooms_cli.store.sync.engine import STATE_REF

    try:
        proc = subprocess.run(["git", "cat-file", "-t", STATE_REF], cwd=project.root, capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    kind = proc.stdout.decode("ascii", "replace").strip()
    if proc.returncode != 0 or kind == "commit":
        return []
    return [Finding("error", "sync", f"{STATE_REF} names a {kind}, not a commit of .rooms/ state: rooms sync cannot build on it",
                    f"git update-ref -d {STATE_REF}   (the next rooms sync rebuilds it from .rooms/ and the remote)", STATE_REF)]
