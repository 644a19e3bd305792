"""Who acts, where, in which project: resolved once per command from flags and the environment."""

from __future__ import annotations

import os
from functools import cached_property

from rooms_cli.core.records import dataclass  # dataclasses without inspect (records.py)
from rooms_cli.project.config import Config, identity, load_config
from rooms_cli.store import layout
from rooms_cli.store.ids import validate_name
from rooms_cli.store.paths import Project, open_project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from pathlib import Path

DEFAULT_ROOM = "default"


@dataclass
class Context:
    """One command's project, with its identity, room and config resolved on first use."""

    project: Project
    as_: str | None = None
    room_: str | None = None

    @classmethod
    def open(cls, dir: str | None = None, as_: str | None = None, room: str | None = None) -> Context:
        return cls(project=open_project(dir), as_=as_, room_=room)

    @cached_property
    def config(self) -> Config:
        return load_config(self.project)

    @cached_property
    def me(self) -> str:
        """The acting identity: --as, ROOMS_AGENT, user: in .rooms.yaml, $USER."""
        return identity(self.as_, lambda: self.config)

    @cached_property
    def room(self) -> str:
        """The current room: --room, ROOMS_ROOM, `rooms room use`, else `default`."""
        if self.room_ is not None:  # an explicit empty --room is an error, not "unset"
            return validate_name(self.room_, "room id")
        env = os.environ.get("ROOMS_ROOM")
        if env:
            return validate_name(env, "room id (ROOMS_ROOM)")
        current = read_current_room(self.project)
        return current or DEFAULT_ROOM


def current_room_path(project: Project) -> Path:
    # run/ is local state, kept out of git by .rooms/.gitignore
    return layout.current_room_file(project)


def read_current_room(project: Project) -> str | None:
    from rooms_cli.store import files

    value = files.read_line(current_room_path(project))
    return value if value and validate_name(value, "current room") else None


def write_current_room(project: Project, room: str) -> None:
    from rooms_cli.store import atomic

    atomic.write_text(current_room_path(project), validate_name(room, "room id") + "\n")
