"""The Python workflow API (re-exported by `rooms_cli`): the `rooms group` commands as coroutines.

    import asyncio, rooms_cli

    async def audit():
        await rooms_cli.spawn_group("rev", ["reviewer", "architect", "ops"])
        await rooms_cli.broadcast("rev", objective="audit branch feat/x", output_format="bullets",
                                  tool_guidance="read only", boundaries="no patches")
        return (await rooms_cli.wait_all("rev", reducer="join_by_handle")).reduced

    async def quick():
        async with rooms_cli.ephemeral_group(profiles=["analyst", "analyst", "wildcard"]) as g:
            await g.broadcast(objective="ship on Friday? YES or NO", output_format="YES | NO",
                              tool_guidance="", boundaries="one word")
            return (await g.wait_all(reducer="majority_vote")).reduced

Every function takes `project=` (a Project or a path); by default the project is found like the
CLI finds it (ROOMS_DIR, else the nearest `.rooms/` upwards).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from pathlib import Path

from rooms_cli.groups import broadcasts, gather, roster
from rooms_cli.groups.model import GroupResult
from rooms_cli.groups.reducers import Reduction, register_reducer
from rooms_cli.project.config import Config, load_config
from rooms_cli.store.ids import new_id
from rooms_cli.store.paths import Project, open_project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "GroupResult", "Reduction", "broadcast", "dissolve", "drain", "ephemeral_group", "register_reducer",
    "spawn_group", "wait_all", "wait_any",
]


def _open(project: Project | str | os.PathLike[str] | None) -> tuple[Project, Config]:
    if not isinstance(project, Project):
        project = open_project(Path(project) if project is not None else None)
    return project, load_config(project)


async def spawn_group(name: str, profiles: list[str], *, handles: list[str | None] | None = None,
                      project: Project | str | None = None) -> list[str]:
    """Add one member per profile to group `name` (created if new); return their handles."""
    proj, _ = _open(project)
    return [m.handle for m in roster.spawn(proj, name, list(profiles), handles)]


async def broadcast(name: str, *, objective: str, output_format: str, tool_guidance: str, boundaries: str,
                    sender: str | None = None, project: Project | str | None = None) -> str:
    """Send the four-field broadcast to every member; return its id. One may be in flight at a time."""
    from rooms_cli.project.config import identity

    proj, config = _open(project)
    fields = {"objective": objective, "output_format": output_format, "tool_guidance": tool_guidance, "boundaries": boundaries}
    return broadcasts.send_broadcast(proj, config, name, fields, sender or identity(None, config)).id


async def wait_all(name: str, *, timeout: float | None = None, reducer: str | None = None,
                   project: Project | str | None = None) -> GroupResult:
    """Every member's reply (or what arrived by `timeout`: `result.timed_out`), reduced."""
    proj, config = _open(project)
    return await gather.gather(proj, config, name, timeout=timeout, reducer=reducer)


async def wait_any(name: str, *, timeout: float | None = None, reducer: str | None = None, cancel_losers: bool = True,
                   project: Project | str | None = None) -> GroupResult:
    """The first reply; losers are cancelled at once (or, with cancel_losers=False, left to finish and dropped)."""
    proj, config = _open(project)
    return await gather.gather(proj, config, name, any_=True, timeout=timeout, reducer=reducer, cancel_losers=cancel_losers)


async def dissolve(name: str, *, project: Project | str | None = None) -> None:
    """Drop group `name` (its broadcast in flight is cancelled); its log is deleted."""
    proj, config = _open(project)
    roster.dissolve(proj, config, name, by="api")


async def drain() -> None:
    """Wait for the losers a `wait_any(cancel_losers=False)` left running (their replies are dropped)."""
    await gather.drain()


class EphemeralGroup:
    """A group that exists for one `async with` block."""

    def __init__(self, name: str, handles: list[str], project: Project):
        self.name, self.handles, self.project = name, handles, project

    async def broadcast(self, *, objective: str, output_format: str, tool_guidance: str, boundaries: str) -> str:
        return await broadcast(self.name, objective=objective, output_format=output_format, tool_guidance=tool_guidance,
                               boundaries=boundaries, project=self.project)

    async def wait_all(self, *, timeout: float | None = None, reducer: str | None = None) -> GroupResult:
        return await wait_all(self.name, timeout=timeout, reducer=reducer, project=self.project)

    async def wait_any(self, *, timeout: float | None = None, reducer: str | None = None, cancel_losers: bool = True) -> GroupResult:
        return await wait_any(self.name, timeout=timeout, reducer=reducer, cancel_losers=cancel_losers, project=self.project)


@asynccontextmanager
async def ephemeral_group(profiles: list[str], *, project: Project | str | None = None) -> AsyncIterator[EphemeralGroup]:
    """Spawn a group with a random name; dissolve it on exit, on success or error. No file stays behind."""
    proj, config = _open(project)
    name = "eph-" + new_id("g")[2:].lower()
    members = roster.spawn(proj, name, list(profiles), ephemeral=True)
    try:
        yield EphemeralGroup(name, [m.handle for m in members], proj)
    finally:
        await gather.drain()
        roster.dissolve(proj, config, name, by="ephemeral_group")


async def ask(profiles: list[str], fields: dict[str, Any], *, any_: bool = False, reducer: str | None = None,
              timeout: float | None = None, project: Project | str | None = None,
              watch: Callable[[Project, str], AbstractContextManager[Any]] | None = None) -> tuple[str, GroupResult]:
    """`rooms group ask`: spawn an ephemeral group, broadcast, wait, dissolve. -> (its name, result).

    `watch(project, name)`, when given, is entered around the wait (the CLI's live status line).
    """
    async with ephemeral_group(profiles, project=project) as g:
        await g.broadcast(**broadcasts.check_fields(fields))
        with watch(g.project, g.name) if watch else nullcontext():
            if any_:
                return g.name, await g.wait_any(timeout=timeout, reducer=reducer)
            return g.name, await g.wait_all(timeout=timeout, reducer=reducer)
