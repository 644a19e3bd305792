"""Setting up a project: `rooms init`, example agent sets, the packaged config example."""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from rooms_cli.errors import InvalidInput
from rooms_cli.store import atomic, layout
from rooms_cli.store.paths import CONFIG, Project, init_project


def example_sets() -> dict[str, list[str]]:
    """Example agent sets shipped with rooms: name -> agent ids."""
    base = resources.files("rooms_cli") / "data" / "agents"
    return {d.name: sorted(p.name[:-3] for p in d.iterdir() if p.name.endswith(".md")) for d in base.iterdir() if d.is_dir()}


def config_example_text() -> str:
    return (resources.files("rooms_cli") / "data" / "rooms.yaml.example").read_text("utf-8")


@dataclass
class InitResult:
    root: str
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.created)

    def to_json(self) -> dict:
        return {"root": self.root, "created": self.created, "kept": self.kept, "changed": self.changed}


def initialize(target: Path, example: str | None = None) -> InitResult:
    """Create .rooms/, .rooms.yaml, the default room and (optionally) an example agent set.

    Idempotent: what exists is kept untouched and reported as kept.
    """
    sets = example_sets()
    if example is not None and example not in sets:
        raise InvalidInput(f"no example set {example!r}; available: {', '.join(sorted(sets))}")
    project, created = init_project(target)
    result = InitResult(root=str(project.root), created=created)
    cfg = project.root / CONFIG
    if cfg.exists():
        result.kept.append(CONFIG)
    else:
        atomic.write_text(cfg, config_example_text())
        result.created.append(CONFIG)
    if example:
        base = resources.files("rooms_cli") / "data" / "agents" / example
        for agent_id in sets[example]:
            dest = layout.agent_file(project, agent_id)
            rel = project.relative(dest)
            if dest.exists():
                result.kept.append(rel)
            else:
                atomic.write_text(dest, (base / f"{agent_id}.md").read_text("utf-8"))
                result.created.append(rel)
    ensure_default_room(project, result)
    return result


def ensure_default_room(project: Project, result: InitResult) -> None:
    from rooms_cli.chat.rooms import admit_new_agents, create_room, room_exists
    from rooms_cli.context import DEFAULT_ROOM

    if not room_exists(project, DEFAULT_ROOM):
        create_room(project, DEFAULT_ROOM)
        result.created.append(f".rooms/rooms/{DEFAULT_ROOM}/")
        return
    # agents added by a later `init --example` join the default room too (unless kicked from it)
    new = admit_new_agents(project, DEFAULT_ROOM)
    if new:
        result.created.append(f"default room roster += {', '.join(new)}")


def _roster(project: Project) -> list[str]:
    from rooms_cli.chat.rooms import load_room
    from rooms_cli.context import DEFAULT_ROOM

    return load_room(project, DEFAULT_ROOM).roster
