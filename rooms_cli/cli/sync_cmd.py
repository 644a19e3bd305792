"""`rooms sync`: carry .rooms/ both ways through a git remote, on refs/rooms/state (docs/git.md).

Declared in operations/sync.py (cron and `--sync` loops run it on every tick: the fast path reads it)."""

from __future__ import annotations

from rooms_cli.cli.dispatch import declared_command
from rooms_cli.operations import sync as ops

sync_cmd = declared_command(ops.sync)
