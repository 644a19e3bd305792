"""`rooms sync` with everything the parts add: the board's gate for `--sync` writes, the readers'
checks for whole files (docs/git.md). Every sync of a clone runs through here — the command, the MCP
tool, `rooms tick`, the `--sync` task commands — so a marked claim is checked before any of them
pushes it."""

from __future__ import annotations

from rooms_cli.store import gitsync
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def sync(project: Project, remote: str | None = None) -> gitsync.SyncResult:
    """Merge `.rooms/` with `remote` both ways (store/gitsync.sync) with the parts' hooks."""
    return gitsync.sync(project, remote, hooks=gitsync.Hooks(gate=_gate, check_file=_check_file))


def _gate(rel: str, outgoing: list[bytes], on_remote: Callable[[], list[bytes]]) -> list[dict[str, Any]]:
    if not rel.startswith("rooms/") or b'"sync": true' not in b"".join(outgoing):
        return []  # no `--sync` write in it: the board is not even imported
    from rooms_cli.sync.gate import gate

    return gate(rel, outgoing, on_remote)


def _check_file(rel: str, data: bytes) -> str | None:
    from rooms_cli.sync.checks import check_file

    return check_file(rel, data)
