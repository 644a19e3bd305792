"""`rooms watch`: follow rooms, boards, groups, inboxes and spawns as they happen.

Declared in operations/watch.py (its start-up is on the fast path: scripts start it and wait)."""

from __future__ import annotations

from rooms_cli.cli.dispatch import declared_command
from rooms_cli.operations import watch as ops

watch_cmd = declared_command(ops.watch)
