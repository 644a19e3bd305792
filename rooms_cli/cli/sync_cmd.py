"""`rooms sync`: carry .rooms/ both ways through a git remote, on refs/rooms/state (docs/git.md).

Declared in operations/hot.py (cron and `--sync` loops run it on every tick: the fast path reads it)."""

from __future__ import annotations

from rooms_cli.cli.shared import declared_command
from rooms_cli.operations import hot as operations

sync_cmd = declared_command(operations.sync)
