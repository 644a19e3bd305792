"""What `.rooms.yaml` says about sync: `sync: {remote: origin, claims: false, warn_after: 1d}`.

- `remote`: the git remote `rooms sync` (and `--sync` on task commands) uses; default `origin`.
- `claims`: when true, `task next|claim|renew|release|done` (and the MCP tools) act as if given `--sync`.
- `warn_after`: `rooms doctor` warns when local changes have waited longer than this for a sync.
- `tick`: when true (the default once a `sync:` section exists), `rooms tick` syncs.
"""

from __future__ import annotations

import os
import re

from rooms_cli.core.errors import InvalidData, InvalidInput
from rooms_cli.core.records import dataclass  # dataclasses without inspect (records.py)

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable

    from rooms_cli.project.config import Config

DEFAULT_REMOTE = "origin"
KEYS = ("remote", "claims", "tick", "warn_after")
_SECTION = re.compile(rb"(?m)^sync\s*:")


@dataclass
class SyncSettings:
    """The `sync:` section of .rooms.yaml, with defaults."""

    configured: bool = False
    remote: str = DEFAULT_REMOTE
    claims: bool = False
    tick: bool = False
    warn_after: float = 86400.0


def sync_settings(config: Config | None) -> SyncSettings:
    """The `sync:` section of `config` (a Config), checked; absent: defaults, not configured."""
    from rooms_cli.store.clock import parse_duration

    section = config.get("sync") if config is not None else None
    if section is None:
        return SyncSettings()
    if not isinstance(section, dict):
        raise InvalidData(".rooms.yaml: sync must be a mapping such as {remote: origin, claims: true}")
    unknown = sorted(str(key) for key in section if key not in KEYS)
    if unknown:
        from rooms_cli.core import terminal

        terminal.warn(f".rooms.yaml: unknown key {'sync.' + unknown[0]!r} ignored (sync takes {', '.join(KEYS)})")
    remote = section.get("remote", DEFAULT_REMOTE)
    if not isinstance(remote, str) or not remote.strip():
        raise InvalidData(".rooms.yaml: sync.remote must be the name of a git remote, such as origin")
    flags = {}
    for key, default in (("claims", False), ("tick", True)):
        value = section.get(key, default)
        if not isinstance(value, bool):
            raise InvalidData(f".rooms.yaml: sync.{key} must be true or false, not {value!r}")
        flags[key] = value
    try:
        warn_after = parse_duration(section.get("warn_after", "1d"))
    except InvalidInput as exc:  # the parser's sentence, reworded for the file
        raise InvalidData(f".rooms.yaml: sync.warn_after: {exc}") from None
    return SyncSettings(configured=True, remote=remote.strip(), claims=flags["claims"], tick=flags["tick"],
                        warn_after=warn_after)


def for_task_commands(run_config: Callable[[], Config], project_root: str, sync_flag: bool, remote: str | None) -> tuple[bool, str | None]:
    """Whether a task command syncs, and with which remote: `--sync`, else `sync: {claims: true}`.

    `.rooms.yaml` is parsed only when it mentions sync (the claim fast path imports no YAML otherwise);
    `run_config` is a callable returning the Config."""
    if not sync_flag and remote is None:
        from rooms_cli.store import files

        try:
            text = files.read_bytes(os.path.join(project_root, ".rooms.yaml"))
        except OSError:
            return False, None
        if not _SECTION.search(text):
            return False, None
    settings = sync_settings(run_config())
    return (sync_flag or settings.claims), remote or settings.remote
