"""Setting up a project: `rooms init`, example agent sets, the packaged config example."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from rooms_cli.core.errors import InvalidInput
from rooms_cli.store import atomic, files, layout
from rooms_cli.store.names import ROOMS
from rooms_cli.store.paths import CONFIG, Project, enclosing_project, init_project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any


def example_sets() -> dict[str, list[str]]:
    """Example agent sets shipped with rooms: name -> agent ids."""
    return {name: [p[:-3] for p in files.package_names("data", "agents", name) if p.endswith(".md")]
            for name in files.package_names("data", "agents", folders=True)}


# Who opens the `leader` formats (standup, strategy, retro…) in each example set.
EXAMPLE_LEADERS = {"roundtable": "boss", "gamedev": "designer", "dev": "architect"}


def config_example_text(example: str | None = None) -> str:
    """The packaged .rooms.yaml example; with an example set, its `leader:` line is switched on."""
    text = files.package_text("data", "rooms.yaml.example")
    leader = EXAMPLE_LEADERS.get(example or "")
    return text.replace("# leader: boss\n", f"leader: {leader}\n", 1) if leader else text


@dataclass
class InitResult:
    """What `rooms init` did: the root, what it created, kept and skipped, any project it lies inside."""

    root: str
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # what a fresh init would have made, left alone on purpose
    nested_in: str | None = None  # the project this new one lies inside
    agents: int = 0  # agents the project has after init (chatting needs one)

    @property
    def changed(self) -> bool:
        return bool(self.created)

    def to_json(self) -> dict[str, Any]:
        return {"root": self.root, "created": self.created, "kept": self.kept, "skipped": self.skipped,
                "changed": self.changed, "nested_in": self.nested_in, "agents": self.agents}


def initialize(target: Path, example: str | None = None) -> InitResult:
    """Create .rooms/, .rooms.yaml, the default room and (optionally) an example agent set.

    Idempotent: a second run changes nothing that exists and reports what it kept and skipped. An
    example set added before is not added again: its agents that were removed since stay removed,
    and agents kicked from the default room stay out of it.
    A new project inside another one's directory is made, and reported in `nested_in`.
    """
    sets = example_sets()
    if example is not None and example not in sets:
        raise InvalidInput(f"no example set {example!r}; available: {', '.join(sorted(sets))}")
    fresh = not (Path(target).absolute() / ROOMS).is_dir() and Path(target).absolute().name != ROOMS
    outer = enclosing_project(target) if fresh else None
    project, created = init_project(target)
    result = InitResult(root=str(project.root), created=created, nested_in=str(outer.root) if outer else None)
    cfg = Path(project.root) / CONFIG
    if cfg.exists():
        result.kept.append(CONFIG)
    else:
        atomic.write_text(cfg, config_example_text(example))
        result.created.append(CONFIG)
    if example:
        _add_example(project, example, sets[example], result)
    ensure_default_room(project, result)
    from rooms_cli.agents.definitions import agent_ids

    result.agents = len(agent_ids(project))
    return result


def _add_example(project: Project, example: str, agent_ids: list[str], result: InitResult) -> None:
    """Write the set's agent files that are missing, unless the set was added before."""
    present = [a for a in agent_ids if os.path.exists(layout.agent_file(project, a))]
    for agent_id in agent_ids:
        dest = layout.agent_file(project, agent_id)
        rel = project.relative(dest)
        if agent_id in present:
            result.kept.append(rel)
        elif present:
            result.skipped.append(f"{rel} (the {example} set was added before; {agent_id} was removed since)")
        else:
            atomic.write_text(dest, files.package_text("data", "agents", example, f"{agent_id}.md"))
            result.created.append(rel)


def ensure_default_room(project: Project, result: InitResult) -> None:
    """Create the default room, or seat in it the agents defined since, except those kicked from it."""
    from rooms_cli.chat.rooms import admit_new_agents, create_room, load_room, room_exists
    from rooms_cli.project.context import DEFAULT_ROOM

    if not room_exists(project, DEFAULT_ROOM):
        create_room(project, DEFAULT_ROOM)
        result.created.append(f".rooms/rooms/{DEFAULT_ROOM}/")
        return
    new = admit_new_agents(project, DEFAULT_ROOM)
    kicked = load_room(project, DEFAULT_ROOM).kicked
    if kicked:
        result.skipped.append(f"{DEFAULT_ROOM} room roster: {', '.join(kicked)} stay out (kicked; "
                              "`rooms room invite NAME` brings one back)")
    if new:
        result.created.append(f"default room roster += {', '.join(new)}")
